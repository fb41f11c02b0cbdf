#pragma once
// Everything that decides what a search does. It is written to
// runs/<id>/config.json and read back on --resume, so a resumed run makes the
// same decisions.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/reward.hpp"
#include "search/acceptance.hpp"
#include "search/bandit.hpp"
#include "search/population.hpp"

namespace tessera::search {

inline constexpr long long kDefaultBudgetEvals = 40;
inline constexpr int kDefaultInspirations = 3;
inline constexpr int kDefaultHistoryLength = 4;   // recent attempts shown to the proposer
inline constexpr int kDefaultKernelArms = 6;      // bandit: best kernels a step may start from
inline constexpr int kMaxNoveltyRetries = 4;      // re-proposals when a proposal is a duplicate
// From this re-ask on, a proposer that has a `rewrite` strategy is asked with
// it: two repeats in a row mean the step's strategy keeps leading back to the
// same kernel.
inline constexpr int kReaskRewriteFrom = 2;
// A proposer whose proposals fail this many times in a row with errors that no
// retry can fix (a rejected key, an unknown model) stops the run.
inline constexpr int kMaxPermanentFailuresInARow = 3;
inline constexpr double kBanditRewardScale = 0.25;  // improvement over the parent that earns reward 1
inline constexpr double kFirstSuccessReward = 0.5;  // bandit reward of a timed kernel with no parent
inline constexpr double kDuplicatePenalty = -0.1;   // scalar reward of a step whose proposals were all duplicates
inline constexpr double kFailurePenalty = -1.0;     // scalar reward of a candidate's own failure

// The search's reward (docs/trajectory-schema.md): improvement over the
// parent, linear and clipped to [-1, 1]; kFailurePenalty for the candidate's own
// failures, kDuplicatePenalty for a step whose proposals were all duplicates;
// no correctness bonus (a search ranks kernels, it does not teach a policy).
RewardConfig search_reward_config();

struct Budget {
  long long evals = kDefaultBudgetEvals;  // search steps (each asks the harness once, or twice when re-measured)
  double seconds = 0;                     // wall time; 0 = unlimited
  long long tokens = 0;                   // LLM tokens (prompt + completion); 0 = unlimited
  double usd = 0;                         // LLM cost; 0 = unlimited
  double stop_at_peak_fraction = 0;       // stop once the best kernel reaches this fraction of peak; 0 = off
};
void to_json(nlohmann::json& j, const Budget& b);
void from_json(const nlohmann::json& j, Budget& b);

struct SearchConfig {
  std::string run_id;
  std::string method = "evolve";  // evolve | bandit
  std::uint64_t seed = 0;
  Budget budget;

  // Evolution.
  int islands = kDefaultIslands;
  int island_capacity = kDefaultIslandCapacity;
  int migration_interval = kDefaultMigrationInterval;
  std::string selection = "tournament";  // tournament | fitness_weighted
  int tournament_size = kDefaultTournamentSize;
  double exploration_ratio = kDefaultExplorationRatio;
  double elite_ratio = kDefaultEliteRatio;
  int inspirations = kDefaultInspirations;
  int history = kDefaultHistoryLength;

  // Acceptance.
  bool noise_aware = true;
  double min_noise_margin = kMinNoiseMargin;
  // Time the baselines on a task's first timed evaluation only (whose kernel
  // is then timed again alone) and lend them to all its evaluations
  // (core/lent_baselines.hpp), whose speedups are then their cold times
  // against those: the task's ranking is by cold time, as
  // tile tune's sweep (which times no baselines) ranks, the GPU is not heated
  // by cuBLAS between candidates, and each evaluation takes less GPU time.
  // Off by default: every evaluation times its baselines beside it.
  bool reuse_baselines = false;

  // Bandit.
  std::string bandit_rule = "ucb1";  // ucb1 | thompson
  double ucb_c = kDefaultUcbExploration;
  std::string bandit_cost = "none";  // none | tokens | seconds
  int kernel_arms = kDefaultKernelArms;
  double saturated_pct = kDefaultSaturatedPct;

  // Execution. pipeline_depth steps are in flight at once (proposing or
  // evaluating); step s is planned from the state after step s - depth.
  int pipeline_depth = 0;  // 0: resolved to 2 x evaluators when the run starts
  bool compile_only = false;
  // CUPTI counter set read for every candidate (worker::CounterSet). The CLI
  // asks for "fast"; "full" here keeps configs written before the key
  // existed (their runs read the full set) resuming as they ran.
  std::string counter_set = "full";
  double temperature = -1;  // <0: endpoint default
  std::vector<std::string> proposers;  // names, for the record

  AcceptanceRule acceptance() const { return {noise_aware, min_noise_margin}; }
  void validate() const;  // throws bad_input
};
void to_json(nlohmann::json& j, const SearchConfig& c);
void from_json(const nlohmann::json& j, SearchConfig& c);

}  // namespace tessera::search
