#pragma once
// The RL environment's C++ core (docs/env.md): a policy writes kernels as
// text, the environment compiles, verifies and times them against cuBLAS and
// returns an observation, a reward and an info record, turn after turn.
// Python (gymnasium and the trainer hooks), the HTTP service and the Ray
// actors are thin layers over this class.
//
// Never throws for anything the policy does: a malformed action is a format
// failure with an observation that says what was wrong. Throws tessera::Error
// only for bad configuration (bad_input), for calls out of order (step before
// reset or after the last turn: bad_input) and for tessera's own bugs.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "core/reward.hpp"
#include "core/task.hpp"
#include "harness/pool.hpp"
#include "tile/legality.hpp"

namespace tessera::env {

inline constexpr int kDefaultMaxTurns = 3;
inline constexpr int kMaxTurnsLimit = 64;           // a bound on episode length, for bad configs
inline constexpr int kDefaultInfraRetries = 1;      // the judge's retries of an infra_error, then masked (env/judge.hpp)
inline constexpr int kMaxInfraRetries = 8;
// Longer replies are format failures without being parsed: kernels are tens
// of KiB, and the parsers' cost must stay bounded whatever a policy writes.
inline constexpr std::size_t kMaxActionChars = 256 * 1024;
// Longest run of blanks a reply may hold: std::regex (the agent's parser, the
// harness's kind detection) recurses per character of a \s* run, and about
// 30000 blanks overflow an 8 MiB stack. Code never needs a thousand in a row.
inline constexpr std::size_t kMaxBlankRun = 1024;
inline constexpr std::size_t kDefaultMaxLogChars = 3000;  // compiler log shown in an observation (as the agent's prompts)
// Characters of one step's observation, all sections together (docs/env.md):
// at most about 1,300 tokens of a 131k-token vocabulary (Tekken) for this
// text, so the first prompt (about 1,800 tokens), a reply and an observation
// fit a 4k-token context (tests/python/test_observation_sizes.py). The
// compiler log, then the measurement, give way first.
inline constexpr std::size_t kDefaultMaxObservationChars = 4000;
inline constexpr std::size_t kMinObservationChars = 1000;  // the turn, score and reply format need this much

// What a policy may send. Device-only kernels, SEARCH/REPLACE diffs of the
// previous turn's kernel and tile configs run no host code of the policy's;
// full translation units do (in the confined runner), so they are accepted
// only when the caller trusts the policy.
struct ActionSpace {
  bool device_only = true;
  bool diff = true;
  bool tile_config = true;
  bool translation_unit = false;
  nlohmann::json to_json() const;
  static ActionSpace from_json(const nlohmann::json& j);  // bad_input on unknown keys
};

// The environment's evaluation options: the harness's, with defaults chosen
// for turns of an episode (see default_env_eval_options()).
EvalOptions default_env_eval_options();
// The harness's evaluation options as JSON (compile_only, counters,
// counter_set, baselines, timing, hot, verify_trials, shape_generic, rank_by):
// keys override `base`, unknown keys and wrong types are bad_input.
EvalOptions eval_options_from_json(const nlohmann::json& j, EvalOptions base = {});

struct EnvConfig {
  int max_turns = kDefaultMaxTurns;
  ActionSpace actions;
  RewardConfig reward = default_reward_config();
  EvalOptions eval = default_env_eval_options();  // verification trials, counter set, hot timing ...
  std::vector<Task> tasks;          // sampled by reset() when it is given no task
  // An infra_error is evaluated again this many times, then masked. The
  // judge's retries are the only ones (env/judge.hpp).
  int infra_retries = kDefaultInfraRetries;
  // Whether the observation carries hardware counters and the bottleneck
  // reading. Off also skips collecting them (they cost profiler passes per
  // evaluation): eval.counters follows this flag.
  bool counters_in_feedback = true;
  // Off (default, the honest protocol): every evaluation measures the
  // cuBLAS/cuBLASLt baselines interleaved with the kernel. On: the first
  // evaluation of a task on a device measures them and later ones reuse that
  // measurement (faster turns, but the ratio is no longer taken in one run);
  // info["baseline_protocol"] says which.
  bool reuse_baselines = false;
  std::size_t max_log_chars = kDefaultMaxLogChars;
  std::size_t max_observation_chars = kDefaultMaxObservationChars;
  std::string prompt_dir;  // agent prompt templates; empty: the agent's default (or $TESSERA_PROMPT_DIR)
  std::string abi_header;  // empty: the agent's default (or $TESSERA_ABI_HEADER)

  nlohmann::json to_json() const;
  // Unknown keys are bad_input; missing keys keep their defaults. "tasks" is a
  // list of task objects or "MxNxK" strings; "tasks_file" names a dataset file.
  static EnvConfig from_json(const nlohmann::json& j);
  void validate() const;  // bad_input
};

// An action as parsed: what kind it was and the kernel it produced.
struct ParsedAction {
  bool ok = false;
  std::string kind;          // device_only | diff | tile_config | translation_unit ("" when nothing was recognised)
  std::string error;         // why it is not a kernel (format failure)
  Candidate candidate;       // when ok
  nlohmann::json tile_config;  // the config, for tile_config actions
  int fuzzy_matches = 0;     // diff blocks that matched only after whitespace normalisation
};

// Text -> kernel: a fenced block or bare source, a SEARCH/REPLACE diff against
// `previous_source`, or a tile-config JSON for `task` (legal under `limits`).
// Pure; never throws.
ParsedAction parse_action(const std::string& text, const std::optional<std::string>& previous_source,
                          const Task& task, const ActionSpace& allowed, const tile::Limits& limits = {});

struct Turn {
  int turn = 0;                 // 1-based
  std::string action;           // as sent
  std::string action_kind;      // as parsed ("" when nothing was recognised)
  std::string source;           // the kernel evaluated (empty for a format failure)
  std::optional<EvalResult> result;  // none for a format failure
  Reward reward;
};

struct StepResult {
  std::string observation;
  std::optional<double> reward;  // nullopt when masked
  bool terminated = false;       // max_turns reached
  bool truncated = false;
  // The judged record (env/judge.hpp, Verdict::record()) and the episode's
  // turn, max_turns, best_speedup, best_turn: docs/env.md.
  nlohmann::json info;
};

struct ResetResult {
  std::string observation;  // the task statement and the rules of the action format
  // task, seed, max_turns, actions, device, messages ([system, user] of the observation).
  nlohmann::json info;
};

class Environment {
public:
  Environment(EnvConfig config, std::shared_ptr<EvaluatorPool> pool);
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  // With no task, one is drawn from config.tasks under `seed` (the same seed
  // gives the same task). options: {"task": task or "MxNxK", "max_turns": n}.
  ResetResult reset(std::optional<Task> task, std::uint64_t seed, const nlohmann::json& options = {});
  StepResult step(const std::string& action);

  const std::vector<Turn>& history() const;
  std::optional<double> best_speedup() const;
  std::optional<int> best_turn() const;  // the turn of the best kernel so far
  const Task& task() const;
  int turn() const;
  int max_turns() const;
  bool done() const;
  const EnvConfig& config() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The task reset() draws for `seed` from `tasks` (bad_input when empty).
Task draw_task(const std::vector<Task>& tasks, std::uint64_t seed);

}  // namespace tessera::env
