#pragma once
// A scripted evaluator for the environment's CPU tests: the kernel source says
// what its evaluation returns, so a test reads as the episode it drives.
//   FAKE_SPEEDUP(x)      ok, cold median 100/x us against a 100 us baseline
//   FAKE_WRONG           wrong_answer
//   FAKE_COMPILE_ERROR   compile_error with a compiler log
//   FAKE_LONG_LOG        compile_error: one error under 400 lines of ptxas info
//   FAKE_INFRA           infra_error on every attempt
//   FAKE_INFRA_ONCE      infra_error on the first attempt of that source, ok after
//   FAKE_INFRA_TIMES(n)  infra_error on the first n attempts of that source, ok after
// anything else: ok at 0.5x.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "harness/pool.hpp"

namespace tessera::testing {

struct FakeLog {
  std::mutex mu;
  std::vector<bool> baselines_asked;  // EvalOptions::baselines of each call, in call order
  std::vector<bool> counters_asked;
  std::map<std::string, int> calls_by_source;
  std::atomic<int> calls{0};
};

class ScriptedEvaluator final : public Evaluator {
public:
  explicit ScriptedEvaluator(std::shared_ptr<FakeLog> log, std::string device = "FakeGPU")
      : log_(std::move(log)), device_(std::move(device)) {}
  EvalResult evaluate(const Candidate& c, const Task& t, const EvalOptions& o) override;
  std::string describe() const override { return "scripted"; }
  DeviceSummary device() const override;

private:
  std::shared_ptr<FakeLog> log_;
  std::string device_;
};

// A pool of `n` scripted evaluators sharing one log.
std::shared_ptr<EvaluatorPool> scripted_pool(const std::shared_ptr<FakeLog>& log, int n = 1,
                                             const std::string& device = "FakeGPU");

// A device-only kernel whose body carries `marker` (one of the above).
std::string fake_kernel(const std::string& marker);

}  // namespace tessera::testing
