#include "bench/run.hpp"

#include <map>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/fs.hpp"

namespace tessera::bench {

namespace fs = std::filesystem;

namespace {

constexpr const char* kLockFile = ".lock";

bool same_buckets(const std::vector<Bucket>& a, const std::vector<Bucket>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].max_flops != b[i].max_flops) return false;
  return true;
}

// Lines of results.jsonl that parse; a cut last line (no newline) is dropped
// from the file, so the next append starts on a line of its own.
std::vector<nlohmann::json> read_lines(const fs::path& path, bool repair, std::string* note) {
  std::vector<nlohmann::json> out;
  std::error_code ec;
  if (!fs::exists(path, ec)) return out;
  std::string text = read_file(path);
  if (!text.empty() && text.back() != '\n') {
    const auto keep = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
    if (note) *note = fmt::format("dropped a cut last line of {} ({} bytes, an interrupted write)", path.string(),
                                  text.size() - keep);
    text.resize(keep);
    if (repair) fs::resize_file(path, keep);
  }
  std::istringstream in(text);
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) fail_bad_input(fmt::format("{}:{}: not valid JSON", path.string(), line_no));
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

nlohmann::json to_json(const RunConfig& c) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& t : c.tasks) tasks.push_back(tessera::to_json(t));
  return {{"schema", kRunSchema}, {"tasks_file", c.tasks_file}, {"task_set", c.task_set}, {"tasks", tasks},
          {"buckets", to_json(c.buckets)}, {"kernels", c.kernels}, {"options", c.options},
          {"created_at", c.created_at}};
}

RunConfig config_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || j.value("schema", "") != kRunSchema) fail_bad_input(where + ": not a tessera bench run");
  RunConfig c;
  try {
    c.tasks_file = j.value("tasks_file", "");
    c.task_set = j.value("task_set", "");
    for (const auto& t : j.at("tasks")) c.tasks.push_back(parse_task(t));
    c.buckets = parse_buckets(j.at("buckets"), where);
    c.kernels = j.value("kernels", "none");
    c.options = j.value("options", nlohmann::json::object());
    c.created_at = j.value("created_at", "");
  } catch (const nlohmann::json::exception& e) {
    fail_bad_input(fmt::format("{}: malformed: {}", where, e.what()));
  }
  return c;
}

std::string config_difference(const RunConfig& prev, const RunConfig& next) {
  std::vector<std::string> ids_prev, ids_next;
  for (const auto& t : prev.tasks) ids_prev.push_back(t.id());
  for (const auto& t : next.tasks) ids_next.push_back(t.id());
  if (ids_prev != ids_next)
    return fmt::format("its tasks differ ({} tasks from {}, now {} from {})", ids_prev.size(), prev.tasks_file,
                       ids_next.size(), next.tasks_file);
  if (!same_buckets(prev.buckets, next.buckets)) return "its buckets differ";
  if (prev.kernels != next.kernels) return fmt::format("it measures kernels '{}', not '{}'", prev.kernels, next.kernels);
  if (prev.options != next.options)
    return fmt::format("its options differ (was {}, now {})", prev.options.dump(), next.options.dump());
  return {};
}

RunWriter::RunWriter(const fs::path& dir, const RunConfig& config) : dir_(dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) fail_bad_input(dir.string() + " exists and is not a folder");
  fs::create_directories(dir, ec);
  if (ec) fail_bad_input(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  try {
    lock_.emplace(dir / kLockFile);
  } catch (const Error& e) {
    fail_bad_input(fmt::format("cannot write in {}: {}", dir.string(), e.what()));
  }
  if (!lock_->try_lock())
    fail_bad_input(fmt::format("another tessera bench suite is writing {}: wait for it, or use another --out",
                               dir.string()));
  const fs::path cfg = dir / kConfigFile;
  if (fs::exists(cfg, ec)) {
    const auto j = nlohmann::json::parse(read_file(cfg), nullptr, false);
    if (j.is_discarded()) fail_bad_input(cfg.string() + ": not valid JSON");
    const RunConfig prev = config_from_json(j, cfg.string());
    if (auto why = config_difference(prev, config); !why.empty())
      fail_bad_input(fmt::format("{} holds a bench run that cannot be continued with these arguments: {}; use "
                                 "another --out, or the run's own arguments (--resume {})",
                                 dir.string(), why, dir.string()));
    resumed_ = true;
  } else {
    if (fs::exists(dir / kResultsFile, ec))
      fail_bad_input(fmt::format("{} has {} but no {}: not a bench run folder", dir.string(), kResultsFile, kConfigFile));
    atomic_write_file(cfg, to_json(config).dump(1) + "\n");
  }
  for (const auto& j : read_lines(dir / kResultsFile, true, &repair_note_)) {
    const ShapeRecord r = record_from_json(j);
    finished_.insert(r.task.id());
    if (r.kernel) kernel_status_[r.task.id()] = to_string(r.kernel->result.status);
    else kernel_status_.erase(r.task.id());
  }
}

std::vector<std::string> RunWriter::reopen(const std::set<std::string>& statuses) {
  std::vector<std::string> ids;
  for (const auto& [id, status] : kernel_status_)
    if (statuses.count(status) && finished_.erase(id)) ids.push_back(id);
  return ids;
}

bool run_is_being_written(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir / kLockFile, ec)) return false;  // never written
  FileLock probe(dir / kLockFile);  // let go when it goes out of scope
  return !probe.try_lock();
}


void RunWriter::append(const ShapeRecord& record) {
  append_line_durable(dir_ / kResultsFile, to_json(record).dump());
  finished_.insert(record.task.id());
  if (record.kernel) kernel_status_[record.task.id()] = to_string(record.kernel->result.status);
  else kernel_status_.erase(record.task.id());
}

Run load_run(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail_bad_input(fmt::format("no such run folder: {}", dir.string()));
  const fs::path cfg = dir / kConfigFile;
  if (!fs::exists(cfg, ec))
    fail_bad_input(fmt::format("{} is not a bench run (no {}; bench suite writes it)", dir.string(), kConfigFile));
  const auto j = nlohmann::json::parse(read_file(cfg), nullptr, false);
  if (j.is_discarded()) fail_bad_input(cfg.string() + ": not valid JSON");
  Run run{dir, config_from_json(j, cfg.string()), {}};
  std::map<std::string, std::size_t> index;
  for (const auto& line : read_lines(dir / kResultsFile, false, nullptr)) {
    ShapeRecord r = record_from_json(line);
    const auto id = r.task.id();
    if (auto it = index.find(id); it != index.end()) run.records[it->second] = std::move(r);
    else {
      index[id] = run.records.size();
      run.records.push_back(std::move(r));
    }
  }
  return run;
}

}  // namespace tessera::bench
