#pragma once
// Prompts are built from template files (agent/prompts/*.md) with
// {{placeholder}} substitution, trimmed to a token budget estimated with a
// chars-per-token ratio (agent/tokens.hpp).
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/proposer.hpp"
#include "agent/tokens.hpp"

namespace tessera::agent {

inline constexpr std::size_t kDefaultMaxPromptTokens = 24000;
inline constexpr std::size_t kDefaultMaxHistory = 6;        // attempts
inline constexpr std::size_t kDefaultMaxInspirations = 2;   // kernels
inline constexpr std::size_t kDefaultMaxLogChars = 3000;    // compile log shown to the model
inline constexpr std::size_t kMinLogChars = 400;            // trimming stops here

// Replaces each {{name}} (spaces inside the braces allowed) with values[name].
// Values are inserted verbatim and never rescanned (kernel code is full of
// braces). An unknown placeholder is a bad_input error naming the template.
std::string render_template(const std::string& text, const std::map<std::string, std::string>& values,
                            const std::string& template_name);

// $TESSERA_PROMPT_DIR, else the source tree's agent/prompts.
std::filesystem::path default_prompt_dir();
// $TESSERA_ABI_HEADER, else core/abi/tessera_abi.cuh next to the prompt dir's tree.
std::filesystem::path default_abi_header();

// Reads <dir>/<name>.md once and keeps it.
class PromptTemplates {
public:
  explicit PromptTemplates(std::filesystem::path dir);
  const std::string& get(const std::string& name) const;  // throws bad_input when missing
  bool has(const std::string& name) const;
  const std::filesystem::path& dir() const { return dir_; }

private:
  std::filesystem::path dir_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::string> cache_;
};

// The measurement of one kernel as the model reads it: status, compile log
// (trimmed to max_log_chars), resources, verification, timing, speedup,
// counters and a one-line bottleneck reading.
std::string describe_result(const EvalResult& r, std::size_t max_log_chars);
// One line: "ok, 812.3 us, 0.91x vs cublas" / "compile_error: ...".
std::string summarise_result(const EvalResult& r);

inline constexpr std::size_t kDefaultModelPicks = 5;

struct PromptOptions {
  std::filesystem::path prompt_dir;  // empty: default_prompt_dir()
  std::filesystem::path abi_header;  // empty: default_abi_header()
  std::size_t max_prompt_tokens = kDefaultMaxPromptTokens;
  std::size_t max_history = kDefaultMaxHistory;
  std::size_t max_inspirations = kDefaultMaxInspirations;
  std::size_t max_log_chars = kDefaultMaxLogChars;
  bool allow_diff = true;  // offer SEARCH/REPLACE edits when there is a parent
  // The cost model's top picks for the task, with their predicted times
  // (model_picks.md; 0: none). A few hundred characters, never trimmed.
  std::size_t model_picks = kDefaultModelPicks;
  double chars_per_token = kCharsPerToken;  // for the budget; build() may be given a learned one
};

namespace detail {
class PriorCache;
}

class PromptBuilder {
public:
  explicit PromptBuilder(PromptOptions options);  // throws bad_input if templates or the ABI header are missing
  // [system, user]. Trims to max_prompt_tokens by dropping inspirations, then
  // the oldest history, then shortening the compile log; the parent's source
  // is never cut (a diff must quote it exactly). Tokens are estimated at
  // options().chars_per_token, or at the given ratio (one learned from replies).
  std::vector<ChatMessage> build(const ProposalContext& context) const;
  std::vector<ChatMessage> build(const ProposalContext& context, double chars_per_token) const;
  const PromptOptions& options() const { return options_; }

private:
  std::string system_prompt(const ProposalContext& c, bool diff) const;
  // `picks`: the model-picks section, made once per build (ranking the space is not free).
  std::string user_prompt(const ProposalContext& c, const std::string& picks, std::size_t history,
                          std::size_t inspirations, std::size_t log_chars) const;
  // The cost model's first `count` picks for the task (model_picks.cpp).
  std::string model_picks_section(const ProposalContext& c, std::size_t count) const;

  PromptOptions options_;
  PromptTemplates templates_;
  std::string abi_text_;
  // The cost model of each GPU kind, read from disk once (a shipped model is
  // megabytes of trees: about a second to load) and shared by the builder's copies.
  std::shared_ptr<detail::PriorCache> models_;
};

}  // namespace tessera::agent
