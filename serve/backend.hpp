#pragma once
// What the service evaluates with: the evaluator slots (one per GPU), the
// action parser and the episodes of the RL environment. The
// defaults come from env/ (make_env_backend); the service's tests put fakes
// in their place.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "env/env.hpp"
#include "core/reward.hpp"
#include "harness/pool.hpp"
#include "serve/slots.hpp"

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
  RewardConfig reward = default_reward_config();
};

// The environment's parser and episodes over `slots`. `config` is what every
// session starts from (its options may change the per-episode settings).
Backend make_env_backend(std::shared_ptr<EvaluatorSlots> slots, env::EnvConfig config);

}  // namespace tessera::serve
