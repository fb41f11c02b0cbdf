#include <fmt/format.h>

#include "env/detail/device.hpp"
#include "env/detail/feedback.hpp"
#include "env/env.hpp"
#include "env/judge.hpp"
#include "core/error.hpp"

namespace tessera::env {

Task draw_task(const std::vector<Task>& tasks, std::uint64_t seed) {
  if (tasks.empty()) fail_bad_input("no task given and the environment has no tasks to draw from (config.tasks)");
  // SplitMix64 of the seed, reduced by modulo: the same draw on every platform
  // (std::uniform_int_distribution is implementation-defined).
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return tasks[z % tasks.size()];
}

struct Environment::Impl {
  EnvConfig config;
  std::shared_ptr<EvaluatorPool> pool;
  detail::Feedback feedback;

  bool started = false;
  Task task;
  std::uint64_t seed = 0;
  int max_turns = kDefaultMaxTurns;
  std::vector<Turn> history;
  std::optional<std::string> current_source;  // the last kernel that parsed: what a diff applies to
  std::optional<double> best_speedup;
  std::optional<int> best_turn;
  DeviceSummary device;

  Impl(EnvConfig c, std::shared_ptr<EvaluatorPool> p) : config(std::move(c)), pool(std::move(p)), feedback(config) {}

  bool done() const { return started && int(history.size()) >= max_turns; }

  void note_best(const Turn& t) {
    if (!t.result || t.result->status != Status::ok || t.result->speedup <= 0) return;
    if (!best_speedup || t.result->speedup > *best_speedup) {
      best_speedup = t.result->speedup;
      best_turn = t.turn;
    }
  }

  nlohmann::json nullable(const std::optional<double>& v) const { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
};

Environment::Environment(EnvConfig config, std::shared_ptr<EvaluatorPool> pool) {
  if (!pool) fail_bad_input("an environment needs an evaluator pool");
  config.validate();
  impl_ = std::make_unique<Impl>(std::move(config), std::move(pool));
}

Environment::~Environment() = default;

ResetResult Environment::reset(std::optional<Task> task, std::uint64_t seed, const nlohmann::json& options) {
  auto& s = *impl_;
  if (!options.is_null() && !options.is_object()) fail_bad_input("reset options must be a JSON object");
  int max_turns = s.config.max_turns;
  if (options.is_object()) {
    for (const auto& [key, v] : options.items()) {
      if (key == "task") {
        task = v.is_string() ? task_from_shape(v.get<std::string>()) : parse_task(v);
      } else if (key == "max_turns") {
        if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > kMaxTurnsLimit)
          fail_bad_input(fmt::format("reset option max_turns must be an integer in [1, {}]", kMaxTurnsLimit));
        max_turns = v.get<int>();
      } else {
        fail_bad_input("unknown reset option '" + key + "' (task, max_turns)");
      }
    }
  }
  Task t = task ? *task : draw_task(s.config.tasks, seed);
  validate(t);
  s.device = detail::pool_device(s.pool);
  s.started = true;
  s.task = t;
  s.seed = seed;
  s.max_turns = max_turns;
  s.history.clear();
  s.current_source.reset();
  s.best_speedup.reset();
  s.best_turn.reset();
  const auto prompt = s.feedback.task_prompt(t, s.device, max_turns);
  ResetResult out;
  out.observation = prompt.text();
  out.info = {{"task", to_json(t)},
              {"task_id", t.id()},
              {"seed", seed},
              {"max_turns", max_turns},
              {"actions", s.config.actions.to_json()},
              {"device", s.device.name.empty() ? "compile-only (" + s.device.arch + ")" : s.device.name},
              {"messages", prompt.messages()}};
  return out;
}

StepResult Environment::step(const std::string& action) {
  auto& s = *impl_;
  if (!s.started) fail_bad_input("step() before reset()");
  if (s.done()) fail_bad_input(fmt::format("the episode is over after {} turns; call reset()", s.max_turns));
  Turn turn;
  turn.turn = int(s.history.size()) + 1;
  turn.action = action;
  const Verdict v = judge({action, s.task, s.current_source, fmt::format("turn {}", turn.turn)}, s.config, s.pool);

  turn.action_kind = v.action.kind;
  turn.reward = v.reward;
  if (v.action.ok) {
    turn.source = v.action.candidate.source;
    turn.result = v.result;
    s.current_source = v.action.candidate.source;
  }
  s.note_best(turn);
  s.history.push_back(turn);

  StepResult out;
  out.reward = v.reward.scalar;
  out.terminated = s.done();
  detail::StepView view{turn.turn,     s.max_turns, &v, s.best_speedup, s.best_turn, s.current_source.has_value(),
                        out.terminated};
  out.observation = s.feedback.step(view);
  out.info = v.record();
  out.info["turn"] = turn.turn;
  out.info["max_turns"] = s.max_turns;
  out.info["best_speedup"] = s.nullable(s.best_speedup);
  out.info["best_turn"] = s.best_turn ? nlohmann::json(*s.best_turn) : nlohmann::json(nullptr);
  return out;
}

const std::vector<Turn>& Environment::history() const { return impl_->history; }
std::optional<double> Environment::best_speedup() const { return impl_->best_speedup; }
std::optional<int> Environment::best_turn() const { return impl_->best_turn; }
const Task& Environment::task() const { return impl_->task; }
int Environment::turn() const { return int(impl_->history.size()); }
int Environment::max_turns() const { return impl_->max_turns; }
bool Environment::done() const { return impl_->done(); }
const EnvConfig& Environment::config() const { return impl_->config; }

}  // namespace tessera::env
