#include "env/detail/trial.hpp"

#include <memory>
#include <utility>

#include "env/detail/baseline_cache.hpp"

namespace tessera::env::detail {

namespace {

nlohmann::json attempt_record(const EvalResult& r) {
  return {{"status", to_string(r.status)}, {"reason", r.reason}, {"wall_ms", r.wall_ms}};
}

bool timed_in_full(const EvalResult& r) { return r.mode == "full" && r.status == Status::ok; }

class Trial : public std::enable_shared_from_this<Trial> {
public:
  Trial(EvaluatorPool& pool, Candidate candidate, Task task, TrialRules rules, std::function<bool()> begin,
        std::function<void(std::optional<TrialOutcome>)> done)
      : pool_(pool),
        candidate_(std::move(candidate)),
        task_(std::move(task)),
        rules_(std::move(rules)),
        begin_(std::move(begin)),
        done_(std::move(done)) {
    if (rules_.reuse_baselines && rules_.eval.baselines) {
      lent_ = BaselineCache::shared().find(task_);
      with_baselines_ = !lent_.has_value();
    }
  }

  // Onto the pool's shared queue: the first evaluator free takes it.
  void submit() {
    pool_.submit([self = shared_from_this()](Evaluator& ev, std::size_t) { self->run(ev); });
  }

private:
  void run(Evaluator& ev) {
    bool over = true;
    try {
      over = attempt(ev);
    } catch (const std::exception& e) {
      out_.result = make_failure(Status::infra_error, std::string("the judge failed: ") + e.what(), task_);
      out_.attempts.push_back(attempt_record(out_.result));
    }
    if (!over) return submit();
    if (dropped_) return done_(std::nullopt);
    done_(std::move(out_));
  }

  // One run on `ev`; true when the trial is over.
  bool attempt(Evaluator& ev) {
    if (begin_ && !std::exchange(begin_, nullptr)()) {
      dropped_ = true;
      return true;
    }
    EvalOptions o = rules_.eval;
    o.baselines = rules_.eval.baselines && with_baselines_;
    EvalResult r = evaluate_guarded(ev, candidate_, task_, o);
    out_.attempts.push_back(attempt_record(r));
    if (r.status == Status::infra_error) {
      if (infra_retries_used_ < rules_.infra_retries) {
        ++infra_retries_used_;
        return false;
      }
      return finish(std::move(r));
    }
    // The pool's GPUs may differ: a measurement lent from another kind of
    // GPU is replaced by one taken in the same run.
    if (!with_baselines_ && r.mode == "full" && r.device.name != lent_->device) {
      out_.attempts.back()["rerun"] = "the reusable baselines were measured on " + lent_->device;
      with_baselines_ = true;
      return false;
    }
    if (!with_baselines_) lend_baselines(r, *lent_);
    else if (rules_.reuse_baselines) return lend_own(ev, std::move(r));
    return finish(std::move(r));
  }

  // The task's first measurement of its baselines, kept for its later
  // evaluations; then this kernel again, alone, as those will time theirs.
  // Beside the baselines a kernel's cold time reads slower (0.15% in median on
  // one H200, docs/search.md), which would cost the first kernel of each task
  // against the rest of its group. An alone run the machine failed leaves the
  // interleaved one standing.
  bool lend_own(Evaluator& ev, EvalResult beside) {
    BaselineCache::shared().remember(beside);
    const auto kept = BaselineCache::shared().find(task_);
    if (!timed_in_full(beside) || !kept || kept->device != beside.device.name) return finish(std::move(beside));
    EvalOptions o = rules_.eval;
    o.baselines = false;
    EvalResult alone = evaluate_guarded(ev, candidate_, task_, o);
    out_.attempts.push_back(attempt_record(alone));
    out_.attempts.back()["rerun"] = "timed again without the baselines beside it, as the task's later evaluations are";
    if (alone.status == Status::infra_error) return finish(std::move(beside));
    lent_ = kept;
    with_baselines_ = false;
    lend_baselines(alone, *lent_);
    return finish(std::move(alone));
  }

  bool finish(EvalResult r) {
    if (timed_in_full(r) && rules_.eval.baselines) {
      out_.baseline_protocol = with_baselines_ ? "interleaved" : "reused";
      if (!with_baselines_) out_.baseline_source = lent_->to_json();
    }
    out_.result = std::move(r);
    return true;
  }

  EvaluatorPool& pool_;
  const Candidate candidate_;
  const Task task_;
  const TrialRules rules_;
  std::function<bool()> begin_;  // emptied once run
  std::function<void(std::optional<TrialOutcome>)> done_;
  bool with_baselines_ = true;
  std::optional<BaselineRecord> lent_;
  int infra_retries_used_ = 0;
  bool dropped_ = false;
  TrialOutcome out_;
};

}  // namespace

void run_trial(EvaluatorPool& pool, Candidate candidate, Task task, TrialRules rules, std::function<bool()> begin,
               std::function<void(std::optional<TrialOutcome>)> done) {
  std::make_shared<Trial>(pool, std::move(candidate), std::move(task), std::move(rules), std::move(begin),
                          std::move(done))
      ->submit();
}

}  // namespace tessera::env::detail
