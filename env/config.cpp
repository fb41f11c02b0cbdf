// EnvConfig and ActionSpace as JSON: strict (unknown keys and wrong types are
// bad_input with the key's name), missing keys keep their defaults.
#include <fmt/format.h>

#include "env/env.hpp"
#include "core/error.hpp"
#include "core/tasks_file.hpp"

namespace tessera::env {

namespace {

// The profiler set the search also reads for every candidate: 2 passes on
// GH100 instead of 9, and enough for the bottleneck reading.
constexpr const char* kEnvCounterSet = "fast";

bool get_bool(const nlohmann::json& v, const std::string& key) {
  if (!v.is_boolean()) fail_bad_input(key + " must be true or false");
  return v.get<bool>();
}

int get_int(const nlohmann::json& v, const std::string& key, int lo, int hi) {
  if (!v.is_number_integer()) fail_bad_input(key + " must be an integer");
  const auto x = v.get<long long>();
  if (x < lo || x > hi) fail_bad_input(fmt::format("{} must be in [{}, {}] (got {})", key, lo, hi, x));
  return int(x);
}

std::string get_string(const nlohmann::json& v, const std::string& key) {
  if (!v.is_string()) fail_bad_input(key + " must be a string");
  return v.get<std::string>();
}

void require_object(const nlohmann::json& j, const std::string& what) {
  if (!j.is_object()) fail_bad_input(what + " must be a JSON object");
}

// An episode's eval settings as written: counters and baselines are the
// environment's own settings (counters_in_feedback, reuse_baselines).
nlohmann::json eval_to_json(const EvalOptions& e) {
  nlohmann::json j = e;
  j.erase("counters");
  j.erase("baselines");
  return j;
}

// An episode's eval settings: the harness's, but counters_in_feedback decides
// the counters and every turn measures its baselines unless reuse_baselines.
EvalOptions env_eval_from_json(const nlohmann::json& j, const EvalOptions& base) {
  for (const char* key : {"counters", "baselines"})
    if (j.is_object() && j.contains(key))
      fail_bad_input(std::string("eval.") + key + " is not an environment setting (counters_in_feedback, reuse_baselines)");
  return eval_options_from_json(j, base);
}

std::vector<Task> tasks_from_json(const nlohmann::json& j) {
  if (!j.is_array()) fail_bad_input("tasks must be a list of task objects or \"MxNxK\" strings");
  std::vector<Task> out;
  for (const auto& t : j) out.push_back(t.is_string() ? task_from_shape(t.get<std::string>()) : parse_task(t));
  return out;
}

}  // namespace

EvalOptions eval_options_from_json(const nlohmann::json& j, EvalOptions e) { return parse_eval_options(j, e, "eval"); }

EvalOptions default_env_eval_options() {
  EvalOptions e;
  e.counter_set = kEnvCounterSet;
  // Nothing ranks by warm-L2 time; a turn is shorter without it.
  e.hot = false;
  return e;
}

nlohmann::json ActionSpace::to_json() const {
  return {{"device_only", device_only}, {"diff", diff}, {"tile_config", tile_config},
          {"translation_unit", translation_unit}};
}

ActionSpace ActionSpace::from_json(const nlohmann::json& j) {
  require_object(j, "actions");
  ActionSpace a;
  for (const auto& [key, v] : j.items()) {
    const std::string k = "actions." + key;
    if (key == "device_only") a.device_only = get_bool(v, k);
    else if (key == "diff") a.diff = get_bool(v, k);
    else if (key == "tile_config") a.tile_config = get_bool(v, k);
    else if (key == "translation_unit") a.translation_unit = get_bool(v, k);
    else fail_bad_input("unknown action kind '" + key + "' (device_only, diff, tile_config, translation_unit)");
  }
  return a;
}

nlohmann::json EnvConfig::to_json() const {
  nlohmann::json tj = nlohmann::json::array();
  for (const auto& t : tasks) tj.push_back(tessera::to_json(t));
  return {{"max_turns", max_turns},
          {"actions", actions.to_json()},
          {"reward", reward.to_json()},
          {"eval", eval_to_json(eval)},
          {"tasks", tj},
          {"infra_retries", infra_retries},
          {"counters_in_feedback", counters_in_feedback},
          {"reuse_baselines", reuse_baselines},
          {"max_log_chars", max_log_chars},
          {"max_observation_chars", max_observation_chars},
          {"prompt_dir", prompt_dir},
          {"abi_header", abi_header}};
}

EnvConfig EnvConfig::from_json(const nlohmann::json& j) {
  require_object(j, "an environment configuration");
  EnvConfig c;
  for (const auto& [key, v] : j.items()) {
    if (key == "max_turns") c.max_turns = get_int(v, key, 1, kMaxTurnsLimit);
    else if (key == "actions") c.actions = ActionSpace::from_json(v);
    else if (key == "reward") c.reward = RewardConfig::from_json(v);
    else if (key == "eval") c.eval = env_eval_from_json(v, c.eval);
    else if (key == "tasks") c.tasks = tasks_from_json(v);
    else if (key == "tasks_file") c.tasks = load_tasks_file(get_string(v, key));
    else if (key == "infra_retries") c.infra_retries = get_int(v, key, 0, kMaxInfraRetries);
    else if (key == "counters_in_feedback") c.counters_in_feedback = get_bool(v, key);
    else if (key == "reuse_baselines") c.reuse_baselines = get_bool(v, key);
    else if (key == "max_log_chars") c.max_log_chars = std::size_t(get_int(v, key, 0, 1 << 20));
    else if (key == "max_observation_chars")
      c.max_observation_chars = std::size_t(get_int(v, key, int(kMinObservationChars), 1 << 24));
    else if (key == "prompt_dir") c.prompt_dir = get_string(v, key);
    else if (key == "abi_header") c.abi_header = get_string(v, key);
    else
      fail_bad_input("unknown environment setting '" + key +
                     "' (max_turns, actions, reward, eval, tasks, tasks_file, infra_retries, counters_in_feedback, "
                     "reuse_baselines, max_log_chars, max_observation_chars, prompt_dir, abi_header)");
  }
  if (j.contains("tasks") && j.contains("tasks_file")) fail_bad_input("give tasks or tasks_file, not both");
  c.validate();
  return c;
}

void EnvConfig::validate() const {
  if (max_turns < 1 || max_turns > kMaxTurnsLimit)
    fail_bad_input(fmt::format("max_turns must be in [1, {}] (got {})", kMaxTurnsLimit, max_turns));
  if (infra_retries < 0 || infra_retries > kMaxInfraRetries)
    fail_bad_input(fmt::format("infra_retries must be in [0, {}] (got {})", kMaxInfraRetries, infra_retries));
  if (!actions.device_only && !actions.diff && !actions.tile_config && !actions.translation_unit)
    fail_bad_input("the action space allows nothing: enable at least one of device_only, diff, tile_config");
  for (const auto& t : tasks) tessera::validate(t);
}

}  // namespace tessera::env
