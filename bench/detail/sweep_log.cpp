#include "bench/detail/sweep_log.hpp"

#include <algorithm>

#include "core/fs.hpp"

namespace tessera::bench {

ShapeRecord start_record(const Task& task, const std::string& bucket, const DeviceSummary& device) {
  ShapeRecord r;
  r.task = task;
  r.bucket = bucket;
  r.device = device;
  return r;
}

void finish_record(ShapeRecord& r, std::chrono::steady_clock::time_point t0) {
  if (r.kernel) {
    r.baselines = r.kernel->result.baselines;
    if (!r.kernel->result.device.name.empty()) r.device = r.kernel->result.device;
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.finished_at = utc_now_iso();
}

nlohmann::json sweep_entry(const std::string& name, const nlohmann::json& tile_config, const EvalResult& result) {
  const bool timed = result.status == Status::ok && result.cold.status == "measured";
  return {{"name", name},
          {"tile_config", tile_config},
          {"status", to_string(result.status)},
          {"cold_us", timed ? result.cold.median_us : 0.0}};
}

nlohmann::json sweep_of_tune(const search::TileTuneOutcome& o) {
  std::vector<const search::TunedConfig*> in_order;
  for (const auto& e : o.evaluated) in_order.push_back(&e);
  std::stable_sort(in_order.begin(), in_order.end(), [](auto* a, auto* b) { return a->order < b->order; });
  nlohmann::json sweep = nlohmann::json::array();
  for (const auto* e : in_order) {
    nlohmann::json entry = sweep_entry(e->name, tile::to_json(e->config), e->result);
    if (!e->move.empty()) entry["move"] = e->move;
    sweep.push_back(std::move(entry));
  }
  return {{"plan", o.plan},
          {"evaluated", o.evaluated.size()},
          {"failures", o.failures},
          {"model", search::to_json(o.model)},
          {"sweep", sweep}};
}

nlohmann::json sweep_of_search(const search::TaskState& task, const std::string& stop_reason,
                               const std::map<std::string, nlohmann::json>& proposer_info) {
  nlohmann::json sweep = nlohmann::json::array();
  int explored = 0;
  for (const auto& ind : task.evaluated) {
    const auto& meta = ind->candidate.meta;
    nlohmann::json e = sweep_entry(ind->candidate.name, meta.value("tile_config", nlohmann::json()), ind->result);
    if (const auto it = proposer_info.find(ind->candidate.name); it != proposer_info.end()) {
      e["move"] = it->second.value("move", "");
      e["explore"] = it->second.value("explore", false);
      explored += e["explore"].get<bool>();
    }
    sweep.push_back(std::move(e));
  }
  return {{"evaluated", task.evaluated.size()}, {"explored", explored}, {"stop_reason", stop_reason}, {"sweep", sweep}};
}

nlohmann::json confirmed_json(const std::string& name, const EvalResult& result) {
  return {{"name", name},
          {"status", to_string(result.status)},
          {"cold_us", result.cold.median_us},
          {"best_baseline", result.best_baseline},
          {"best_baseline_us", result.best_baseline_us},
          {"speedup", result.speedup}};
}

}  // namespace tessera::bench
