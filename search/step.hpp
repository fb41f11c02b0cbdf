#pragma once
// What one search step decided (Plan) and what came back (StepOutcome).
// Both go to disk: outcomes.jsonl as soon as the evaluation finishes, and the
// trajectory record once the step is applied in step order.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/proposer.hpp"
#include "search/individual.hpp"

namespace tessera::search {

struct Plan {
  long long step = 0;
  int task_index = 0;
  std::string task_id;
  int island = 0;
  long long parent = -1;
  std::vector<long long> inspirations;
  std::string selection;  // scratch | explore | elite | tournament | fitness_weighted | bandit
  int proposer = 0;
  std::string proposer_name;
  std::string model;
  std::string strategy;
  std::string strategy_target;
  int arm = -1;                          // bandit: top-level arm index
  std::vector<std::string> masked_arms;  // bandit: arms closed by saturated counters
  double temperature = -1;
  std::uint64_t seed = 0;
  long long reference = -1;  // the task's best kernel when planned (re-measure decisions)

  // In-memory snapshots for the proposer and the re-measure decision; not serialised.
  IndividualPtr parent_ind, reference_ind;
  std::vector<IndividualPtr> inspiration_inds, history;
};
nlohmann::json plan_json(const Plan& p);

// Seed of the proposal attempt (attempt > 0 after novelty rejections).
std::uint64_t attempt_seed(std::uint64_t plan_seed, int attempt);

struct StepOutcome {
  long long step = 0;
  bool proposal_ok = false;
  std::string proposal_error;
  std::string proposer;                                 // the proposer's own name ("tile", "llm", "replay")
  nlohmann::json proposer_info = nlohmann::json::object();
  nlohmann::json messages = nlohmann::json::array();   // chat messages sent and received
  nlohmann::json action = nlohmann::json::object();    // {kind, content}: diff, full source or config
  std::uint64_t seed = 0;                               // seed of the kept attempt
  Candidate candidate;
  std::string novelty_key;
  nlohmann::json novelty_rejects = nlohmann::json::array();  // [{key, duplicate_of, attempt}]
  long long duplicate_of = -1;  // every attempt duplicated this earlier step
  agent::Usage usage;           // summed over attempts
  bool evaluated = false;
  EvalResult result;                 // after any re-measurement
  std::optional<EvalResult> first;   // the first measurement, when re-measured
  std::string verdict_first, verdict_final;  // against the plan's parent/reference
  int evaluator = -1;
  std::string device;
  // Timed results: "interleaved" (baselines timed beside the kernel) or
  // "reused" (SearchConfig::reuse_baselines: lent, baseline_source says from
  // which measurement); empty when nothing was timed.
  std::string baseline_protocol;
  nlohmann::json baseline_source = nullptr;
  nlohmann::json timestamps = nlohmann::json::object();
};
nlohmann::json outcome_json(const StepOutcome& o);
StepOutcome outcome_from_json(const nlohmann::json& j);

nlohmann::json candidate_json(const Candidate& c);
Candidate candidate_from_json(const nlohmann::json& j);

}  // namespace tessera::search
