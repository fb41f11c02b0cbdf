#pragma once
// An evaluator that stops evaluating at a deadline, so that bench suite's
// --max-minutes bounds the shape in flight as well as the gaps between
// shapes: one search:24 shape of the held-out grid (16384x12288x16384, search
// and tune of 24 each) ran past nine minutes on an H200, where the limit was
// six. Until the deadline every call passes through. After it, evaluate()
// answers at once with an infra_error and compiles nothing, so a search or a
// tune in flight runs out within one evaluation; cut() then says so, and the
// suite records nothing for that shape (a later run measures it again).
#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>

#include "harness/evaluator.hpp"

namespace tessera::bench {

class DeadlineEvaluator final : public Evaluator {
public:
  using Clock = std::chrono::steady_clock;

  explicit DeadlineEvaluator(Evaluator& inner) : inner_(inner) {}

  // From now on, evaluations past `at` are refused. None before it is set.
  void set_deadline(Clock::time_point at);
  // An evaluation was refused since the deadline passed.
  bool cut() const { return cut_; }

  EvalResult evaluate(const Candidate& candidate, const Task& task, const EvalOptions& options) override;
  void precompile(const std::vector<Candidate>& candidates) override;
  void compile_ahead(const Candidate& candidate) override;
  std::string describe() const override { return inner_.describe(); }
  DeviceSummary device() const override { return inner_.device(); }
  void start() override { inner_.start(); }

private:
  bool passed() const;

  Evaluator& inner_;
  mutable std::mutex mu_;  // the search compiles ahead on another thread
  std::optional<Clock::time_point> deadline_;
  std::atomic<bool> cut_{false};
};

}  // namespace tessera::bench
