#pragma once
// The one judging path (docs/env.md, "The judge"). Every reward tessera pays
// for an action comes from here, under one EnvConfig, as one record:
//
//   text --parse_action--> kernel --evaluate, retrying infra_error--> result --compute_reward--> Verdict::record()
//
// Its callers: Environment::step and score_actions (env/), the service's
// /v1/evaluate, /v1/evaluate/batch and /get_reward (serve/detail/dispatcher),
// and Python's Pool.evaluate_batch (python/module.cpp). (The search pays a
// child against its parent kernel instead: search/ has its own loop.)
//
// Retries live here and nowhere else on these paths. An infra_error (the
// machine or tessera failed: the sandbox said so, or an evaluator threw) is
// evaluated again, on whichever evaluator of the pool is free first, up to
// EnvConfig::infra_retries times; each run is one entry of the record's
// "attempts". The pools the judge evaluates on run their sandboxes without
// retries of their own (judging_sandbox()).
//
// Never throws for anything an action holds; bad_input for a bad task.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "env/env.hpp"
#include "harness/sandbox.hpp"

namespace tessera::env {

struct JudgeRequest {
  std::string action;
  Task task;
  std::optional<std::string> previous_source;  // what a SEARCH/REPLACE action applies to
  std::string name;  // the kernel's name in its result; empty: "action <index in the batch>"
};

// An action already parsed (the service parses on its CPU pool; Python's
// Pool.evaluate_batch is given kernels, not text), with its task.
struct ParsedRequest {
  ParsedAction action;
  Task task;
};

struct Verdict {
  ParsedAction action;
  Task task;
  std::optional<EvalResult> result;  // none when the action was not a kernel
  Reward reward;
  // One {"status", "reason", "wall_ms"} per evaluation run; "rerun" on a run
  // that was repeated to measure the baselines on this kind of GPU.
  nlohmann::json attempts = nlohmann::json::array();
  std::string baseline_protocol = "none";  // interleaved | reused | none (nothing timed)
  nlohmann::json baseline_source;          // the lent measurement, when reused

  // The result's status, or "format_error" when the action was not a kernel.
  std::string status() const;
  // The record every path answers with (docs/env.md, "The judged record"):
  // status, action_kind, format_ok, format_error, reward (its components),
  // masked, result, attempts, retried, baseline_protocol, baseline_source,
  // tile_config, fuzzy_matches, task_id. A step adds the episode's fields,
  // the service its latencies.
  nlohmann::json record() const;
};

// One action: parsed (tile configs checked against the pool's GPU),
// evaluated with retries, paid.
Verdict judge(const JudgeRequest& request, const EnvConfig& config, const std::shared_ptr<EvaluatorPool>& pool);
// Many actions as one batch across every evaluator of the pool (compiled
// ahead on the CPUs while the GPUs measure); verdicts in request order.
std::vector<Verdict> judge_batch(const std::vector<JudgeRequest>& requests, const EnvConfig& config,
                                 const std::shared_ptr<EvaluatorPool>& pool);
// The same for actions parsed by the caller.
std::vector<Verdict> judge_parsed(std::vector<ParsedRequest> requests, const EnvConfig& config, EvaluatorPool& pool);

// Asynchronous, for the service. `begin` runs on an evaluator's thread when
// the first one takes the kernel: false drops it unevaluated, and `done`
// gets nullopt (the caller's deadline passed). `done` is called exactly
// once: at once for an action that is not a kernel, else on an evaluator's
// thread. Neither may throw. `pool` must outlive the call.
using JudgeBegin = std::function<bool()>;
using JudgeDone = std::function<void(std::optional<Verdict>)>;
void judge_async(ParsedRequest request, const EnvConfig& config, EvaluatorPool& pool, JudgeBegin begin,
                 JudgeDone done);

// The harness options the judge asks for under `config`: config.eval, with
// counters collected when they are shown (counters_in_feedback).
EvalOptions judged_eval_options(const EnvConfig& config);
// `config` with a request's own evaluation options (the service's per-request
// options, Python's keyword options); counters_in_feedback follows
// eval.counters.
EnvConfig with_eval_options(EnvConfig config, const EvalOptions& eval);

// The sandbox settings of a pool the judge evaluates on: the judge retries an
// infra_error itself, so the sandbox must not retry it too.
SandboxOptions judging_sandbox(SandboxOptions options);

}  // namespace tessera::env
