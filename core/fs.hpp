#pragma once
// Small filesystem helpers with the durability the harness promises.
#include <filesystem>
#include <string>
#include <string_view>

namespace tessera {

// Reads a whole file; throws bad_input naming the path when it cannot.
std::string read_file(const std::filesystem::path& path);

// Writes to a temporary file in the same directory, fsyncs it, then renames
// it into place: readers see the old content or the new, never a torn file.
void atomic_write_file(const std::filesystem::path& path, std::string_view data);

// Appends one line and fsyncs, for logs that must survive SIGKILL.
void append_line_durable(const std::filesystem::path& path, std::string_view line);

// $TESSERA_CACHE_DIR, else $XDG_CACHE_HOME/tessera, else ~/.cache/tessera.
std::filesystem::path cache_dir();

// bad_input unless `file` (given with `option`) ends in `extension`, saying
// what the file is: an output option given a file of another kind (a run's
// rows, say) must not overwrite it.
void require_extension(const std::filesystem::path& file, std::string_view extension, std::string_view option,
                       std::string_view what);

// UTC timestamp, ISO-8601 with milliseconds.
std::string utc_now_iso();

}  // namespace tessera
