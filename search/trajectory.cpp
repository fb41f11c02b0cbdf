#include "search/trajectory.hpp"

#include <fstream>
#include <sstream>

#include "core/fs.hpp"

namespace tessera::search {

nlohmann::json trajectory_record(const std::string& run_id, const std::string& method, const Task& task,
                                 const Plan& plan, const StepOutcome& o, const Applied& applied,
                                 const Totals& totals) {
  nlohmann::json j = outcome_json(o);
  j["schema"] = kTrajectorySchema;
  j["run"] = run_id;
  j["method"] = method;
  j["task"] = to_json(task);
  j["task_id"] = plan.task_id;
  j["parents"] = plan.parent >= 0 ? nlohmann::json::array({plan.parent}) : nlohmann::json::array();
  j["inspirations"] = plan.inspirations;
  j["island"] = plan.island;
  j["selection"] = plan.selection;
  const std::string info_model =
      o.proposer_info.is_object() ? o.proposer_info.value("model", std::string()) : std::string();
  j["proposer"] = {{"name", plan.proposer_name},
                   {"model", info_model.empty() ? plan.model : info_model},
                   {"strategy", plan.strategy},
                   {"strategy_target", plan.strategy_target},
                   {"arm", plan.arm},
                   {"masked_arms", plan.masked_arms},
                   {"temperature", plan.temperature},
                   {"seed", o.seed}};
  j["plan"] = plan_json(plan);
  j["descriptor"] = applied.descriptor;
  j["acceptance"] = applied.acceptance;
  j["reward"] = applied.reward;
  j["totals"] = totals;
  j["timestamps"]["applied"] = utc_now_iso();
  return j;
}

std::vector<nlohmann::json> read_jsonl(const std::filesystem::path& path, std::size_t* valid_bytes) {
  std::vector<nlohmann::json> out;
  if (valid_bytes) *valid_bytes = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) return out;
  std::string line;
  std::size_t good = 0;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no trailing newline: a torn last line
    if (line.empty()) {
      good += 1;
      continue;
    }
    try {
      out.push_back(nlohmann::json::parse(line));
    } catch (const nlohmann::json::exception&) {
      break;
    }
    good += line.size() + 1;
  }
  if (valid_bytes) *valid_bytes = good;
  return out;
}

nlohmann::json decision_view(const nlohmann::json& record) {
  nlohmann::json j = record;
  j.erase("timestamps");
  // Which GPU measured a step depends on which one was free first.
  j.erase("evaluator");
  j.erase("device");
  for (const char* k : {"eval", "first_eval"}) {
    if (j.contains(k) && j[k].is_object()) {
      j[k].erase("wall_ms");
      j[k].erase("phase_ms");
      j[k].erase("started_at");
      j[k].erase("device");
      j[k].erase("worker_log");
      // A kernel compiled in one run is a cache hit in the next: how long the
      // compile took and whether the cache served it are no decision.
      if (j[k].contains("compile") && j[k]["compile"].is_object()) {
        j[k]["compile"].erase("ms");
        j[k]["compile"].erase("cached");
      }
    }
  }
  if (j.contains("totals")) j["totals"].erase("elapsed_s");
  return j;
}

}  // namespace tessera::search
