#pragma once
// Bandit rules behind one small interface (UCB1, Thompson sampling), and the
// resource masking used by the bandit search.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/rng.hpp"

namespace tessera::search {

inline constexpr double kDefaultUcbExploration = 1.4142135623730951;  // sqrt(2), UCB1's constant
// A resource at or above this percentage of peak is saturated: arms that try
// to use more of it are masked.
inline constexpr double kDefaultSaturatedPct = 85.0;

struct ArmStats {
  long long pulls = 0;
  double reward_sum = 0;  // rewards are in [0, 1]
  double cost_sum = 0;    // tokens/1000 or seconds, when the search is cost-aware

  void add(double reward, double cost) {
    ++pulls;
    reward_sum += reward;
    cost_sum += cost;
  }
  double mean() const { return pulls ? reward_sum / double(pulls) : 0; }
};
void to_json(nlohmann::json& j, const ArmStats& a);

class BanditRule {
public:
  virtual ~BanditRule() = default;
  virtual std::string name() const = 0;
  // Index of an open arm. `open` has the size of `arms` and at least one true.
  // Cost-aware: the value of an arm is its reward per unit of cost, rescaled
  // by the mean cost per pull of all arms so it stays comparable to rewards.
  virtual std::size_t choose(const std::vector<ArmStats>& arms, const std::vector<bool>& open, bool cost_aware,
                             Rng& rng) const = 0;
};

// Untried open arms first (lowest index), then mean + c*sqrt(ln N / n).
class Ucb1Rule final : public BanditRule {
public:
  explicit Ucb1Rule(double c = kDefaultUcbExploration) : c_(c) {}
  std::string name() const override { return "ucb1"; }
  std::size_t choose(const std::vector<ArmStats>& arms, const std::vector<bool>& open, bool cost_aware,
                     Rng& rng) const override;

private:
  double c_;
};

// Beta(1 + reward_sum, 1 + pulls - reward_sum) posterior sample per arm
// (fractional rewards as Bernoulli evidence); the largest sample wins.
class ThompsonRule final : public BanditRule {
public:
  std::string name() const override { return "thompson"; }
  std::size_t choose(const std::vector<ArmStats>& arms, const std::vector<bool>& open, bool cost_aware,
                     Rng& rng) const override;
};

std::unique_ptr<BanditRule> make_bandit_rule(const std::string& name, double ucb_c = kDefaultUcbExploration);

// The counter that says how busy a strategy's target resource is:
//   tensor_pipe (alias tensor)                    -> tensor_pipe_pct
//   dram_bandwidth, memory_latency (alias memory) -> dram_throughput_pct
//   occupancy                                     -> achieved_occupancy_pct
//   issue_slots (alias latency)                   -> sm_throughput_pct
// Others (shared_memory, l2_locality, sm_parallelism, none) have no counter
// here and are never masked.
std::string counter_for_resource(const std::string& resource);

// Open flags for arms with these targets given a kernel's counters. If every
// arm would be masked, none is (at least one arm is always open).
std::vector<bool> mask_saturated(const std::vector<std::string>& targets, const nlohmann::json& counters,
                                 double saturated_pct = kDefaultSaturatedPct);

}  // namespace tessera::search
