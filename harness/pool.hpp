#pragma once
// One evaluator per GPU, each driven by a thread of its own: a GPU never runs
// two evaluations at once (timing is never shared), and N GPUs run N
// evaluations side by side. The search loops, the RL environment and the
// HTTP service all evaluate through a pool.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "harness/evaluator.hpp"
#include "harness/sandbox.hpp"

namespace tessera {

struct EvalRequest {
  Candidate candidate;
  Task task;
};

// Called after each finished item of a batch: (done, total), one call at a
// time and counts in order (whichever evaluator finished it); the batch
// returns after its last call has ended. An exception from it is ignored.
using BatchProgress = std::function<void(std::size_t, std::size_t)>;

// Compiles a batch's candidates into the compile cache ahead of their
// evaluations, in order, on a few CPU threads, while the GPUs measure: an
// evaluation whose compile has not finished compiles on its own (the cache
// makes the later of the two a hit). Destruction stops it (the compiles
// already running finish). Used by EvaluatorPool::evaluate_batch and by the
// environment's judge, whose evaluations go through the pool one by one.
class CompileAhead {
public:
  CompileAhead(Evaluator& evaluator, std::vector<Candidate> candidates);
  ~CompileAhead();
  CompileAhead(const CompileAhead&) = delete;
  CompileAhead& operator=(const CompileAhead&) = delete;

private:
  std::vector<Candidate> candidates_;
  std::atomic<std::size_t> next_{0};
  std::atomic<bool> abandon_{false};
  std::vector<std::thread> threads_;  // declared last: joined first
};

class EvaluatorPool {
public:
  // Runs on the thread of evaluator `index`; `evaluator` is that evaluator.
  using Job = std::function<void(Evaluator& evaluator, std::size_t index)>;

  explicit EvaluatorPool(std::vector<std::unique_ptr<Evaluator>> evaluators);
  // Destruction drops queued jobs that have not started and waits for the
  // running ones.
  ~EvaluatorPool();
  EvaluatorPool(const EvaluatorPool&) = delete;
  EvaluatorPool& operator=(const EvaluatorPool&) = delete;

  std::size_t size() const { return evaluators_.size(); }
  Evaluator& evaluator(std::size_t index) { return *evaluators_.at(index); }
  const Evaluator& evaluator(std::size_t index) const { return *evaluators_.at(index); }

  // Runs `job` on whichever evaluator is free first (FIFO while all are busy).
  void submit(Job job);
  // Runs `job` on evaluator `index` (after the jobs already queued for it).
  void submit_to(std::size_t index, Job job);

  // One evaluation on the first free evaluator. Never throws for a failure of
  // the evaluation: an exception from the evaluator becomes `infra_error`.
  // Every result evaluated on a pool's thread (evaluate_guarded) carries
  // phase_ms["queue"]: milliseconds from submit until an evaluator took it.
  std::future<EvalResult> evaluate_async(EvalRequest request, EvalOptions options);
  // Every request, spread over all evaluators; results in request order. The
  // batch's compiles run ahead on the CPUs while the GPUs measure.
  std::vector<EvalResult> evaluate_batch(const std::vector<EvalRequest>& batch, const EvalOptions& options,
                                         const BatchProgress& progress = {});

  // Starts every evaluator's worker (so device() is known before the first job).
  void start_all();

private:
  struct Queued {
    Job job;
    std::chrono::steady_clock::time_point at;  // submitted
  };
  void loop(std::size_t index);

  std::vector<std::unique_ptr<Evaluator>> evaluators_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Queued> shared_;                    // any evaluator
  std::vector<std::deque<Queued>> own_;          // one evaluator
  bool stopping_ = false;
  std::vector<std::thread> threads_;             // declared last: joined first
};

// One sandboxed evaluator per device ordinal in `devices` (each gets its own
// worker process); `base.device` is ignored.
std::unique_ptr<EvaluatorPool> make_pool(const SandboxOptions& base, const std::vector<int>& devices);

// Runs `evaluator.evaluate` and turns an escaping exception into an
// `infra_error` result (a tessera bug must not take a batch down with it).
// On a pool's thread it also records the job's wait as phase_ms["queue"].
EvalResult evaluate_guarded(Evaluator& evaluator, const Candidate& candidate, const Task& task,
                            const EvalOptions& options);

}  // namespace tessera
