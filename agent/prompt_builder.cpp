#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/detail/tile_guide.hpp"
#include "agent/prompt.hpp"
#include "agent/strategies.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"

namespace tessera::agent {

namespace {
std::string task_text(const Task& t) {
  return fmt::format("HGEMM C = A·B{} with M = {}, N = {}, K = {}, layout {} (A is M×K row-major; B is {}; C is M×N row-major), "
                     "fp16 in/out, {} accumulation, epilogue {}. {:.3g} GFLOP per call.",
                     t.epilogue == Epilogue::none ? "" : " + epilogue", t.m, t.n, t.k, to_string(t.layout),
                     t.layout == Layout::TN ? "N×K row-major" : "K×N row-major", t.acc, to_string(t.epilogue), t.flops() / 1e9);
}

// Templates put the fence on the next line; a trailing newline would leave a blank line.
std::string without_trailing_newlines(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// Absent optional sections leave runs of blank lines. Runs are collapsed
// outside code fences only: inside them the kernel source must stay byte-exact,
// since SEARCH blocks quote it.
std::string squeeze_blank_lines_outside_fences(const std::string& text) {
  std::string out;
  bool in_fence = false, previous_blank = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const bool last = end == std::string::npos;
    if (last) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    const bool blank = line.find_first_not_of(" \t\r") == std::string::npos;
    if (line.rfind("```", 0) == 0) in_fence = !in_fence;
    if (!(blank && previous_blank && !in_fence)) out += line + (last ? "" : "\n");
    previous_blank = blank && !in_fence;
    pos = end + 1;
  }
  return out;
}

std::string format_number(double v, const char* fmtstr) { return v > 0 ? fmt::format(fmt::runtime(fmtstr), v) : "unknown"; }
}  // namespace

PromptBuilder::PromptBuilder(PromptOptions options)
    : options_(std::move(options)),
      templates_(options_.prompt_dir.empty() ? default_prompt_dir() : options_.prompt_dir),
      models_(std::make_shared<detail::PriorCache>()) {
  const auto abi = options_.abi_header.empty() ? default_abi_header() : options_.abi_header;
  std::error_code ec;
  if (!std::filesystem::exists(abi, ec))
    fail_bad_input(fmt::format("ABI header not found: {} (set TESSERA_ABI_HEADER)", abi.string()));
  abi_text_ = read_file(abi);
}

std::string PromptBuilder::system_prompt(const ProposalContext& c, bool diff) const {
  const auto& g = c.gpu;
  return render_template(templates_.get("system"),
                         {{"gpu_name", g.name},
                          {"gpu_arch", g.arch},
                          {"sm_count", g.sm_count > 0 ? std::to_string(g.sm_count) : "unknown"},
                          {"smem_kib", g.smem_per_block_optin > 0 ? std::to_string(g.smem_per_block_optin / 1024) : "unknown"},
                          {"l2_mib", format_number(double(g.l2_bytes) / (1024.0 * 1024.0), "{:.0f}")},
                          {"peak_tflops", format_number(g.peak_tflops, "{:.0f}")},
                          {"abi_header", without_trailing_newlines(abi_text_)},
                          {"response_format", templates_.get(diff ? "response_format_diff" : "response_format_full")}},
                         "system");
}

std::string PromptBuilder::user_prompt(const ProposalContext& c, const std::string& picks, std::size_t history,
                                       std::size_t inspirations, std::size_t log_chars) const {
  const std::string strategy_name = c.strategy.empty() ? "none" : c.strategy;
  if (!c.strategy.empty() && find_strategy(c.strategy) == nullptr)
    fail_bad_input(fmt::format("unknown strategy '{}' (known: {})", c.strategy, fmt::join(strategy_names(), ", ")));
  const std::string strategy = templates_.get("strategy_" + strategy_name);

  std::string parent;
  if (c.parent)
    parent = render_template(templates_.get("parent"),
                             {{"name", c.parent->candidate.name.empty() ? "parent" : c.parent->candidate.name},
                              {"source", without_trailing_newlines(c.parent->candidate.source)},
                              {"result", describe_result(c.parent->result, log_chars)}},
                             "parent");
  else
    parent = templates_.get("no_parent");

  std::string hist;
  if (history > 0 && !c.history.empty()) {
    std::string entries;
    const std::size_t first = c.history.size() > history ? c.history.size() - history : 0;
    for (std::size_t i = first; i < c.history.size(); ++i) {
      const auto& h = c.history[i];
      entries += render_template(templates_.get("history_entry"),
                                 {{"name", h.candidate.name.empty() ? fmt::format("attempt {}", i + 1) : h.candidate.name},
                                  {"status", to_string(h.result.status)},
                                  {"summary", summarise_result(h.result)}},
                                 "history_entry");
    }
    hist = render_template(templates_.get("history_header"), {{"entries", entries}}, "history_header");
  }

  std::string insp;
  if (inspirations > 0 && !c.inspirations.empty()) {
    std::string entries;
    for (std::size_t i = 0; i < std::min(inspirations, c.inspirations.size()); ++i) {
      const auto& e = c.inspirations[i];
      entries += render_template(templates_.get("inspiration"),
                                 {{"name", e.candidate.name.empty() ? fmt::format("kernel {}", i + 1) : e.candidate.name},
                                  {"summary", summarise_result(e.result)},
                                  {"source", without_trailing_newlines(e.candidate.source)}},
                                 "inspiration");
    }
    insp = render_template(templates_.get("inspirations_header"), {{"entries", entries}}, "inspirations_header");
  }
  // Never trimmed: without it a re-ask is the prompt that produced the repeat.
  const std::string repeated =
      c.repeated_step >= 0
          ? render_template(templates_.get("repeated"), {{"step", std::to_string(c.repeated_step)}}, "repeated")
          : std::string();
  return squeeze_blank_lines_outside_fences(render_template(templates_.get("user"),
                                                           {{"task", task_text(c.task)},
                                                            {"model_picks", without_trailing_newlines(picks)},
                                                            {"strategy", without_trailing_newlines(strategy)},
                                                            {"parent", without_trailing_newlines(parent)},
                                                            {"history", without_trailing_newlines(hist)},
                                                            {"inspirations", without_trailing_newlines(insp)},
                                                            {"repeated", without_trailing_newlines(repeated)}},
                                                           "user"));
}

std::vector<ChatMessage> PromptBuilder::build(const ProposalContext& c) const {
  return build(c, options_.chars_per_token);
}

std::vector<ChatMessage> PromptBuilder::build(const ProposalContext& c, double chars_per_token) const {
  const Strategy* strategy = find_strategy(c.strategy);
  const bool diff = options_.allow_diff && c.parent.has_value() && !(strategy != nullptr && strategy->full_rewrite);
  const std::string system = system_prompt(c, diff);
  std::size_t history = options_.max_history;
  std::size_t inspirations = std::min(options_.max_inspirations, c.inspirations.size());
  std::size_t log_chars = options_.max_log_chars;
  const std::string picks = options_.model_picks > 0 && templates_.has("model_picks")
                                ? model_picks_section(c, options_.model_picks)
                                : std::string();
  std::string user = user_prompt(c, picks, history, inspirations, log_chars);
  auto tokens = [&] { return approx_tokens(system, chars_per_token) + approx_tokens(user, chars_per_token); };
  auto fits = [&] { return tokens() <= options_.max_prompt_tokens; };
  while (!fits()) {
    if (inspirations > 0) --inspirations;
    else if (history > 0 && !c.history.empty()) history = std::min(history, c.history.size()) - 1;
    else if (log_chars > kMinLogChars) log_chars = std::max(kMinLogChars, log_chars / 2);
    else {
      spdlog::warn("prompt is ~{} tokens, over the budget of {}, even after trimming (the kernel source is never cut)",
                   tokens(), options_.max_prompt_tokens);
      break;
    }
    user = user_prompt(c, picks, history, inspirations, log_chars);
  }
  return {{"system", system}, {"user", user}};
}

}  // namespace tessera::agent
