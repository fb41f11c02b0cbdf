#pragma once
// The learned cost model's training data: every verified, timed tile config
// tessera measured, read from run folders (tile/learned_model.hpp). A bench
// run (results.jsonl: each tile:N or search:N shape keeps its whole sweep), a
// search run (trajectories.jsonl: every step's config and result), a folder
// holding such runs (read recursively), or a rows file (*.jsonl, one
// tile::Measurement per line: what `tessera tile model rows` writes, so that
// a model's training rows outlive the run folders). Repeated measurements of
// one config on one shape and device kind become their median.
#include <filesystem>
#include <string>
#include <vector>

#include "tile/learned_model.hpp"

namespace tessera::bench {

struct ModelData {
  std::vector<tile::Measurement> rows;
  int runs = 0;     // run folders and rows files read
  int skipped = 0;  // records without a tile config or a time, malformed sweeps, configs now illegal
};

// bad_input when a path is neither a run folder, nor holds one, nor is a rows
// file; or when a line of a rows file is not a measurement (its number said).
ModelData read_model_data(const std::vector<std::filesystem::path>& paths);

// What read_model_data takes for a rows file: its extension.
inline constexpr const char* kRowsExtension = ".jsonl";

// bad_input unless `file` (given with `option`) is named as a rows file, so
// that train and eval will read what is written there.
void check_rows_file_name(const std::filesystem::path& file, const std::string& option);

// Writes `rows` to `file`, a JSON line each (atomically).
void write_rows(const std::filesystem::path& file, const std::vector<tile::Measurement>& rows);

// The rows of one device kind (all of them for tile::kEveryKind).
std::vector<tile::Measurement> of_kind(const std::vector<tile::Measurement>& rows, const std::string& kind);

}  // namespace tessera::bench
