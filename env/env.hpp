#pragma once
// The RL environment's C++ core (docs/env.md): a policy writes kernels as
// text, the environment compiles, verifies and times them against cuBLAS and
// returns an observation, a reward and an info record, turn after turn.
// Python (gymnasium and the trainer hooks), the HTTP service and the Ray
// actors are thin layers over this class.
//
// Never throws for anything the policy does: a malformed action is a format
// failure with an observation that says what was wrong. Throws tessera::Error
// only for bad configuration (bad_input) and tessera's own bugs.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.hpp"
#include "harness/core/reward.hpp"
#include "harness/core/task.hpp"
#include "harness/pool.hpp"

namespace tessera::env {

inline constexpr int kDefaultMaxTurns = 3;

// What a policy may send. Device-only kernels, SEARCH/REPLACE diffs of the
// previous turn's kernel and tile configs run no host code of the policy's;
// full translation units do (in the confined runner), so they are accepted
// only when the caller trusts the policy.
struct ActionSpace {
  bool device_only = true;
  bool diff = true;
  bool tile_config = true;
  bool translation_unit = false;
};

struct EnvConfig {
  int max_turns = kDefaultMaxTurns;
  ActionSpace actions;
  RewardConfig reward = default_reward_config();
  EvalOptions eval;                 // verification trials, counters, hot timing ...
  std::vector<Task> tasks;          // sampled by reset() when it is given no task
  int infra_retries = 1;            // an infra_error is retried this many times on a fresh worker
  // Whether the observation carries hardware counters and the bottleneck
  // reading (they cost profiler passes per evaluation).
  bool counters_in_feedback = true;
  nlohmann::json to_json() const;
  static EnvConfig from_json(const nlohmann::json& j);  // bad_input on unknown keys
};

// An action as parsed: what kind it was and the kernel it produced.
struct ParsedAction {
  bool ok = false;
  std::string kind;          // device_only | diff | tile_config | translation_unit
  std::string error;         // why it is not a kernel (format failure)
  Candidate candidate;       // when ok
  nlohmann::json tile_config;  // the config, for tile_config actions
};

// Text -> kernel: a fenced block or bare source, a SEARCH/REPLACE diff against
// `previous_source`, or a tile-config JSON for `task`. Pure; never throws.
ParsedAction parse_action(const std::string& text, const std::optional<std::string>& previous_source,
                          const Task& task, const ActionSpace& allowed);

struct Turn {
  int turn = 0;                 // 1-based
  std::string action;           // as sent
  std::string action_kind;
  std::optional<EvalResult> result;  // none for a format failure
  Reward reward;
};

struct StepResult {
  std::string observation;
  std::optional<double> reward;  // nullopt when masked
  bool terminated = false;       // max_turns reached
  bool truncated = false;
  nlohmann::json info;  // reward components, the evaluation record, masked, turn, best_speedup, attempts
};

struct ResetResult {
  std::string observation;  // the task statement and the rules of the action format
  nlohmann::json info;      // task, seed, max_turns, action space
};

class Environment {
public:
  Environment(EnvConfig config, std::shared_ptr<EvaluatorPool> pool);
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  // With no task, one is drawn from config.tasks under `seed` (the same seed
  // gives the same task). options: {"task": {...}, "max_turns": n, ...}.
  ResetResult reset(std::optional<Task> task, std::uint64_t seed, const nlohmann::json& options = {});
  StepResult step(const std::string& action);

  const std::vector<Turn>& history() const;
  std::optional<double> best_speedup() const;
  const Task& task() const;
  int turn() const;
  bool done() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::env
