#include "harness/pool.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "core/thread_pool.hpp"

namespace tessera {

namespace {
// Compile children at once ahead of a batch, one per core up to this: a
// compile is one thread, and N GPUs need N compiles per evaluation time (8
// held 4 H200s at 2048³ to 2.1× one; issue 37).
constexpr unsigned kMaxCompileAhead = 64;

// How long the job now running on this thread waited in the pool's queue, in
// ms; negative off a pool's thread. Set around each job by the evaluator's
// thread and read by evaluate_guarded, the one call through which every job
// evaluates (evaluate_async, evaluate_batch, the judge's trials), so a
// result says how long it queued whichever path submitted it, and the job
// interface stays as it is.
thread_local double t_queued_ms = -1;

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

EvalResult evaluate_guarded(Evaluator& evaluator, const Candidate& candidate, const Task& task,
                            const EvalOptions& options) {
  EvalResult r;
  try {
    r = evaluator.evaluate(candidate, task, options);
  } catch (const std::exception& e) {
    r = make_failure(Status::infra_error, std::string("evaluator threw: ") + e.what(), task);
  }
  // Outside wall_ms: the evaluator did not know of it. A second evaluation
  // in the same job (a re-measurement) did not queue again.
  if (t_queued_ms >= 0) r.phase_ms["queue"] = std::exchange(t_queued_ms, 0.0);
  return r;
}

EvaluatorPool::EvaluatorPool(std::vector<std::unique_ptr<Evaluator>> evaluators)
    : evaluators_(std::move(evaluators)), own_(evaluators_.size()) {
  if (evaluators_.empty()) fail_bad_input("an evaluator pool needs at least one evaluator");
  for (std::size_t i = 0; i < evaluators_.size(); ++i) threads_.emplace_back([this, i] { loop(i); });
}

EvaluatorPool::~EvaluatorPool() {
  {
    std::lock_guard g(mu_);
    stopping_ = true;
    shared_.clear();
    for (auto& q : own_) q.clear();
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void EvaluatorPool::loop(std::size_t index) {
  for (;;) {
    Queued next;
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return stopping_ || !own_[index].empty() || !shared_.empty(); });
      if (stopping_) return;
      // Work bound to this evaluator first: it may be the second half of a
      // measurement that must run on the same GPU.
      auto& q = !own_[index].empty() ? own_[index] : shared_;
      next = std::move(q.front());
      q.pop_front();
    }
    t_queued_ms = ms_since(next.at);
    try {
      next.job(*evaluators_[index], index);
    } catch (...) {
      // A job reports its own failures; nothing may end this thread.
    }
    t_queued_ms = -1;
  }
}

void EvaluatorPool::submit(Job job) {
  {
    std::lock_guard g(mu_);
    shared_.push_back({std::move(job), std::chrono::steady_clock::now()});
  }
  cv_.notify_all();
}

void EvaluatorPool::submit_to(std::size_t index, Job job) {
  if (index >= own_.size()) throw Error("submit_to: no evaluator " + std::to_string(index));
  {
    std::lock_guard g(mu_);
    own_[index].push_back({std::move(job), std::chrono::steady_clock::now()});
  }
  cv_.notify_all();
}

std::future<EvalResult> EvaluatorPool::evaluate_async(EvalRequest request, EvalOptions options) {
  auto promise = std::make_shared<std::promise<EvalResult>>();
  auto future = promise->get_future();
  submit([promise, request = std::move(request), options](Evaluator& ev, std::size_t) {
    promise->set_value(evaluate_guarded(ev, request.candidate, request.task, options));
  });
  return future;
}

CompileAhead::CompileAhead(Evaluator& evaluator, std::vector<Candidate> candidates)
    : candidates_(std::move(candidates)) {
  if (candidates_.empty()) return;
  const std::size_t threads =
      std::min<std::size_t>({kMaxCompileAhead, std::max(1u, std::thread::hardware_concurrency()), candidates_.size()});
  for (std::size_t t = 0; t < threads; ++t) {
    threads_.emplace_back([this, &evaluator] {
      for (std::size_t i = next_++; i < candidates_.size() && !abandon_; i = next_++)
        evaluator.compile_ahead(candidates_[i]);
    });
  }
}

CompileAhead::~CompileAhead() {
  abandon_ = true;
  for (auto& t : threads_) t.join();
}

std::vector<EvalResult> EvaluatorPool::evaluate_batch(const std::vector<EvalRequest>& batch,
                                                      const EvalOptions& options, const BatchProgress& progress) {
  std::vector<EvalResult> results(batch.size());
  if (batch.empty()) return results;
  std::vector<Candidate> candidates;
  for (const auto& r : batch) candidates.push_back(r.candidate);
  CompileAhead ahead(*evaluators_.front(), std::move(candidates));
  // The count the waiter watches, shared with the jobs so that it outlives
  // this call: a job still inside its last lock when the waiter returns must
  // not unlock a mutex of a stack frame that is gone (a hang seen in CI: an
  // evaluator's thread left blocked on it, and the pool's destructor joining
  // that thread forever).
  struct Done {
    std::mutex mu;
    std::condition_variable cv;
    std::size_t count = 0;
  };
  const auto done = std::make_shared<Done>();
  for (std::size_t i = 0; i < batch.size(); ++i) {
    submit([&, done, i](Evaluator& ev, std::size_t) {
      EvalResult r = evaluate_guarded(ev, batch[i].candidate, batch[i].task, options);
      std::lock_guard g(done->mu);
      results[i] = std::move(r);
      // Under the lock, so that the callback (a progress bar) is never called
      // from two evaluators at once, counts arrive in order, and the waiter
      // cannot return, taking `progress` and `results` with it, before the
      // last item's callback has ended.
      ++done->count;
      if (progress) {
        try {
          progress(done->count, batch.size());
        } catch (...) {
          // A failing progress display must not lose the batch's results.
        }
      }
      done->cv.notify_all();
    });
  }
  std::unique_lock lk(done->mu);
  done->cv.wait(lk, [&] { return done->count == batch.size(); });
  return results;
}

void EvaluatorPool::start_all() {
  std::vector<std::thread> starters;
  for (auto& e : evaluators_) starters.emplace_back([&e] { e->start(); });
  for (auto& t : starters) t.join();
}

std::unique_ptr<EvaluatorPool> make_pool(const SandboxOptions& base, const std::vector<int>& devices) {
  if (devices.empty()) fail_bad_input("an evaluator pool needs at least one device");
  std::vector<std::unique_ptr<Evaluator>> evs;
  for (int d : devices) {
    SandboxOptions o = base;
    o.device = d;
    evs.push_back(make_evaluator(o));
  }
  return std::make_unique<EvaluatorPool>(std::move(evs));
}

}  // namespace tessera
