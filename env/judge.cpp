#include "env/judge.hpp"

#include <condition_variable>
#include <mutex>

#include <fmt/format.h>

#include "core/error.hpp"
#include "env/detail/device.hpp"
#include "env/detail/trial.hpp"

namespace tessera::env {

namespace {

detail::TrialRules rules_of(const EnvConfig& c) { return {judged_eval_options(c), c.infra_retries, c.reuse_baselines}; }

// The reward of a parsed action and what its trial found (none: not a kernel).
Verdict pay(ParsedRequest request, std::optional<detail::TrialOutcome> trial, const RewardConfig& reward) {
  Verdict v;
  v.action = std::move(request.action);
  v.task = std::move(request.task);
  RewardInput in;
  in.format_ok = v.action.ok;
  in.format_error = v.action.error;
  if (trial) {
    v.result = std::move(trial->result);
    v.attempts = std::move(trial->attempts);
    v.baseline_protocol = std::move(trial->baseline_protocol);
    v.baseline_source = std::move(trial->baseline_source);
    in.result = &*v.result;
  }
  v.reward = compute_reward(in, reward);
  return v;
}

std::vector<ParsedRequest> parse_all(const std::vector<JudgeRequest>& requests, const EnvConfig& config,
                                     const std::shared_ptr<EvaluatorPool>& pool) {
  if (!pool) fail_bad_input("judging needs an evaluator pool");
  config.validate();
  for (const auto& r : requests) validate(r.task);
  const tile::Limits limits = tile::with_device(tile::Limits{}, detail::pool_device(pool));
  std::vector<ParsedRequest> out;
  out.reserve(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const auto& r = requests[i];
    ParsedAction a = parse_action(r.action, r.previous_source, r.task, config.actions, limits);
    if (a.ok && a.candidate.name.empty()) a.candidate.name = r.name.empty() ? fmt::format("action {}", i) : r.name;
    out.push_back({std::move(a), r.task});
  }
  return out;
}

}  // namespace

std::string Verdict::status() const { return result ? to_string(result->status) : std::string("format_error"); }

nlohmann::json Verdict::record() const {
  nlohmann::json j = {{"status", status()},
                      {"action_kind", action.kind},
                      {"format_ok", action.ok},
                      {"reward", reward.components},
                      {"masked", reward.masked},
                      {"result", result ? nlohmann::json(*result) : nlohmann::json(nullptr)},
                      {"attempts", attempts},
                      {"retried", attempts.size() > 1},
                      {"baseline_protocol", baseline_protocol},
                      {"task_id", task.id()},
                      // Every key on every record (docs/env.md): trainers gather them into columns.
                      {"format_error", action.ok ? std::string() : action.error},
                      {"fuzzy_matches", action.fuzzy_matches},
                      {"tile_config", action.tile_config},
                      {"baseline_source", baseline_source}};
  return j;
}

void judge_async(ParsedRequest request, const EnvConfig& config, EvaluatorPool& pool, JudgeBegin begin,
                 JudgeDone done) {
  if (!request.action.ok) return done(pay(std::move(request), std::nullopt, config.reward));
  Candidate candidate = request.action.candidate;
  Task task = request.task;
  detail::run_trial(pool, std::move(candidate), std::move(task), rules_of(config), std::move(begin),
                    [request = std::move(request), reward = config.reward,
                     done = std::move(done)](std::optional<detail::TrialOutcome> trial) mutable {
                      if (!trial) return done(std::nullopt);
                      done(pay(std::move(request), std::move(trial), reward));
                    });
}

std::vector<Verdict> judge_parsed(std::vector<ParsedRequest> requests, const EnvConfig& config, EvaluatorPool& pool) {
  std::vector<Verdict> out(requests.size());
  std::vector<Candidate> kernels;
  for (const auto& r : requests)
    if (r.action.ok) kernels.push_back(r.action.candidate);
  CompileAhead ahead(pool.evaluator(0), std::move(kernels));
  std::mutex mu;
  std::condition_variable cv;
  std::size_t left = requests.size();
  for (std::size_t i = 0; i < requests.size(); ++i) {
    judge_async(std::move(requests[i]), config, pool, nullptr, [&, i](std::optional<Verdict> v) {
      std::lock_guard g(mu);
      out[i] = std::move(*v);  // never dropped: there is no `begin`
      --left;
      cv.notify_all();  // under the lock: the waiter returns as soon as it sees left == 0
    });
  }
  std::unique_lock lk(mu);
  cv.wait(lk, [&] { return left == 0; });
  return out;
}

std::vector<Verdict> judge_batch(const std::vector<JudgeRequest>& requests, const EnvConfig& config,
                                 const std::shared_ptr<EvaluatorPool>& pool) {
  return judge_parsed(parse_all(requests, config, pool), config, *pool);
}

Verdict judge(const JudgeRequest& request, const EnvConfig& config, const std::shared_ptr<EvaluatorPool>& pool) {
  return std::move(judge_batch({request}, config, pool).front());
}

EvalOptions judged_eval_options(const EnvConfig& config) {
  EvalOptions o = config.eval;
  o.counters = config.counters_in_feedback;
  return o;
}

EnvConfig with_eval_options(EnvConfig config, const EvalOptions& eval) {
  config.eval = eval;
  config.counters_in_feedback = eval.counters;
  return config;
}

SandboxOptions judging_sandbox(SandboxOptions options) {
  options.infra_retries = 0;
  return options;
}

}  // namespace tessera::env
