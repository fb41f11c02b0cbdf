#pragma once
// The service's evaluators: one slot per GPU (or per compile-only worker),
// each a replaceable evaluator, all behind one EvaluatorPool so that a GPU
// never runs two evaluations at once, whichever endpoint asked. (Not to be
// confused with search/slots.hpp, the search's proposer slots.)
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/pool.hpp"
#include "harness/sandbox.hpp"

namespace tessera::serve {

namespace detail {
class ReplaceableEvaluator;
struct SlotStats;
}  // namespace detail

using EvaluatorFactory = std::function<std::unique_ptr<Evaluator>()>;

class EvaluatorSlots {
public:
  explicit EvaluatorSlots(const std::vector<EvaluatorFactory>& factories);
  ~EvaluatorSlots();
  EvaluatorSlots(const EvaluatorSlots&) = delete;
  EvaluatorSlots& operator=(const EvaluatorSlots&) = delete;

  const std::shared_ptr<EvaluatorPool>& pool() const { return pool_; }
  std::size_t size() const { return stats_.size(); }
  // Fault injection: slot `index`'s evaluator dies during its current (or
  // next) evaluation. Throws bad_input for a slot that does not exist.
  void kill(std::size_t index);
  // Time slot `index` spent evaluating, over the time since the slots began.
  double busy_fraction(std::size_t index) const;
  double busy_seconds(std::size_t index) const;
  long long replacements() const;  // evaluators replaced after dying
  std::size_t running() const;     // evaluations in progress now

private:
  std::vector<std::shared_ptr<detail::SlotStats>> stats_;
  std::vector<detail::ReplaceableEvaluator*> evaluators_;  // owned by pool_
  std::shared_ptr<EvaluatorPool> pool_;
  std::chrono::steady_clock::time_point started_;
};

// --gpus: "all" (every one of `available` GPUs; one slot when there is no
// GPU, which then runs compile-only) or ordinals "0,2". bad_input otherwise.
std::vector<int> parse_gpu_list(const std::string& spec, int available);

// One sandboxed evaluator per device in `devices` (compile-only mode: one
// compile-only evaluator per entry, whatever the number). Their sandboxes do
// not retry an infra_error: the judge does (env::judging_sandbox).
std::vector<EvaluatorFactory> sandbox_factories(const SandboxOptions& base, const std::vector<int>& devices);

}  // namespace tessera::serve
