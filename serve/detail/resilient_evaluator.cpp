#include "serve/detail/resilient_evaluator.hpp"

#include <stdexcept>

#include <spdlog/spdlog.h>

#include "core/error.hpp"

namespace tessera::serve::detail {

namespace {
constexpr int kAttempts = 2;  // the first try and one retry on a fresh evaluator

// A dying evaluator, as the slot sees it (fault injection).
struct WorkerKilled : std::runtime_error {
  WorkerKilled() : std::runtime_error("the worker was killed during the evaluation (fault injection)") {}
};
}  // namespace

long long steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

ResilientEvaluator::ResilientEvaluator(Factory factory, std::shared_ptr<SlotStats> stats)
    : factory_(std::move(factory)), stats_(std::move(stats)), inner_(factory_()) {
  TESSERA_REQUIRE(inner_ != nullptr, "the evaluator factory made nothing");
}

std::shared_ptr<Evaluator> ResilientEvaluator::current() const {
  std::lock_guard g(mu_);
  return inner_;
}

void ResilientEvaluator::replace() {
  std::shared_ptr<Evaluator> fresh = factory_();
  {
    std::lock_guard g(mu_);
    inner_ = std::move(fresh);
  }
  ++stats_->replacements;
}

EvalResult ResilientEvaluator::evaluate(const Candidate& candidate, const Task& task, const EvalOptions& options) {
  return evaluate_attempted(candidate, task, options).result;
}

Attempted ResilientEvaluator::evaluate_attempted(const Candidate& candidate, const Task& task,
                                                 const EvalOptions& options) {
  std::string last_death;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    const auto inner = current();
    const long long t0 = steady_ns();
    stats_->busy_since_ns = t0;
    try {
      EvalResult r = inner->evaluate(candidate, task, options);
      if (kill_.exchange(false)) throw WorkerKilled();
      stats_->busy_ns += steady_ns() - t0;
      stats_->busy_since_ns = 0;
      return {std::move(r), attempt};
    } catch (const std::exception& e) {
      stats_->busy_ns += steady_ns() - t0;
      stats_->busy_since_ns = 0;
      last_death = e.what();
      spdlog::warn("evaluator died ({}); replacing it{}", last_death, attempt < kAttempts ? " and retrying" : "");
      try {
        replace();
      } catch (const std::exception& f) {
        last_death += std::string("; a fresh evaluator could not be made: ") + f.what();
        break;
      }
    }
  }
  EvalResult r = make_failure(Status::infra_error, "the evaluator died on a fresh worker too: " + last_death, task);
  r.candidate_name = candidate.name;
  return {std::move(r), kAttempts};
}

void ResilientEvaluator::precompile(const std::vector<Candidate>& candidates) { current()->precompile(candidates); }
void ResilientEvaluator::compile_ahead(const Candidate& candidate) { current()->compile_ahead(candidate); }
std::string ResilientEvaluator::describe() const { return current()->describe(); }
DeviceSummary ResilientEvaluator::device() const { return current()->device(); }
void ResilientEvaluator::start() { current()->start(); }
void ResilientEvaluator::kill() { kill_ = true; }

}  // namespace tessera::serve::detail
