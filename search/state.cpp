#include "search/state.hpp"

#include <algorithm>

#include "core/reward.hpp"
#include "core/stats.hpp"

namespace tessera::search {

TaskState::TaskState(Task t, const SearchConfig& c)
    : task(std::move(t)), id(task.id()), population(c.islands, c.island_capacity) {}

void to_json(nlohmann::json& j, const Totals& t) {
  j = {{"steps", t.steps},
       {"evaluations", t.evaluations},
       {"remeasured", t.remeasured},
       {"duplicates", t.duplicates},
       {"repeated_proposals", t.repeated_proposals},
       {"proposal_failures", t.proposal_failures},
       {"noise_changed_decisions", t.noise_changed_decisions},
       {"tokens", t.tokens},
       {"cost_usd", t.cost_usd},
       {"by_status", t.by_status},
       {"best_speedup", t.best_speedup},
       {"best_peak_fraction", t.best_peak_fraction}};
}

SearchState::SearchState(const std::vector<Task>& tasks, const SearchConfig& config) : config_(config) {
  for (const auto& t : tasks) tasks_.emplace_back(t, config);
}

IndividualPtr SearchState::individual(long long id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

namespace {

bool valid_kernel(const StepOutcome& o) {
  return o.evaluated && (o.result.status == Status::ok || o.result.status == Status::compiled);
}

nlohmann::json decision(bool inserted, bool naive, Verdict v, long long replaced) {
  return {{"accepted", inserted}, {"naive_accept", naive}, {"verdict", to_string(v)}, {"replaced", replaced}};
}

}  // namespace

Applied SearchState::apply(const Plan& plan, const StepOutcome& o) {
  TaskState& ts = tasks_.at(plan.task_index);
  AcceptanceRule rule = config_.acceptance();
  if (o.first) rule.margin_scale = kRemeasuredMarginFactor;  // the mean of two measurements
  Applied out;
  ++ts.steps;
  ++totals_.steps;
  totals_.tokens += o.usage.prompt_tokens + o.usage.completion_tokens;
  totals_.cost_usd += o.usage.cost_usd;
  if (!o.proposal_ok) ++totals_.proposal_failures;
  if (o.duplicate_of >= 0) ++totals_.duplicates;
  totals_.repeated_proposals += (long long)o.novelty_rejects.size();
  if (o.evaluated) {
    const long long calls = o.first ? 2 : 1;
    ts.evaluations += calls;
    totals_.evaluations += calls;
    if (o.first) ++totals_.remeasured;
    ++totals_.by_status[to_string(o.result.status)];
  }

  IndividualPtr parent = plan.parent >= 0 ? individual(plan.parent) : nullptr;
  bool changed = false;
  if (o.evaluated) {
    auto ind = std::make_shared<Individual>();
    ind->id = plan.step;
    ind->task_id = ts.id;
    ind->candidate = o.candidate;
    ind->result = o.result;
    ind->descriptor = describe(o.candidate, o.result);
    ind->parent = plan.parent;
    ind->island = plan.island % ts.population.islands();
    ts.history.push_back(ind);
    ts.evaluated.push_back(ind);
    while (int(ts.history.size()) > std::max(0, config_.history)) ts.history.pop_front();
    out.descriptor = ind->descriptor;
    if (valid_kernel(o)) {
      by_id_[ind->id] = ind;
      const InsertOutcome pi = ts.population.insert(ind, rule);
      const ArchiveInsert ai = ts.archive.insert(ind, rule);
      bool best_naive = false;
      Verdict best_verdict = Verdict::not_better;
      if (has_timing(ind->result)) {
        best_naive = !ts.best || ind->result.cold.median_us < ts.best->result.cold.median_us;
        best_verdict = ts.best ? compare(ind->result, ts.best->result, rule) : Verdict::better;
        if (best_verdict == Verdict::better) {
          ts.best = ind;
          out.new_best = true;
        }
      }
      changed = pi.inserted != pi.naive_would_insert || ai.inserted != ai.naive_would_insert ||
                out.new_best != best_naive;
      out.acceptance = {{"island", decision(pi.inserted, pi.naive_would_insert, pi.verdict, pi.replaced)},
                        {"archive", decision(ai.inserted, ai.naive_would_insert, ai.verdict, ai.replaced)},
                        {"archive_new_cell", ai.new_cell},
                        {"best", decision(out.new_best, best_naive, best_verdict, -1)}};
    }
  }
  const bool remeasure_changed = o.first && o.verdict_first != o.verdict_final;
  if (changed || remeasure_changed) ++totals_.noise_changed_decisions;
  out.acceptance["remeasured"] = bool(o.first);
  out.acceptance["verdict_first"] = o.verdict_first;
  out.acceptance["verdict_final"] = o.verdict_final;
  out.acceptance["changed_decision"] = changed || remeasure_changed;

  // Rewards (core/reward.hpp, the module the RL environment uses too):
  // the search pays relative improvement over the parent, linear, clipped.
  const bool timed = o.evaluated && has_timing(o.result);
  const bool parent_timed = parent && has_timing(parent->result);
  RewardInput in;
  in.result = o.evaluated ? &o.result : nullptr;
  in.duplicate = !o.evaluated && o.duplicate_of >= 0;
  in.use_reference = true;
  in.reference_us = parent_timed ? parent->result.cold.median_us : 0;
  const Reward reward = compute_reward(in, search_reward_config());
  out.scalar_reward = reward.scalar.value_or(0.0);
  nlohmann::json gain = nullptr;
  if (timed && parent_timed) {
    const double g = improvement(o.result, parent->result);
    gain = g;
    out.bandit_reward = std::clamp(g / kBanditRewardScale, 0.0, 1.0);
  } else if (timed) {
    out.bandit_reward = kFirstSuccessReward;
  }
  out.reward = {{"valid", timed || valid_kernel(o)},
                {"timed", timed},
                {"status", o.evaluated ? to_string(o.result.status) : (o.duplicate_of >= 0 ? "duplicate" : "no_proposal")},
                {"masked", reward.masked},
                {"improvement_over_parent", gain},
                {"speedup_vs_baseline", timed ? o.result.speedup : 0.0},
                {"beats_baseline", timed && o.result.speedup > 1.0},
                {"new_best", out.new_best},
                {"bandit", out.bandit_reward},
                {"scalar", out.scalar_reward},
                {"components", reward.components}};

  // Migration between islands, every migration_interval steps of this task.
  if (ts.population.islands() > 1 && ts.steps % config_.migration_interval == 0) {
    auto moved = ts.population.migrate(config_.acceptance());
    if (!moved.empty()) out.acceptance["migrated"] = moved;
  }
  ts.best_curve.push_back(ts.best ? ts.best->result.speedup : 0.0);
  update_totals();
  return out;
}

void SearchState::update_totals() {
  stats::GeometricMean speedup;
  double min_peak = 1e300;
  for (const auto& t : tasks_) {
    if (!t.best) {
      min_peak = 0;
      continue;
    }
    speedup.add(std::max(1e-12, t.best->result.speedup));
    min_peak = std::min(min_peak, t.best->result.peak_fraction);
  }
  totals_.any_timed = speedup.count() > 0;
  totals_.best_speedup = speedup.value();
  totals_.best_peak_fraction = tasks_.empty() ? 0 : min_peak;
}

}  // namespace tessera::search
