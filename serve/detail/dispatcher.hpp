#pragma once
// One stateless evaluation, start to answer: the action is parsed and its
// kernel compiled on the CPU pool, then the judge (env/judge.hpp) takes it:
// it waits for a free evaluator (one per GPU), whose compile is then a cache
// hit, is retried there if the machine failed, and is paid. An evaluation
// whose deadline passes before an evaluator takes it is not run at all.
#include <chrono>
#include <functional>
#include <string>

#include "core/thread_pool.hpp"
#include "serve/backend.hpp"
#include "serve/detail/record.hpp"

namespace tessera::serve::detail {

struct EvalItem {
  Task task;
  std::string action;
  env::EnvConfig config;  // the service's, with the request's evaluation options
};

class Dispatcher {
public:
  using Clock = std::chrono::steady_clock;
  using Done = std::function<void(EvalRecord)>;

  Dispatcher(const Backend& backend, int compile_threads);

  // `done` is called exactly once, on a worker thread; it must not throw.
  void run(EvalItem item, Clock::time_point deadline, Done done);

private:
  void prepare(EvalItem item, Clock::time_point admitted, Clock::time_point deadline, const Done& done);

  const Backend& backend_;
  tessera::ThreadPool cpu_;  // parse + compile ahead
};

// The record of an evaluation that never ran because its deadline passed.
EvalRecord deadline_record(double waited_ms);

}  // namespace tessera::serve::detail
