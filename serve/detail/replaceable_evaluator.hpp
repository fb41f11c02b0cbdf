#pragma once
// One evaluator slot of the service (one GPU): the evaluator inside it is
// made by a factory and replaced when it dies. "Dies" means an exception out
// of evaluate(): the evaluator object itself is broken. The evaluation it was
// running is answered as `infra_error`, which the judge retries like any
// other (env/judge.hpp: retries live there alone); the retry finds a fresh
// evaluator here.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>

#include "harness/evaluator.hpp"

namespace tessera::serve::detail {

// Shared with the metrics: what the slots did, readable while they run.
struct SlotStats {
  std::atomic<long long> busy_ns{0};  // inside evaluate(), finished evaluations
  std::atomic<long long> busy_since_ns{0};  // steady-clock ns when the current evaluation began; 0 when idle
  std::atomic<long long> replacements{0};
};

class ReplaceableEvaluator final : public Evaluator {
public:
  using Factory = std::function<std::unique_ptr<Evaluator>()>;
  ReplaceableEvaluator(Factory factory, std::shared_ptr<SlotStats> stats);

  EvalResult evaluate(const Candidate& candidate, const Task& task, const EvalOptions& options) override;
  void precompile(const std::vector<Candidate>& candidates) override;
  void compile_ahead(const Candidate& candidate) override;
  std::string describe() const override;
  DeviceSummary device() const override;
  void start() override;

  // Fault injection: the evaluator dies during its current evaluation (or
  // the next one when idle), as a worker killed from outside would.
  void kill();

private:
  std::shared_ptr<Evaluator> current() const;
  // A fresh evaluator in place of the dead one; what went wrong if none could be made.
  std::string replace();

  Factory factory_;
  std::shared_ptr<SlotStats> stats_;
  mutable std::mutex mu_;
  std::shared_ptr<Evaluator> inner_;  // guarded by mu_; shared so compile_ahead may outlive a replacement
  std::atomic<bool> kill_{false};
};

long long steady_ns();

}  // namespace tessera::serve::detail
