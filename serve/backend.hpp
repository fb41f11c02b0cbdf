#pragma once
// What the service evaluates with: the evaluator slots (one per GPU), the
// action parser, the episodes of the RL environment and the one EnvConfig
// that judges every action, stateless or in a session (env/judge.hpp). The
// defaults come from env/ (make_env_backend); the service's tests put fakes
// in place of the evaluators, the parser and the episodes.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "env/env.hpp"
#include "harness/pool.hpp"
#include "serve/evaluator_slots.hpp"

namespace tessera::serve {

// One RL episode (a session): env::Environment behind a small interface.
class Episode {
public:
  virtual ~Episode() = default;
  // Throws Error(bad_input) for a bad task or bad options.
  virtual env::ResetResult reset(std::optional<Task> task, std::uint64_t seed, const nlohmann::json& options) = 0;
  // Never throws for anything the policy sent.
  virtual env::StepResult step(const std::string& action) = 0;
  // {"task", "turn", "done", "best_speedup", "history": [{turn, action_kind, status, reward, masked}]}
  virtual nlohmann::json summary() const = 0;
  virtual bool done() const = 0;
};

using ParseAction = std::function<env::ParsedAction(const std::string& text, const Task& task,
                                                    const env::ActionSpace& allowed)>;
using NewEpisode = std::function<std::unique_ptr<Episode>()>;

struct Backend {
  std::shared_ptr<EvaluatorSlots> slots;  // its pool is the one every evaluation goes through
  ParseAction parse;
  NewEpisode new_episode;
  // Sessions, /v1/evaluate and /get_reward are judged under it: the action
  // space, the reward, the evaluation options, the retries, the counters.
  env::EnvConfig config;
};

// The environment's parser and episodes over `slots`, under `config` (what
// every session starts from; its options may change the per-episode
// settings).
Backend make_env_backend(std::shared_ptr<EvaluatorSlots> slots, env::EnvConfig config);

}  // namespace tessera::serve
