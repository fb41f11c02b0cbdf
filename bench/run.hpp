#pragma once
// A bench run on disk, runs/<id>/ (docs/bench.md):
//   bench.json     what is measured: the tasks, their buckets, the kernels, the options
//   results.jsonl  one record per finished shape, appended and fsync'd (bench/record.hpp)
//   shapes.csv, buckets.csv, summary.json, report.html, report.md: derived, rewritable
// A sweep that stops (Ctrl-C, a time limit, a killed process) is continued by
// running it again on the same folder: finished shapes are skipped.
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/buckets.hpp"
#include "bench/record.hpp"
#include "core/file_lock.hpp"
#include "core/task.hpp"

namespace tessera::bench {

inline constexpr const char* kRunSchema = "tessera.bench_run/1";
inline constexpr const char* kConfigFile = "bench.json";
inline constexpr const char* kResultsFile = "results.jsonl";

struct RunConfig {
  std::string tasks_file;   // as given; the tasks themselves are below
  std::string task_set;     // the task file's "name", or its file name
  std::vector<Task> tasks;
  std::vector<Bucket> buckets;
  std::string kernels = "none";  // the kernel source (bench/kernels.hpp)
  // What changes a measurement: build options, hot timing, counters, limits.
  // A run is continued only with the same values.
  nlohmann::json options = nlohmann::json::object();
  std::string created_at;
};

nlohmann::json to_json(const RunConfig& c);
RunConfig config_from_json(const nlohmann::json& j, const std::string& where);

// Empty when `next` may continue a run started with `prev`, else what differs.
std::string config_difference(const RunConfig& prev, const RunConfig& next);

// A run folder opened for writing: holds an exclusive lock (a second sweep on
// the same folder is refused), creates or checks bench.json, and repairs a
// results file whose last line was cut by a crash.
class RunWriter {
public:
  RunWriter(const std::filesystem::path& dir, const RunConfig& config);
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  // Task ids already in results.jsonl.
  const std::set<std::string>& finished() const { return finished_; }
  bool resumed() const { return resumed_; }
  // What the repair did ("" when nothing was needed), for the user.
  const std::string& repair_note() const { return repair_note_; }
  // Appends and fsyncs one record; the shape then counts as finished.
  void append(const ShapeRecord& record);
  // Shapes whose latest kernel result has one of these statuses (e.g.
  // "timeout") count as not finished, so the sweep measures them again; the
  // new record is appended after the old one, which load_run then ignores.
  // Returns the task ids reopened.
  std::vector<std::string> reopen(const std::set<std::string>& statuses);

private:
  std::filesystem::path dir_;
  // The folder's lock, held for the writer's life; a member, so that a
  // constructor that throws after taking it lets it go.
  std::optional<FileLock> lock_;
  std::set<std::string> finished_;
  std::map<std::string, std::string> kernel_status_;  // task id -> its latest record's kernel status
  bool resumed_ = false;
  std::string repair_note_;
};

struct Run {
  std::filesystem::path dir;
  RunConfig config;
  std::vector<ShapeRecord> records;  // file order; the last record of a task wins
};

// Reads a run folder (read-only); bad_input when it is not a bench run.
Run load_run(const std::filesystem::path& dir);

// Whether a RunWriter (of this process or another) holds the folder now.
bool run_is_being_written(const std::filesystem::path& dir);

}  // namespace tessera::bench
