#include "search/method.hpp"

#include "core/error.hpp"

namespace tessera::search {

namespace {

void choose_proposer(Plan& p, const std::vector<ProposerSlot>& slots, Rng& rng) {
  p.proposer = int(rng.below(slots.size()));
  const auto& slot = slots[p.proposer];
  p.proposer_name = slot.name;
  p.model = slot.models.empty() ? "" : slot.models[rng.below(slot.models.size())];
  const auto strategies = slot.strategies.empty() ? default_strategies(slot.name) : slot.strategies;
  const auto& s = strategies[rng.below(strategies.size())];
  p.strategy = s.name;
  p.strategy_target = s.target;
}

std::vector<long long> ids_of(const std::vector<IndividualPtr>& v) {
  std::vector<long long> out;
  for (const auto& i : v) out.push_back(i->id);
  return out;
}

}  // namespace

EvolveMethod::EvolveMethod(SearchConfig config, std::vector<ProposerSlot> slots)
    : config_(std::move(config)), slots_(std::move(slots)) {
  TESSERA_REQUIRE(!slots_.empty(), "a search needs at least one proposer");
}

Plan EvolveMethod::plan(long long step, const SearchState& state) {
  Plan p;
  p.step = step;
  p.task_index = task_for_step(step, state.tasks().size());
  const TaskState& ts = state.task(p.task_index);
  p.task_id = ts.id;
  const int islands = ts.population.islands();
  p.island = int((step / (long long)std::max<std::size_t>(1, state.tasks().size())) % islands);
  Rng rng = Rng::derive(config_.seed, std::uint64_t(step), "evolve");
  choose_proposer(p, slots_, rng);

  IndividualPtr parent;
  const double r = rng.uniform();
  const auto& island = ts.population.island(p.island);
  if (ts.population.empty()) {
    p.selection = "scratch";
  } else if (island.empty()) {  // an island not seeded yet starts from the run's best
    parent = ts.population.ranked().front();
    p.selection = "best";
  } else if (r < config_.exploration_ratio) {
    parent = island[rng.below(island.size())];
    p.selection = "explore";
  } else if (r < config_.exploration_ratio + config_.elite_ratio && ts.archive.size() > 0) {
    parent = ts.archive.random_elite(rng);
    p.selection = "elite";
  } else {
    const SelectionRule rule = parse_selection_rule(config_.selection);
    parent = ts.population.select(p.island, rule, config_.tournament_size, 0.0, rng);
    p.selection = to_string(rule);
  }
  p.parent = parent ? parent->id : -1;
  p.inspirations = ids_of(ts.population.inspirations(p.island, p.parent, config_.inspirations));
  return p;
}

std::string BanditMethod::TopArm::label() const {
  return proposer_name + (model.empty() ? "" : ":" + model) + "/" + strategy;
}

BanditMethod::BanditMethod(SearchConfig config, std::vector<ProposerSlot> slots)
    : config_(std::move(config)), rule_(make_bandit_rule(config_.bandit_rule, config_.ucb_c)) {
  TESSERA_REQUIRE(!slots.empty(), "a search needs at least one proposer");
  for (std::size_t p = 0; p < slots.size(); ++p) {
    const auto strategies = slots[p].strategies.empty() ? default_strategies(slots[p].name) : slots[p].strategies;
    const auto models = slots[p].models.empty() ? std::vector<std::string>{""} : slots[p].models;
    for (const auto& m : models)
      for (const auto& s : strategies) arms_.push_back({int(p), slots[p].name, m, s.name, s.target});
  }
  top_.resize(arms_.size());
}

Plan BanditMethod::plan(long long step, const SearchState& state) {
  Plan p;
  p.step = step;
  p.task_index = task_for_step(step, state.tasks().size());
  const TaskState& ts = state.task(p.task_index);
  p.task_id = ts.id;
  p.island = int((step / (long long)std::max<std::size_t>(1, state.tasks().size())) % ts.population.islands());
  if (kernels_.size() < state.tasks().size()) kernels_.resize(state.tasks().size());
  const bool cost_aware = config_.bandit_cost != "none";

  // Top level: mask arms whose resource the task's best kernel already saturates.
  std::vector<std::string> targets;
  for (const auto& a : arms_) targets.push_back(a.target);
  const nlohmann::json counters = ts.best ? ts.best->result.counters : nlohmann::json::object();
  const std::vector<bool> open = mask_saturated(targets, counters, config_.saturated_pct);
  for (std::size_t i = 0; i < arms_.size(); ++i)
    if (!open[i]) p.masked_arms.push_back(arms_[i].label());
  Rng top_rng = Rng::derive(config_.seed, std::uint64_t(step), "bandit-arm");
  p.arm = int(rule_->choose(top_, open, cost_aware, top_rng));
  const TopArm& arm = arms_[p.arm];
  p.proposer = arm.proposer;
  p.proposer_name = arm.proposer_name;
  p.model = arm.model;
  p.strategy = arm.strategy;
  p.strategy_target = arm.target;

  // Lower level: which kernel to start from, among the task's best few.
  auto ranked = ts.population.ranked();
  if (ranked.size() > std::size_t(config_.kernel_arms)) ranked.resize(config_.kernel_arms);
  if (ranked.empty()) {
    p.selection = "scratch";
  } else {
    std::vector<ArmStats> stats;
    for (const auto& k : ranked) {
      auto it = kernels_[p.task_index].find(k->id);
      stats.push_back(it == kernels_[p.task_index].end() ? ArmStats{} : it->second);
    }
    Rng kernel_rng = Rng::derive(config_.seed, std::uint64_t(step), "bandit-kernel");
    const auto k = rule_->choose(stats, std::vector<bool>(stats.size(), true), cost_aware, kernel_rng);
    p.parent = ranked[k]->id;
    p.selection = "bandit";
  }
  p.inspirations = ids_of(ts.population.inspirations(p.island, p.parent, config_.inspirations));
  return p;
}

void BanditMethod::observe(const Plan& plan, double reward, double cost) {
  if (plan.arm >= 0 && plan.arm < int(top_.size())) top_[plan.arm].add(reward, cost);
  if (plan.parent >= 0) {
    if (kernels_.size() <= std::size_t(plan.task_index)) kernels_.resize(plan.task_index + 1);
    kernels_[plan.task_index][plan.parent].add(reward, cost);
  }
}

nlohmann::json BanditMethod::describe() const {
  nlohmann::json arms = nlohmann::json::array();
  for (std::size_t i = 0; i < arms_.size(); ++i) {
    nlohmann::json a = top_[i];
    a["arm"] = arms_[i].label();
    a["target"] = arms_[i].target;
    arms.push_back(a);
  }
  return {{"rule", rule_->name()}, {"arms", arms}};
}

std::unique_ptr<SearchMethod> make_method(const SearchConfig& config, const std::vector<ProposerSlot>& slots) {
  if (config.method == "evolve") return std::make_unique<EvolveMethod>(config, slots);
  if (config.method == "bandit") return std::make_unique<BanditMethod>(config, slots);
  fail_bad_input("unknown search method '" + config.method + "' (evolve | bandit)");
}

}  // namespace tessera::search
