#pragma once
// The judge's one retry loop (env/judge.hpp): a kernel's first evaluation and
// each retry of an infra_error, every run a job on whichever evaluator of the
// pool is free first. Also where the reuse-baselines option lends a
// measurement, and measures again on a GPU of another kind.
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/pool.hpp"

namespace tessera::env::detail {

// What of an EnvConfig a trial reads.
struct TrialRules {
  EvalOptions eval;  // judged_eval_options(config)
  int infra_retries = 0;
  bool reuse_baselines = false;
};

struct TrialOutcome {
  EvalResult result;
  nlohmann::json attempts = nlohmann::json::array();  // one {"status", "reason", "wall_ms"} per run
  std::string baseline_protocol = "none";
  nlohmann::json baseline_source;
};

// Evaluates `candidate` on `task` until a run ends in something other than
// infra_error, or the retries are spent; then `done`. `begin` (may be empty)
// runs before the first run, on the evaluator's thread: false ends the trial
// unevaluated (`done` gets nullopt). `done` runs exactly once, on an
// evaluator's thread, unless the pool is destroyed first.
void run_trial(EvaluatorPool& pool, Candidate candidate, Task task, TrialRules rules, std::function<bool()> begin,
               std::function<void(std::optional<TrialOutcome>)> done);

}  // namespace tessera::env::detail
