#include "search/config.hpp"

#include "core/counter_set.hpp"
#include "core/error.hpp"
#include "core/json_struct.hpp"

namespace tessera::search {

// Missing keys take the defaults, so older config files still load.
TESSERA_JSON_STRUCT(Budget, evals, seconds, tokens, usd, stop_at_peak_fraction)
TESSERA_JSON_STRUCT(SearchConfig, run_id, method, seed, budget, islands, island_capacity, migration_interval,
                    selection, tournament_size, exploration_ratio, elite_ratio, inspirations, history, noise_aware,
                    min_noise_margin, reuse_baselines, bandit_rule, ucb_c, bandit_cost, kernel_arms, saturated_pct, pipeline_depth,
                    compile_only, counter_set, temperature, proposers)

void SearchConfig::validate() const {
  if (method != "evolve" && method != "bandit") fail_bad_input("unknown --method '" + method + "' (evolve | bandit)");
  if (budget.evals < 1) fail_bad_input("the evaluation budget must be at least 1");
  if (budget.seconds < 0 || budget.tokens < 0 || budget.usd < 0) fail_bad_input("budgets cannot be negative");
  if (budget.stop_at_peak_fraction < 0 || budget.stop_at_peak_fraction > 1)
    fail_bad_input("stop_at_peak_fraction must be in [0, 1]");
  if (islands < 1 || island_capacity < 1) fail_bad_input("islands and island capacity must be at least 1");
  if (migration_interval < 1) fail_bad_input("migration interval must be at least 1");
  (void)parse_selection_rule(selection);
  if (exploration_ratio < 0 || elite_ratio < 0 || exploration_ratio + elite_ratio > 1)
    fail_bad_input("exploration_ratio and elite_ratio must be >= 0 and sum to at most 1");
  (void)make_bandit_rule(bandit_rule, ucb_c);
  if (bandit_cost != "none" && bandit_cost != "tokens" && bandit_cost != "seconds")
    fail_bad_input("unknown bandit cost '" + bandit_cost + "' (none | tokens | seconds)");
  if (kernel_arms < 1) fail_bad_input("kernel_arms must be at least 1");
  if (pipeline_depth < 0) fail_bad_input("pipeline depth cannot be negative");
  (void)parse_counter_set(counter_set);
}

RewardConfig search_reward_config() {
  RewardConfig c;
  c.shape = RewardShape::linear;
  c.clip = 1.0;
  c.correct_bonus = 0;
  c.compiled_reward = 0;
  c.penalty = {{"duplicate", kDuplicatePenalty}};
  for (Status s : {Status::compile_error, Status::launch_error, Status::runtime_fault, Status::timeout,
                   Status::wrong_answer, Status::rejected})
    c.penalty[to_string(s)] = kFailurePenalty;
  return c;
}

}  // namespace tessera::search
