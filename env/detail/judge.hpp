#pragma once
// From parsed actions to paid results: evaluation across the pool (in
// request order), the infra retries, the baseline reuse option and the
// reward. Shared by Environment::step and score_actions.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "env/env.hpp"

namespace tessera::env::detail {

struct Judged {
  std::optional<EvalResult> result;  // none when the action was not a kernel
  Reward reward;
  // One entry per evaluation run: {"status", "reason", "wall_ms"}. More than
  // one means an infra_error was retried on a fresh worker.
  nlohmann::json attempts = nlohmann::json::array();
  std::string baseline_protocol = "none";  // interleaved | reused | none (nothing timed)
  nlohmann::json baseline_source;          // the lent measurement, when reused
};

struct Judgement {
  const ParsedAction* action = nullptr;
  Task task;
};

// Evaluates every parsed kernel of `items` as one batch over the pool (format
// failures are paid without an evaluation), retries infra errors up to
// config.infra_retries times, and pays each with config.reward.
std::vector<Judged> judge(const std::vector<Judgement>& items, const EnvConfig& config, EvaluatorPool& pool);

// The part of a step's info that says what the action was and what it was paid.
nlohmann::json judged_info(const ParsedAction& action, const Judged& judged);

// What an evaluation request of the environment asks the harness for.
EvalOptions eval_options(const EnvConfig& config);

}  // namespace tessera::env::detail
