// The dispatch half of the engine: novelty checks in step order, and the
// evaluation workers (one per evaluator) with borderline re-measurement.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/fs.hpp"
#include "core/thread_pool.hpp"
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
      note_failure(step, s);
      finish_without_eval(-1);
      continue;
    }
    permanent_in_a_row_.at(s.plan.proposer) = 0;
    const std::string key = novelty_key(s.proposal->candidate);
    if (auto d = novelty_.find(key); d != novelty_.end()) {
      s.rejects.push_back({{"key", key}, {"duplicate_of", d->second}, {"attempt", s.attempt}});
      if (s.attempt < kMaxNoveltyRetries) {
        reask_after_repeat(step, s, d->second);
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

// Failures that no retry can fix are shown at once, and a proposer that keeps
// failing that way stops the run; a budget that refuses a call stops it too.
// Called in step order, for live steps only: a resumed run starts counting
// afresh (the user may have fixed the key in between).
void SearchEngine::note_failure(long long step, const Slot& s) {
  const agent::Proposal& p = *s.proposal;
  int& in_a_row = permanent_in_a_row_.at(s.plan.proposer);
  if (p.failure == agent::ProposalFailure::budget) {
    const std::string limit = p.proposer_info.value("budget_limit", std::string("usd"));
    if (!stop_reason_) {
      say(fmt::format("step {}: the LLM budget refused the next call: {}; finishing the steps in flight", step, p.error));
      stop_reason_ = "budget_" + limit;
    }
    return;
  }
  if (p.failure != agent::ProposalFailure::permanent) {
    in_a_row = 0;
    return;
  }
  ++in_a_row;
  std::string& last = last_permanent_error_.at(s.plan.proposer);
  if (p.error == last)
    say(fmt::format("step {}: proposer '{}' failed again the same way", step, s.plan.proposer_name));
  else
    say(fmt::format("step {}: proposer '{}' failed and no retry can fix it: {}", step, s.plan.proposer_name, p.error));
  last = p.error;
  if (in_a_row >= kMaxPermanentFailuresInARow && !stop_reason_) {
    say(fmt::format("stopping: {} proposals of '{}' in a row failed this way; fix the endpoint (docs/agent.md)",
                    in_a_row, s.plan.proposer_name));
    stop_reason_ = "proposer_errors";
  }
}

// Asks the proposer again after it repeated the kernel of `repeated_step`:
// the prompt names the step, the proposer warms its sampling (context.reask),
// and from kReaskRewriteFrom on the strategy becomes `rewrite` where the
// proposer has it. Deterministic in the attempt number, so a resume agrees.
void SearchEngine::reask_after_repeat(long long step, Slot& s, long long repeated_step) {
  add_usage(s.usage, s.proposal->usage);
  // The tile proposer skips configs it finds in the history.
  s.context.history.push_back(
      {s.proposal->candidate,
       make_failure(Status::rejected, "duplicate of step " + std::to_string(repeated_step) + ": not evaluated again",
                    s.context.task)});
  s.proposal.reset();
  ++s.attempt;
  s.context.repeated_step = repeated_step;
  s.context.reask = s.attempt;
  if (s.attempt >= kReaskRewriteFrom) {
    const ProposerSlot& slot = slots_info_.at(s.plan.proposer);
    for (const auto& arm : slot.strategies.empty() ? default_strategies(slot.name) : slot.strategies)
      if (arm.name == "rewrite") s.context.strategy = arm.name;
  }
  submit_proposal(step);
}

// Uses the evaluator it is given, never pool_: the destructor's pool_.reset()
// nulls the pointer before the pool joins the job that is still running here.
void SearchEngine::run_evaluation(Evaluator& ev, int e, StepOutcome o, Task task, Plan plan) {
  EvalOptions opts = options_.eval;
  opts.compile_only = opts.compile_only || config_.compile_only;
  opts.counter_set = config_.counter_set;
  // reuse_baselines: the task's first timed evaluation on this evaluator
  // (one GPU) times them, then its kernel alone; once one has, the rest on it
  // borrow its measurement, so every kernel of the task is timed alone. Per
  // evaluator, not per GPU model: two GPUs of one name still differ by their
  // clocks, which interleaved baselines cancel.
  const bool reuse = config_.reuse_baselines && opts.baselines && !opts.compile_only;
  const std::string lent_key = task.id() + "#" + std::to_string(e);
  std::optional<BaselineRecord> lent;
  if (reuse) {
    std::lock_guard g(baselines_mu_);
    if (const auto it = lent_baselines_.find(lent_key); it != lent_baselines_.end()) lent = it->second;
  }
  auto alone = [&]() -> EvalResult {
    EvalOptions without = opts;
    without.baselines = false;
    EvalResult r = evaluate_guarded(ev, o.candidate, task, without);
    lend_baselines(r, *lent);
    return r;
  };
  auto evaluate = [&]() -> EvalResult {
    if (lent) return alone();
    EvalResult beside = evaluate_guarded(ev, o.candidate, task, opts);
    const auto record = reuse ? baseline_record_of(beside) : std::nullopt;
    if (!record) return beside;
    {
      std::lock_guard g(baselines_mu_);
      lent = lent_baselines_.emplace(lent_key, *record).first->second;  // the first to finish stays
    }
    // Then this candidate again, alone, as the task's later evaluations time
    // theirs. Beside the baselines a kernel's cold time reads slower (one
    // H200, 61 LLM shapes: a task's first config 0.15% slower in median than
    // the same config timed alone by the tuner, and a confirmation 0.26%
    // slower than its config's alone time), which handicapped each task's
    // first config, the model's first pick, against the rest. A second run
    // the machine failed leaves the first standing, as interleaved.
    EvalResult r = alone();
    if (r.status != Status::infra_error) return r;
    lent.reset();
    return beside;
  };
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
  if (has_timing(o.result) && opts.baselines) {
    o.baseline_protocol = lent ? "reused" : "interleaved";
    if (lent) o.baseline_source = lent->to_json();
  }
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
