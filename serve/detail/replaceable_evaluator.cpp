#include "serve/detail/replaceable_evaluator.hpp"

#include <stdexcept>

#include <spdlog/spdlog.h>

#include "core/error.hpp"

namespace tessera::serve::detail {

namespace {
// A dying evaluator, as the slot sees it (fault injection).
struct WorkerKilled : std::runtime_error {
  WorkerKilled() : std::runtime_error("the worker was killed during the evaluation (fault injection)") {}
};
}  // namespace

long long steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

ReplaceableEvaluator::ReplaceableEvaluator(Factory factory, std::shared_ptr<SlotStats> stats)
    : factory_(std::move(factory)), stats_(std::move(stats)), inner_(factory_()) {
  TESSERA_REQUIRE(inner_ != nullptr, "the evaluator factory made nothing");
}

std::shared_ptr<Evaluator> ReplaceableEvaluator::current() const {
  std::lock_guard g(mu_);
  return inner_;
}

std::string ReplaceableEvaluator::replace() {
  try {
    std::shared_ptr<Evaluator> fresh = factory_();
    TESSERA_REQUIRE(fresh != nullptr, "the evaluator factory made nothing");
    {
      std::lock_guard g(mu_);
      inner_ = std::move(fresh);
    }
    ++stats_->replacements;
    return {};
  } catch (const std::exception& e) {
    return std::string("; a fresh evaluator could not be made: ") + e.what();
  }
}

EvalResult ReplaceableEvaluator::evaluate(const Candidate& candidate, const Task& task, const EvalOptions& options) {
  const auto inner = current();
  const long long t0 = steady_ns();
  stats_->busy_since_ns = t0;
  std::string death;
  EvalResult r;
  try {
    r = inner->evaluate(candidate, task, options);
    if (kill_.exchange(false)) throw WorkerKilled();
  } catch (const std::exception& e) {
    death = e.what();
  }
  stats_->busy_ns += steady_ns() - t0;
  stats_->busy_since_ns = 0;
  if (death.empty()) return r;
  spdlog::warn("evaluator died ({}); replacing it", death);
  r = make_failure(Status::infra_error, "the evaluator died: " + death + replace(), task);
  r.candidate_name = candidate.name;
  r.fault = "infrastructure";
  return r;
}

void ReplaceableEvaluator::precompile(const std::vector<Candidate>& candidates) { current()->precompile(candidates); }
void ReplaceableEvaluator::compile_ahead(const Candidate& candidate) { current()->compile_ahead(candidate); }
std::string ReplaceableEvaluator::describe() const { return current()->describe(); }
DeviceSummary ReplaceableEvaluator::device() const { return current()->device(); }
void ReplaceableEvaluator::start() { current()->start(); }
void ReplaceableEvaluator::kill() { kill_ = true; }

}  // namespace tessera::serve::detail
