#include "env/detail/feedback.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "tile/config.hpp"

namespace tessera::env::detail {

namespace {

constexpr std::size_t kDiagnosticContextLines = 2;  // NVRTC prints the source line and a caret under each
constexpr std::size_t kMinLogChars = 200;           // a shorter log explains nothing: left out instead

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

// Compiler output that changes what the policy writes next: each error and
// warning with the two lines NVRTC prints under it (the source line and the
// caret) and the closing count. Informational lines (ptxas info, function
// properties) repeat what the resources line says. A log with no error or
// warning is kept as it is.
std::string decision_log(const std::string& log) {
  std::vector<std::string> lines;
  std::size_t from = 0;
  for (auto at = log.find('\n'); from <= log.size(); at = log.find('\n', from)) {
    if (at == std::string::npos) at = log.size();
    lines.push_back(log.substr(from, at - from));
    from = at + 1;
  }
  std::string out;
  std::size_t keep_until = 0;  // lines below an error or warning, kept as its context
  bool any = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& l = lines[i];
    const bool diagnostic = l.find("error") != std::string::npos || l.find("warning") != std::string::npos;
    if (diagnostic) {
      any = true;
      keep_until = i + 1 + kDiagnosticContextLines;
    }
    if (diagnostic || i < keep_until) out += l + "\n";
  }
  return any ? without_trailing_newlines(out) : log;
}

std::size_t minus(std::size_t a, std::size_t b) { return a > b ? a - b : 0; }

// `text` cut at a line boundary to at most `room` characters, saying so.
std::string cut_to(const std::string& text, std::size_t room) {
  if (text.size() <= room) return text;
  const std::string note = fmt::format("[... {} characters cut to fit the observation budget]\n", text.size());
  if (room <= note.size()) return "";
  auto end = text.rfind('\n', room - note.size());
  end = end == std::string::npos ? 0 : end + 1;
  return text.substr(0, end) + note;
}

}  // namespace

std::string TaskPrompt::text() const { return system + "\n\n" + user; }

nlohmann::json TaskPrompt::messages() const {
  return nlohmann::json::array({{{"role", "system"}, {"content", system}}, {{"role", "user"}, {"content", user}}});
}

Feedback::Feedback(const EnvConfig& config)
    : actions_(config.actions),
      max_log_chars_(config.max_log_chars),
      max_observation_chars_(config.max_observation_chars),
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

std::string Feedback::fitted_result(const EvalResult& full, std::size_t room) const {
  EvalResult r = full;
  r.compile.log = decision_log(r.compile.log);
  std::string text;
  for (std::size_t log_chars = std::min(max_log_chars_, room);; log_chars /= 2) {
    if (log_chars < kMinLogChars) {
      r.compile.log.clear();
      log_chars = 0;
    }
    text = agent::describe_result(r, log_chars);
    if (text.size() <= room || log_chars == 0) break;
  }
  return cut_to(text, room);
}

// The kernel is shown when the policy did not write its text itself and it
// fits: after a diff (so the next diff can quote it). A tile config's kernel
// is the tile compiler's, tens of kilobytes the policy cannot act on: the
// config as compiled stands for it.
Feedback::Measured Feedback::measured(const StepView& v, std::size_t room) const {
  const EvalResult& r = *v.verdict->result;
  const std::string& kind = v.verdict->action.kind;
  const std::string heading = "## What the harness measured\n";
  if (kind == "device_only" || kind == "translation_unit")
    return {heading + fitted_result(r, minus(room, heading.size())), true};
  if (kind == "tile_config") {
    const std::string config = "- your tile config, as compiled (the tile compiler wrote the kernel, not shown: reply "
                               "with a tile config or a complete kernel): " + v.verdict->action.tile_config.dump() + "\n";
    return {cut_to(heading + config, room) + fitted_result(r, minus(room, heading.size() + config.size())),
            false};
  }
  const std::string source = without_trailing_newlines(v.verdict->action.candidate.source);
  const auto with_kernel = [&](const std::string& result) {
    return agent::render_template(templates_.get("parent"),
                                  {{"name", v.verdict->action.candidate.name}, {"source", source}, {"result", result}},
                                  "parent");
  };
  const std::size_t frame = with_kernel("").size();
  if (frame + kMinLogChars < room) {
    const std::string result = fitted_result(r, minus(room, frame));
    return {with_kernel(result), true};
  }
  const std::string note = fmt::format(
      "- the kernel after your diff ({} characters) is not shown: it does not fit the observation budget of {} "
      "characters; reply with a complete kernel\n",
      source.size(), max_observation_chars_);
  return {heading + note + fitted_result(r, minus(room, heading.size() + note.size())), false};
}

std::string Feedback::next_reply(const StepView& v, bool diff_offered) const {
  if (v.done) return "The episode is over.\n";
  const int left = v.max_turns - v.turn;
  std::string out = fmt::format("You have {} more turn{}. ", left, left == 1 ? "" : "s");
  const bool diff = v.have_kernel && diff_offered && actions_.diff;
  out += templates_.get(diff ? "response_format_diff" : "response_format_full");
  if (actions_.tile_config) out += "\nOr reply with a tile configuration as one ```json block.\n";
  return out;
}

std::string Feedback::step(const StepView& v) const {
  const ParsedAction& a = v.verdict->action;
  const Verdict& j = *v.verdict;
  std::string head = fmt::format("# Turn {} of {}: ", v.turn, v.max_turns);
  std::string body;
  bool kernel_shown = true;
  // The end is fixed; what the harness measured gets the room that is left
  // (sized with the longer reply format, so the budget holds either way).
  const std::string end = score_line(j) + best_line(v) + "\n";
  const std::size_t fixed = end.size() + next_reply(v, true).size();
  if (!a.ok) {
    head += "your reply is not a kernel\n";
    body = cut_to("- format error: " + a.error + "\n", room_left(head.size() + fixed));
  } else if (j.reward.masked) {
    head += "the machine failed, not your kernel\n";
    body = fmt::format("- {} (after {} attempt{})\n", agent::summarise_result(*j.result), j.attempts.size(),
                       j.attempts.size() == 1 ? "" : "s");
  } else {
    head += agent::summarise_result(*j.result) + "\n";
    auto m = measured(v, room_left(head.size() + fixed));
    body = without_trailing_newlines(m.text) + "\n";
    kernel_shown = m.kernel_shown;
  }
  return head + body + end + next_reply(v, kernel_shown);
}

std::size_t Feedback::room_left(std::size_t used) const { return minus(max_observation_chars_, used); }

}  // namespace tessera::env::detail
