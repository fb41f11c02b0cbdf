#pragma once
// Search strategies behind one interface: given the state, decide what the
// next step does (a Plan); learn from what it earned. Both calls happen on the
// controller thread in a fixed order, so decisions are deterministic.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/bandit.hpp"
#include "search/config.hpp"
#include "search/slots.hpp"
#include "search/state.hpp"
#include "search/step.hpp"

namespace tessera::search {

class SearchMethod {
public:
  virtual ~SearchMethod() = default;
  virtual std::string name() const = 0;
  // Fills task, island, parent, inspirations, proposer/model/strategy. The
  // engine adds seed, temperature, reference and snapshots.
  virtual Plan plan(long long step, const SearchState& state) = 0;
  // After the step is applied: the bandit reward in [0, 1] and its cost.
  virtual void observe(const Plan&, double /*reward*/, double /*cost*/) {}
  virtual nlohmann::json describe() const { return nlohmann::json::object(); }
};

// Island evolution: the island is chosen round-robin; the parent uniformly
// (exploration_ratio), from the MAP-Elites archive (elite_ratio) or by the
// selection rule; proposer, model and strategy uniformly.
class EvolveMethod final : public SearchMethod {
public:
  EvolveMethod(SearchConfig config, std::vector<ProposerSlot> slots);
  std::string name() const override { return "evolve"; }
  Plan plan(long long step, const SearchState& state) override;

private:
  SearchConfig config_;
  std::vector<ProposerSlot> slots_;
};

// Hierarchical bandit: the top level picks (proposer, model, strategy); the
// lower level picks which of the task's best kernels to start from.
class BanditMethod final : public SearchMethod {
public:
  struct TopArm {
    int proposer = 0;
    std::string proposer_name, model, strategy, target;
    std::string label() const;
  };

  BanditMethod(SearchConfig config, std::vector<ProposerSlot> slots);
  std::string name() const override { return "bandit"; }
  Plan plan(long long step, const SearchState& state) override;
  void observe(const Plan& plan, double reward, double cost) override;
  nlohmann::json describe() const override;

  const std::vector<TopArm>& arms() const { return arms_; }
  const std::vector<ArmStats>& arm_stats() const { return top_; }

private:
  SearchConfig config_;
  std::unique_ptr<BanditRule> rule_;
  std::vector<TopArm> arms_;
  std::vector<ArmStats> top_;
  std::vector<std::map<long long, ArmStats>> kernels_;  // per task, by kernel id
};

std::unique_ptr<SearchMethod> make_method(const SearchConfig& config, const std::vector<ProposerSlot>& slots);

// The step's task: tasks are visited round-robin.
inline int task_for_step(long long step, std::size_t tasks) { return int(step % (long long)std::max<std::size_t>(1, tasks)); }

}  // namespace tessera::search
