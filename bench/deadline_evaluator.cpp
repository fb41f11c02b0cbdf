#include "bench/deadline_evaluator.hpp"

namespace tessera::bench {

void DeadlineEvaluator::set_deadline(Clock::time_point at) {
  std::lock_guard g(mu_);
  deadline_ = at;
}

bool DeadlineEvaluator::passed() const {
  std::lock_guard g(mu_);
  return deadline_ && Clock::now() >= *deadline_;
}

EvalResult DeadlineEvaluator::evaluate(const Candidate& candidate, const Task& task, const EvalOptions& options) {
  if (!passed()) return inner_.evaluate(candidate, task, options);
  cut_ = true;
  EvalResult r;
  r.status = Status::infra_error;  // the machine's time, not the candidate's fault: masked
  r.reason = "cut off at the time limit (--max-minutes)";
  r.fault = "infrastructure";
  r.task = task;
  r.candidate_name = candidate.name;
  r.mode = options.compile_only ? "compile_only" : "full";
  return r;
}

void DeadlineEvaluator::precompile(const std::vector<Candidate>& candidates) {
  if (!passed()) inner_.precompile(candidates);
}

void DeadlineEvaluator::compile_ahead(const Candidate& candidate) {
  if (!passed()) inner_.compile_ahead(candidate);
}

}  // namespace tessera::bench
