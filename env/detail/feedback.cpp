#include "env/detail/feedback.hpp"

#include <fmt/format.h>

#include "tile/config.hpp"

namespace tessera::env::detail {

namespace {

agent::PromptOptions prompt_options(const EnvConfig& c) {
  agent::PromptOptions o;
  if (!c.prompt_dir.empty()) o.prompt_dir = c.prompt_dir;
  if (!c.abi_header.empty()) o.abi_header = c.abi_header;
  o.max_log_chars = c.max_log_chars;
  // The task prompt is the search's first prompt: no parent, no history, so
  // no budget trimming can apply; keep the agent's budget anyway.
  return o;
}

std::filesystem::path prompt_dir(const EnvConfig& c) {
  return c.prompt_dir.empty() ? agent::default_prompt_dir() : std::filesystem::path(c.prompt_dir);
}

std::string rules(int max_turns, const ActionSpace& a) {
  std::string out = fmt::format(
      "# How this episode works\n"
      "You have {} turn{}. After each reply the harness compiles, verifies and times your kernel against "
      "cuBLAS/cuBLASLt and tells you what it measured. Every turn is scored: a correct kernel earns more the faster "
      "it is; a reply that is not a kernel, a compile error, a crash or a wrong answer is penalised.\n"
      "Each reply may be one of:\n",
      max_turns, max_turns == 1 ? "" : "s");
  if (a.device_only) out += "- a complete device-only kernel in one ```cuda block;\n";
  if (a.translation_unit) out += "- a complete translation unit that exports tessera_launch, in one ```cuda block;\n";
  if (a.diff) out += "- SEARCH/REPLACE blocks against your previous kernel (from the second turn on);\n";
  if (a.tile_config) {
    out += "- a configuration of tessera's tile compiler as one ```json block (the harness writes the kernel); "
           "keys you leave out keep these defaults:\n```json\n" +
           tile::to_json(tile::Config{}).dump() + "\n```\n";
  }
  return out;
}

// Templates and sources end in newlines of their own; the sections join with one.
std::string without_trailing_newlines(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string fixed(double v, int digits) { return fmt::format("{:.{}f}", v, digits); }

std::string score_line(const Verdict& j) {
  const auto& k = j.reward.components;
  if (j.reward.masked) return "- score: none (not your fault: this turn is not counted)\n";
  return fmt::format("- score: {} ({})\n", fixed(*j.reward.scalar, 3), k.value("class", std::string()));
}

std::string best_line(const StepView& v) {
  if (!v.best_speedup) return "- best so far: no correct, timed kernel yet\n";
  return fmt::format("- best so far: {}x against the best baseline (turn {})\n", fixed(*v.best_speedup, 3), *v.best_turn);
}

}  // namespace

std::string TaskPrompt::text() const { return system + "\n\n" + user; }

nlohmann::json TaskPrompt::messages() const {
  return nlohmann::json::array({{{"role", "system"}, {"content", system}}, {{"role", "user"}, {"content", user}}});
}

Feedback::Feedback(const EnvConfig& config)
    : actions_(config.actions),
      max_log_chars_(config.max_log_chars),
      builder_(prompt_options(config)),
      templates_(prompt_dir(config)) {}

TaskPrompt Feedback::task_prompt(const Task& task, const DeviceSummary& device, int max_turns) const {
  agent::ProposalContext c;
  c.task = task;
  c.gpu = agent::gpu_info(device);
  const auto msgs = builder_.build(c);
  return {without_trailing_newlines(msgs.at(0).content),
          without_trailing_newlines(msgs.at(1).content) + "\n\n" + rules(max_turns, actions_)};
}

// The parent section of the agent's prompt when the policy has not seen the
// kernel's text (a diff or a tile config made it), else the measurement alone.
std::string Feedback::measured(const StepView& v) const {
  const EvalResult& r = *v.verdict->result;
  const ParsedAction& a = v.verdict->action;
  const std::string result = agent::describe_result(r, max_log_chars_);
  if (a.kind == "device_only" || a.kind == "translation_unit") return "## What the harness measured\n" + result;
  return agent::render_template(templates_.get("parent"),
                                {{"name", a.candidate.name},
                                 {"source", without_trailing_newlines(a.candidate.source)},
                                 {"result", result}},
                                "parent");
}

std::string Feedback::next_reply(const StepView& v) const {
  if (v.done) return "The episode is over.\n";
  const int left = v.max_turns - v.turn;
  std::string out = fmt::format("You have {} more turn{}. ", left, left == 1 ? "" : "s");
  out += templates_.get(v.have_kernel && actions_.diff ? "response_format_diff" : "response_format_full");
  if (actions_.tile_config) out += "\nOr reply with a tile configuration as one ```json block.\n";
  return out;
}

std::string Feedback::step(const StepView& v) const {
  const ParsedAction& a = v.verdict->action;
  const Verdict& j = *v.verdict;
  std::string head = fmt::format("# Turn {} of {}: ", v.turn, v.max_turns);
  std::string body;
  if (!a.ok) {
    head += "your reply is not a kernel\n";
    body = "- format error: " + a.error + "\n";
  } else if (j.reward.masked) {
    head += "the machine failed, not your kernel\n";
    body = fmt::format("- {} (after {} attempt{})\n", agent::summarise_result(*j.result), j.attempts.size(),
                       j.attempts.size() == 1 ? "" : "s");
  } else {
    head += agent::summarise_result(*j.result) + "\n";
    body = without_trailing_newlines(measured(v)) + "\n";
  }
  body += score_line(j) + best_line(v);
  return head + body + "\n" + next_reply(v);
}

}  // namespace tessera::env::detail
