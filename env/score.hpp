#pragma once
// One-turn scoring of many actions at once: what a reward function of a
// trainer needs (verl's compute_score, TRL's reward functions, OpenRLHF's
// remote reward). Each action is parsed like a step's, the kernels are
// evaluated as one batch across every GPU of the pool, and each is paid with
// the environment's reward; results come back in request order.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "env/env.hpp"

namespace tessera::env {

struct ScoreRequest {
  std::string action;
  Task task;
  std::optional<std::string> previous_source;  // what a SEARCH/REPLACE action applies to
};

struct Scored {
  std::optional<double> reward;  // nullopt when masked
  // As a step's info without the episode fields: action_kind, format_ok,
  // format_error, reward (components), masked, result, attempts, retried,
  // baseline_protocol, and task_id.
  nlohmann::json info;
};

std::vector<Scored> score_actions(const std::vector<ScoreRequest>& requests, const EnvConfig& config,
                                  const std::shared_ptr<EvaluatorPool>& pool);

}  // namespace tessera::env
