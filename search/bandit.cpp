#include "search/bandit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace tessera::search {

void to_json(nlohmann::json& j, const ArmStats& a) {
  j = {{"pulls", a.pulls}, {"reward_sum", a.reward_sum}, {"cost_sum", a.cost_sum}};
}

namespace {

double mean_cost_per_pull(const std::vector<ArmStats>& arms) {
  long long pulls = 0;
  double cost = 0;
  for (const auto& a : arms) {
    pulls += a.pulls;
    cost += a.cost_sum;
  }
  return pulls && cost > 0 ? cost / double(pulls) : 0;
}

// Reward per unit cost, rescaled by the mean cost per pull.
double value_of(const ArmStats& a, bool cost_aware, double mean_cost) {
  if (!cost_aware || mean_cost <= 0 || a.cost_sum <= 0) return a.mean();
  return a.reward_sum / a.cost_sum * mean_cost;
}

void check_open(const std::vector<ArmStats>& arms, const std::vector<bool>& open) {
  TESSERA_REQUIRE(!arms.empty() && open.size() == arms.size(), "bandit needs one open flag per arm");
  TESSERA_REQUIRE(std::find(open.begin(), open.end(), true) != open.end(), "bandit needs an open arm");
}

}  // namespace

std::size_t Ucb1Rule::choose(const std::vector<ArmStats>& arms, const std::vector<bool>& open, bool cost_aware,
                             Rng&) const {
  check_open(arms, open);
  long long total = 0;
  for (std::size_t i = 0; i < arms.size(); ++i) {
    if (!open[i]) continue;
    if (arms[i].pulls == 0) return i;
    total += arms[i].pulls;
  }
  const double mean_cost = mean_cost_per_pull(arms);
  std::size_t best = arms.size();
  double best_score = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < arms.size(); ++i) {
    if (!open[i]) continue;
    const double bonus = c_ * std::sqrt(std::log(double(total)) / double(arms[i].pulls));
    const double score = value_of(arms[i], cost_aware, mean_cost) + bonus;
    if (score > best_score) {
      best_score = score;
      best = i;
    }
  }
  return best;
}

std::size_t ThompsonRule::choose(const std::vector<ArmStats>& arms, const std::vector<bool>& open, bool cost_aware,
                                 Rng& rng) const {
  check_open(arms, open);
  const double mean_cost = mean_cost_per_pull(arms);
  std::size_t best = arms.size();
  double best_sample = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < arms.size(); ++i) {
    // Every arm draws, open or not, so masking one arm does not shift the
    // random stream of the others.
    const auto& a = arms[i];
    const double fail = std::max(0.0, double(a.pulls) - a.reward_sum);
    double sample = rng.beta(1.0 + a.reward_sum, 1.0 + fail);
    if (cost_aware && mean_cost > 0 && a.cost_sum > 0 && a.pulls > 0)
      sample *= mean_cost / (a.cost_sum / double(a.pulls));
    if (open[i] && sample > best_sample) {
      best_sample = sample;
      best = i;
    }
  }
  return best;
}

std::unique_ptr<BanditRule> make_bandit_rule(const std::string& name, double ucb_c) {
  if (name == "ucb1" || name == "ucb") return std::make_unique<Ucb1Rule>(ucb_c);
  if (name == "thompson") return std::make_unique<ThompsonRule>();
  fail_bad_input("unknown bandit rule '" + name + "' (ucb1 | thompson)");
}

std::string counter_for_resource(const std::string& resource) {
  if (resource == "tensor" || resource == "tensor_pipe") return "tensor_pipe_pct";
  if (resource == "memory" || resource == "dram_bandwidth" || resource == "memory_latency") return "dram_throughput_pct";
  if (resource == "occupancy") return "achieved_occupancy_pct";
  if (resource == "latency" || resource == "issue_slots") return "sm_throughput_pct";
  return "";
}

std::vector<bool> mask_saturated(const std::vector<std::string>& targets, const nlohmann::json& counters,
                                 double saturated_pct) {
  std::vector<bool> open(targets.size(), true);
  if (!counters.is_object()) return open;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const std::string key = counter_for_resource(targets[i]);
    if (key.empty()) continue;
    auto it = counters.find(key);
    // The fast counter set has no sm_throughput_pct: issue-slot use stands in.
    if ((it == counters.end() || !it->is_number()) && key == "sm_throughput_pct") it = counters.find("issue_active_pct");
    if (it != counters.end() && it->is_number() && it->get<double>() >= saturated_pct) open[i] = false;
  }
  if (std::find(open.begin(), open.end(), true) == open.end()) open.assign(targets.size(), true);
  return open;
}

}  // namespace tessera::search
