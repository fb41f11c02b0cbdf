// The dispatch half of the engine: novelty checks in step order, and the
// evaluation workers (one per evaluator) with borderline re-measurement.
#include <spdlog/spdlog.h>

#include "harness/core/fs.hpp"
#include "harness/detail/thread_pool.hpp"
#include "search/engine.hpp"
#include "search/novelty.hpp"

namespace tessera::search {

namespace {

StepOutcome outcome_base(long long step, const agent::Proposal& p, std::uint64_t seed) {
  StepOutcome o;
  o.step = step;
  o.proposal_ok = p.ok;
  o.proposal_error = p.error;
  o.proposer = p.proposer;
  o.proposer_info = p.proposer_info;
  o.messages = p.messages;
  o.action = {{"kind", p.action_kind}, {"content", p.action}};
  o.seed = seed;
  if (p.ok) o.candidate = p.candidate;
  return o;
}

void add_usage(agent::Usage& total, const agent::Usage& u) {
  total.prompt_tokens += u.prompt_tokens;
  total.completion_tokens += u.completion_tokens;
  total.reasoning_tokens += u.reasoning_tokens;
  total.cost_usd += u.cost_usd;
  total.latency_ms += u.latency_ms;
}

}  // namespace

bool SearchEngine::dispatch_ready() {
  bool moved = false;
  for (;;) {
    auto it = slots_.find(next_dispatch_);
    if (it == slots_.end()) break;
    Slot& s = it->second;
    const long long step = next_dispatch_;
    if (s.outcome) {  // replayed from the run directory
      if (s.outcome->evaluated && !s.outcome->novelty_key.empty()) novelty_.emplace(s.outcome->novelty_key, step);
      ++next_dispatch_;
      moved = true;
      continue;
    }
    if (!s.proposal) break;
    const std::uint64_t seed = attempt_seed(s.plan.seed, s.attempt);
    auto finish_without_eval = [&](long long duplicate_of) {
      add_usage(s.usage, s.proposal->usage);
      StepOutcome o = outcome_base(step, *s.proposal, seed);
      o.usage = s.usage;
      o.novelty_rejects = s.rejects;
      o.duplicate_of = duplicate_of;
      o.timestamps = s.timestamps;
      s.outcome = std::move(o);
      ++next_dispatch_;
      moved = true;
    };
    if (!s.proposal->ok) {
      finish_without_eval(-1);
      continue;
    }
    const std::string key = novelty_key(s.proposal->candidate);
    if (auto d = novelty_.find(key); d != novelty_.end()) {
      s.rejects.push_back({{"key", key}, {"duplicate_of", d->second}, {"attempt", s.attempt}});
      if (s.attempt < kMaxNoveltyRetries) {
        add_usage(s.usage, s.proposal->usage);
        // Show the proposer what it repeated, so the next attempt can avoid it
        // (the tile proposer skips configs in the history).
        s.context.history.push_back(
            {s.proposal->candidate,
             make_failure(Status::rejected,
                          "duplicate of step " + std::to_string(d->second) + ": not evaluated again",
                          s.context.task)});
        s.proposal.reset();
        ++s.attempt;
        submit_proposal(step);
        moved = true;
        break;
      }
      finish_without_eval(d->second);
      continue;
    }
    int free = -1;
    for (std::size_t e = 0; e < busy_.size(); ++e)
      if (!busy_[e]) {
        free = int(e);
        break;
      }
    if (free < 0) break;
    add_usage(s.usage, s.proposal->usage);
    StepOutcome o = outcome_base(step, *s.proposal, seed);
    o.usage = s.usage;
    o.novelty_key = key;
    o.novelty_rejects = s.rejects;
    o.timestamps = s.timestamps;
    o.timestamps["dispatched"] = utc_now_iso();
    novelty_.emplace(key, step);
    busy_[free] = true;
    s.dispatched = true;
    const Task task = state_->task(s.plan.task_index).task;
    pool_->submit_to(std::size_t(free), [this, free, o = std::move(o), task, plan = s.plan](Evaluator& ev, std::size_t) mutable {
      run_evaluation(ev, free, std::move(o), task, plan);
    });
    ++next_dispatch_;
    moved = true;
  }
  return moved;
}

// Uses the evaluator it is given, never pool_: the destructor's pool_.reset()
// nulls the pointer before the pool joins the job that is still running here.
void SearchEngine::run_evaluation(Evaluator& ev, int e, StepOutcome o, Task task, Plan plan) {
  EvalOptions opts = options_.eval;
  opts.compile_only = opts.compile_only || config_.compile_only;
  opts.counter_set = config_.counter_set;
  auto evaluate = [&]() -> EvalResult { return evaluate_guarded(ev, o.candidate, task, opts); };
  const AcceptanceRule rule = config_.acceptance();
  // Incumbents the candidate may beat: its parent and the task's best when planned.
  std::vector<const EvalResult*> incumbents;
  for (const auto& i : {plan.parent_ind, plan.reference_ind})
    if (i && has_timing(i->result)) incumbents.push_back(&i->result);
  // The verdict recorded is the one against the parent (else the best when planned).
  auto verdict = [&](auto&& cmp) {
    return incumbents.empty() ? (has_timing(o.result) ? Verdict::better : Verdict::not_better)
                              : cmp(*incumbents.front());
  };

  o.result = evaluate();
  o.evaluated = true;
  bool borderline = false;
  if (rule.noise_aware && has_timing(o.result))
    for (const auto* inc : incumbents) borderline |= compare(o.result, *inc, rule) == Verdict::borderline;
  o.verdict_first = to_string(verdict([&](const EvalResult& inc) { return compare(o.result, inc, rule); }));
  if (borderline) {
    const EvalResult first = o.result;
    const EvalResult second = evaluate();
    o.first = first;
    if (has_timing(second)) {
      o.result = merge_remeasurement(first, second);
      o.verdict_final = to_string(
          verdict([&](const EvalResult& inc) { return compare_remeasured(first, second, inc, rule); }));
    } else {
      o.result = second;  // the re-measurement failed: that is what counts
      o.verdict_final = to_string(Verdict::not_better);
    }
  } else {
    o.verdict_final = o.verdict_first;
  }
  o.evaluator = e;
  o.device = ev.device().name;
  o.timestamps["evaluated"] = utc_now_iso();

  nlohmann::json line = outcome_json(o);
  line["plan"] = plan_json(plan);
  try {
    std::lock_guard g(file_mu_);
    append_line_durable(outcomes_path(options_.run_dir), line.dump());
  } catch (const std::exception& ex) {
    spdlog::error("could not record the outcome of step {}: {}", o.step, ex.what());
  }
  {
    std::lock_guard lk(mu_);
    auto it = slots_.find(o.step);
    if (it != slots_.end()) it->second.outcome = std::move(o);
    busy_[e] = false;
    ++events_;
  }
  cv_.notify_all();
}

}  // namespace tessera::search
