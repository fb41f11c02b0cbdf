#pragma once
// Trajectory records (docs/trajectory-schema.md): one JSON line per step in
// runs/<id>/trajectories.jsonl. A record is a superset of the step's outcome
// (outcome_from_json reads it back), which is what --resume replays.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/task.hpp"
#include "search/state.hpp"
#include "search/step.hpp"

namespace tessera::search {

inline constexpr const char* kTrajectorySchema = "tessera.trajectory/1";

nlohmann::json trajectory_record(const std::string& run_id, const std::string& method, const Task& task,
                                 const Plan& plan, const StepOutcome& outcome, const Applied& applied,
                                 const Totals& totals);

// Reads a JSONL file; a torn or unparsable line ends the read (a crash can
// leave a partial last line). `valid_bytes` gets the length of the good prefix.
std::vector<nlohmann::json> read_jsonl(const std::filesystem::path& path, std::size_t* valid_bytes = nullptr);

// The record without fields that differ between two runs making the same
// decisions (timestamps, wall times, compile times and cache hits, elapsed
// seconds, which GPU measured the step): for resume checks.
nlohmann::json decision_view(const nlohmann::json& record);

}  // namespace tessera::search
