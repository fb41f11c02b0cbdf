#pragma once
// What the policy reads: the task prompt at reset and the feedback after each
// step. The words are the agent's (agent/prompt.hpp: the prompt builder, the
// result description, the reply formats); this file adds only what an
// episode has and a search prompt does not: turns, the score, the best so far,
// and a budget: a step's observation is at most max_observation_chars, so it
// fits a policy's context (docs/env.md, "Observations").
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/prompt.hpp"
#include "env/env.hpp"
#include "env/judge.hpp"

namespace tessera::env::detail {

struct TaskPrompt {
  std::string system;
  std::string user;
  std::string text() const;             // system, a blank line, user
  nlohmann::json messages() const;      // [{"role": "system", ...}, {"role": "user", ...}]
};

struct StepView {
  int turn = 0;
  int max_turns = 0;
  const Verdict* verdict = nullptr;  // the action as parsed, its result and its reward
  std::optional<double> best_speedup;
  std::optional<int> best_turn;
  bool have_kernel = false;  // a kernel the next diff applies to
  bool done = false;
};

class Feedback {
public:
  // Loads the agent's templates and the ABI header: bad_input when missing.
  explicit Feedback(const EnvConfig& config);

  TaskPrompt task_prompt(const Task& task, const DeviceSummary& device, int max_turns) const;
  std::string step(const StepView& view) const;

private:
  struct Measured {
    std::string text;
    bool kernel_shown = false;  // the policy has this turn's kernel text (a next diff can quote it)
  };
  // The measurement (and the kernel when the policy has not seen it) in at
  // most `room` characters.
  Measured measured(const StepView& v, std::size_t room) const;
  // The result description in at most `room` characters: the compiler log
  // gives way first, then the description's end.
  std::string fitted_result(const EvalResult& r, std::size_t room) const;
  std::string next_reply(const StepView& v, bool diff_offered) const;
  std::size_t room_left(std::size_t used) const;  // of the observation budget

  ActionSpace actions_;
  std::size_t max_log_chars_;
  std::size_t max_observation_chars_;
  agent::PromptBuilder builder_;
  agent::PromptTemplates templates_;
};

}  // namespace tessera::env::detail
