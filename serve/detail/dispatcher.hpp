#pragma once
// One stateless evaluation, start to answer: the action is parsed and its
// kernel compiled on the CPU pool, then it waits for a free evaluator (one
// per GPU), whose compile is then a cache hit. An evaluation whose deadline
// passes before an evaluator takes it is not run at all.
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "core/thread_pool.hpp"
#include "serve/backend.hpp"
#include "serve/detail/record.hpp"

namespace tessera::serve::detail {

struct EvalItem {
  Task task;
  std::string action;
  EvalOptions options;
};

class Dispatcher {
public:
  using Clock = std::chrono::steady_clock;
  using Done = std::function<void(EvalRecord)>;

  Dispatcher(const Backend& backend, env::ActionSpace actions, int compile_threads);

  // `done` is called exactly once, on a worker thread; it must not throw.
  void run(EvalItem item, Clock::time_point deadline, Done done);

private:
  // The answer when there is one already (a format failure, a deadline
  // passed); nullopt when the evaluation went on to the evaluators.
  std::optional<EvalRecord> prepare(const EvalItem& item, Clock::time_point admitted, Clock::time_point deadline,
                                    const Done& done);
  EvalRecord evaluate(Evaluator& ev, const EvalItem& item, const Candidate& candidate, EvalRecord rec,
                      Clock::time_point admitted, Clock::time_point deadline);

  const Backend& backend_;
  env::ActionSpace actions_;
  tessera::ThreadPool cpu_;  // parse + compile ahead
};

// The record of an evaluation that never ran because its deadline passed.
EvalRecord deadline_record(double waited_ms);

}  // namespace tessera::serve::detail
