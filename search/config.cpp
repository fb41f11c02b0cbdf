#include "search/config.hpp"

#include "harness/core/error.hpp"

namespace tessera::search {

// Missing keys take the defaults, so older config files still load.
void to_json(nlohmann::json& j, const Budget& v) {
  j = nlohmann::json::object();
  j["evals"] = v.evals;
  j["seconds"] = v.seconds;
  j["tokens"] = v.tokens;
  j["usd"] = v.usd;
  j["stop_at_peak_fraction"] = v.stop_at_peak_fraction;
}

void from_json(const nlohmann::json& j, Budget& v) {
  const Budget d;
  v.evals = j.value("evals", d.evals);
  v.seconds = j.value("seconds", d.seconds);
  v.tokens = j.value("tokens", d.tokens);
  v.usd = j.value("usd", d.usd);
  v.stop_at_peak_fraction = j.value("stop_at_peak_fraction", d.stop_at_peak_fraction);
}

void to_json(nlohmann::json& j, const SearchConfig& v) {
  j = nlohmann::json::object();
  j["run_id"] = v.run_id;
  j["method"] = v.method;
  j["seed"] = v.seed;
  j["budget"] = v.budget;
  j["islands"] = v.islands;
  j["island_capacity"] = v.island_capacity;
  j["migration_interval"] = v.migration_interval;
  j["selection"] = v.selection;
  j["tournament_size"] = v.tournament_size;
  j["exploration_ratio"] = v.exploration_ratio;
  j["elite_ratio"] = v.elite_ratio;
  j["inspirations"] = v.inspirations;
  j["history"] = v.history;
  j["noise_aware"] = v.noise_aware;
  j["min_noise_margin"] = v.min_noise_margin;
  j["bandit_rule"] = v.bandit_rule;
  j["ucb_c"] = v.ucb_c;
  j["bandit_cost"] = v.bandit_cost;
  j["kernel_arms"] = v.kernel_arms;
  j["saturated_pct"] = v.saturated_pct;
  j["pipeline_depth"] = v.pipeline_depth;
  j["compile_only"] = v.compile_only;
  j["temperature"] = v.temperature;
  j["proposers"] = v.proposers;
}

void from_json(const nlohmann::json& j, SearchConfig& v) {
  const SearchConfig d;
  v.run_id = j.value("run_id", d.run_id);
  v.method = j.value("method", d.method);
  v.seed = j.value("seed", d.seed);
  v.budget = j.value("budget", d.budget);
  v.islands = j.value("islands", d.islands);
  v.island_capacity = j.value("island_capacity", d.island_capacity);
  v.migration_interval = j.value("migration_interval", d.migration_interval);
  v.selection = j.value("selection", d.selection);
  v.tournament_size = j.value("tournament_size", d.tournament_size);
  v.exploration_ratio = j.value("exploration_ratio", d.exploration_ratio);
  v.elite_ratio = j.value("elite_ratio", d.elite_ratio);
  v.inspirations = j.value("inspirations", d.inspirations);
  v.history = j.value("history", d.history);
  v.noise_aware = j.value("noise_aware", d.noise_aware);
  v.min_noise_margin = j.value("min_noise_margin", d.min_noise_margin);
  v.bandit_rule = j.value("bandit_rule", d.bandit_rule);
  v.ucb_c = j.value("ucb_c", d.ucb_c);
  v.bandit_cost = j.value("bandit_cost", d.bandit_cost);
  v.kernel_arms = j.value("kernel_arms", d.kernel_arms);
  v.saturated_pct = j.value("saturated_pct", d.saturated_pct);
  v.pipeline_depth = j.value("pipeline_depth", d.pipeline_depth);
  v.compile_only = j.value("compile_only", d.compile_only);
  v.temperature = j.value("temperature", d.temperature);
  v.proposers = j.value("proposers", d.proposers);
}

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
}

}  // namespace tessera::search
