#pragma once
// One-turn scoring of many actions at once: what a reward function of a
// trainer needs (verl's compute_score, TRL's reward functions). The judge's
// batch (env/judge.hpp) with the scalar reward beside the record: each
// action is parsed like a step's, the kernels are evaluated as one batch
// across every GPU of the pool, and each is paid with the environment's
// reward; results come back in request order.
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
  // The judged record (Verdict::record()): a step's info without the
  // episode's fields.
  nlohmann::json info;
};

std::vector<Scored> score_actions(const std::vector<ScoreRequest>& requests, const EnvConfig& config,
                                  const std::shared_ptr<EvaluatorPool>& pool);

}  // namespace tessera::env
