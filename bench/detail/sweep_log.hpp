#pragma once
// What kernel sweeps keep of their configs in a shape's record
// (kernel.tune): every config measured, in the order it was measured, with
// its cold time, so that a record is training data for the learned cost
// model (bench/model_data.hpp) and the report can draw best speedup against
// evaluations (bench/search_vs_tune.hpp).
#include <chrono>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/record.hpp"
#include "core/result.hpp"
#include "search/state.hpp"
#include "search/tile_tuner.hpp"

namespace tessera::bench {

ShapeRecord start_record(const Task& task, const std::string& bucket, const DeviceSummary& device);
void finish_record(ShapeRecord& r, std::chrono::steady_clock::time_point t0);

// {"name", "tile_config", "status", "cold_us"} of one measured config.
nlohmann::json sweep_entry(const std::string& name, const nlohmann::json& tile_config, const EvalResult& result);

// A tile tune: plan, counts, the model's check and "sweep": every config in
// measurement order, each with the move that brought the tune to it.
nlohmann::json sweep_of_tune(const search::TileTuneOutcome& outcome);
// A search's task: its evaluations in step order ("sweep", with each one's
// move and whether it was exploration), how many explored, why it stopped.
// `proposer_info` maps a candidate's name to what its proposer said of it
// (the run's trajectories.jsonl).
nlohmann::json sweep_of_search(const search::TaskState& task, const std::string& stop_reason,
                               const std::map<std::string, nlohmann::json>& proposer_info);
// The confirming measurement of a sweep's fastest config.
nlohmann::json confirmed_json(const std::string& name, const EvalResult& result);

}  // namespace tessera::bench
