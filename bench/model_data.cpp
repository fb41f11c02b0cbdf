#include "bench/model_data.hpp"

#include <fstream>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "bench/run.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/json_read.hpp"
#include "core/stats.hpp"
#include "tile/legality.hpp"

namespace tessera::bench {

namespace fs = std::filesystem;

namespace {

struct Collector {
  // (kind, task id, config name) -> rows, merged into one at the end
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<tile::Measurement>> seen;
  int skipped = 0;

  void add(const Task& task, const DeviceSummary& device, const nlohmann::json& tile_config, double cold_us) {
    if (!(cold_us > 0) || !tile_config.is_object()) {
      ++skipped;
      return;
    }
    tile::Measurement m;
    try {
      m.config = tile::from_json(tile_config);
    } catch (const std::exception&) {
      ++skipped;
      return;
    }
    m.task = task;
    m.limits = tile::with_device(tile::Limits{}, device);
    m.device_kind = tile::device_kind(device.name);
    m.cold_us = cold_us;
    add(std::move(m));
  }
  void add(tile::Measurement m) {
    // A config the compiler does not accept (now: its rules change, or a row
    // was edited) has no meaningful features (split-K 0 predicts NaN).
    if (!tile::legality(m.config, m.task, m.limits)) {
      ++skipped;
      return;
    }
    auto key = std::tuple{m.device_kind, m.task.id(), tile::name(m.config)};
    seen[std::move(key)].push_back(std::move(m));
  }

  std::vector<tile::Measurement> merged() const {
    std::vector<tile::Measurement> out;
    for (const auto& [key, v] : seen) {
      std::vector<double> t;
      for (const auto& m : v) t.push_back(m.cold_us);
      tile::Measurement m = v.front();
      m.cold_us = stats::median(std::move(t));
      out.push_back(std::move(m));
    }
    return out;
  }
};

void add_sweep(Collector& c, const Task& task, const DeviceSummary& device, const nlohmann::json& sweep) {
  if (!sweep.is_array()) return;
  // Read leniently (core/json_read.hpp): an entry that is not an object, or
  // whose fields are of other types, has no config or time and is skipped.
  for (const auto& e : sweep)
    c.add(task, device, field_or_null(e, "tile_config"),
          string_or(e, "status", "") == "ok" ? number_or(e, "cold_us", 0.0) : 0.0);
}

void read_bench_run(Collector& c, const fs::path& dir) {
  for (const auto& r : load_run(dir).records) {
    if (!r.kernel || !r.kernel->tune.is_object()) continue;
    const auto& tune = r.kernel->tune;
    add_sweep(c, r.task, r.device, field_or_null(tune, "sweep"));  // tile:N
    for (const char* part : {"search", "tile"}) {                  // search:N
      if (!tune.contains(part)) continue;
      // The sweeps are JSON the record's reader does not check: a part that
      // is not an object (an edited or foreign run) is skipped, as a search
      // run's bad lines are.
      if (tune.at(part).is_object()) add_sweep(c, r.task, r.device, field_or_null(tune.at(part), "sweep"));
      else ++c.skipped;
    }
  }
}

void read_search_run(Collector& c, const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json rec = nlohmann::json::parse(line, nullptr, false);
    if (!rec.is_object() || !rec.contains("eval") || !rec.contains("task")) continue;  // a cut line, or no evaluation
    try {
      const auto& ev = rec.at("eval");
      const Task task = parse_task(rec.at("task"));
      DeviceSummary device;
      from_json(ev.value("device", nlohmann::json::object()), device);
      const auto meta = rec.value("candidate", nlohmann::json::object()).value("meta", nlohmann::json::object());
      const bool timed = ev.value("status", "") == "ok" && ev.value("cold", nlohmann::json::object()).value("status", "") == "measured";
      c.add(task, device, meta.value("tile_config", nlohmann::json()),
            timed ? ev.at("cold").value("median_us", 0.0) : 0.0);
    } catch (const std::exception&) {
      ++c.skipped;
    }
  }
}

void read_rows_file(Collector& c, const fs::path& file) {
  std::ifstream in(file);
  if (!in) fail_bad_input(fmt::format("{}: cannot be read", file.string()));
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    try {
      if (j.is_discarded()) fail_bad_input("not JSON");
      tile::Measurement m = tile::measurement_from_json(j);
      if (!(m.cold_us > 0)) fail_bad_input("cold_us must be above 0");
      c.add(std::move(m));
    } catch (const Error& e) {
      fail_bad_input(fmt::format("{}:{}: not a training row: {}", file.string(), n, e.what()));
    } catch (const nlohmann::json::exception& e) {  // a field of the wrong type deeper in (the task's)
      fail_bad_input(fmt::format("{}:{}: not a training row: {}", file.string(), n, e.what()));
    }
  }
}

bool read_any(Collector& c, const fs::path& p, int& runs) {
  std::error_code ec;
  if (fs::is_regular_file(p, ec) && p.extension() == kRowsExtension) {
    read_rows_file(c, p);
    ++runs;
    return true;
  }
  if (fs::exists(p / kResultsFile, ec)) {
    read_bench_run(c, p);
    ++runs;
    return true;
  }
  if (fs::exists(p / "trajectories.jsonl", ec)) {
    read_search_run(c, p / "trajectories.jsonl");
    ++runs;
    return true;
  }
  // A folder of runs, of rows files (`tile model rows`), or of both.
  bool any = false;
  if (fs::is_directory(p, ec))
    for (const auto& e : fs::directory_iterator(p, ec))
      if (e.is_directory() || e.path().extension() == kRowsExtension) any = read_any(c, e.path(), runs) || any;
  return any;
}

}  // namespace

ModelData read_model_data(const std::vector<fs::path>& paths) {
  Collector c;
  ModelData out;
  for (const auto& p : paths)
    if (!read_any(c, p, out.runs))
      fail_bad_input(fmt::format("{}: no bench run (results.jsonl) or search run (trajectories.jsonl) in it, and not a rows file (.jsonl)", p.string()));
  out.rows = c.merged();
  out.skipped = c.skipped;
  return out;
}

void check_rows_file_name(const fs::path& file, const std::string& option) {
  if (file.extension() != kRowsExtension)
    fail_bad_input(fmt::format("{} {}: a rows file ends in {} (train and eval read it by that)", option, file.string(),
                               kRowsExtension));
}

void write_rows(const fs::path& file, const std::vector<tile::Measurement>& rows) {
  std::string text;
  for (const auto& m : rows) text += tile::to_json(m).dump() + "\n";
  atomic_write_file(file, text);
}

std::vector<tile::Measurement> of_kind(const std::vector<tile::Measurement>& rows, const std::string& kind) {
  if (kind == tile::kEveryKind) return rows;
  std::vector<tile::Measurement> out;
  std::copy_if(rows.begin(), rows.end(), std::back_inserter(out), [&](const auto& m) { return m.device_kind == kind; });
  return out;
}

}  // namespace tessera::bench
