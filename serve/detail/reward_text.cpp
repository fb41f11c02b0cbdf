#include "serve/detail/reward_text.hpp"

#include <algorithm>
#include <optional>

namespace tessera::serve::detail {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

void trim_right(std::string& s) {
  while (!s.empty() && is_space(s.back())) s.pop_back();
}

std::string trim_left(const std::string& s, std::size_t from) {
  while (from < s.size() && is_space(s[from])) ++from;
  return s.substr(from);
}

// One trailing end-of-turn token, if there is one.
bool strip_one_token(std::string& s) {
  for (const auto& t : end_of_turn_tokens()) {
    if (ends_with(s, t)) {
      s.resize(s.size() - t.size());
      return true;
    }
  }
  // Any other special token of the <|...|> form, on one line.
  if (!ends_with(s, "|>")) return false;
  const auto open = s.rfind("<|");
  if (open == std::string::npos || s.find('\n', open) != std::string::npos) return false;
  s.resize(open);
  return true;
}

std::optional<ResponseSplit> after_last_assistant_turn(const std::string& query);

// The response that starts at `at` in the query. A prompt sent without its
// chat template is followed by the template's end of the user's turn and the
// assistant's header: the response starts after those.
ResponseSplit response_at(const std::string& query, std::size_t at, ResponseFrom from) {
  const std::string rest = query.substr(at);
  if (auto r = after_last_assistant_turn(rest)) return {r->text, from};
  return {strip_end_of_turn(trim_left(rest, 0)), from};
}

// After the first occurrence of the prompt's longest tail found in the query:
// a left-truncated query starts inside the prompt, and a prompt decoded
// differently differs somewhere, most often near its start.
std::optional<ResponseSplit> after_prompt_tail(const std::string& query, const std::string& prompt) {
  for (std::size_t len = std::min(kMaxPromptTailChars, prompt.size()); len >= kMinPromptTailChars; len /= 2) {
    const auto tail = prompt.substr(prompt.size() - len);
    const auto at = query.find(tail);
    if (at != std::string::npos) return response_at(query, at + len, ResponseFrom::prompt_tail);
  }
  return std::nullopt;
}

// After the last assistant-turn marker of a known chat template, and the
// separator Phi-4 puts after it.
std::optional<ResponseSplit> after_last_assistant_turn(const std::string& query) {
  std::size_t best = std::string::npos, best_end = 0;
  for (const auto& m : assistant_turn_markers()) {
    const auto at = query.rfind(m);
    if (at != std::string::npos && (best == std::string::npos || at > best)) {
      best = at;
      best_end = at + m.size();
    }
  }
  if (best == std::string::npos) return std::nullopt;
  static const std::string kSeparator = "<|im_sep|>";
  if (query.compare(best_end, kSeparator.size(), kSeparator) == 0) best_end += kSeparator.size();
  return ResponseSplit{strip_end_of_turn(trim_left(query, best_end)), ResponseFrom::assistant_turn};
}

}  // namespace

const std::vector<std::string>& end_of_turn_tokens() {
  static const std::vector<std::string> tokens = {
      "<|eot_id|>", "<|eom_id|>", "<|end_of_text|>",  // Llama 3
      "<|im_end|>", "<|endoftext|>",                  // Qwen and other ChatML templates, GPT-2
      "<end_of_turn>", "<eos>",                       // Gemma
      "<｜end▁of▁sentence｜>", "<|EOT|>",             // DeepSeek (V2, V3, R1; Coder)
      "</s>",                                         // Mistral, Llama 2
      "<|end|>",                                      // Phi-3
  };
  return tokens;
}

const std::vector<std::string>& assistant_turn_markers() {
  static const std::vector<std::string> markers = {
      "<|start_header_id|>assistant<|end_header_id|>",  // Llama 3
      "<|im_start|>assistant",                          // Qwen and other ChatML templates, Phi-4
      "<start_of_turn>model",                           // Gemma
      "<｜Assistant｜>",                                // DeepSeek V3, R1
      "[/INST]",                                        // Mistral, Llama 2
      "<|assistant|>",                                  // Phi-3
  };
  return markers;
}

std::string strip_end_of_turn(std::string s) {
  trim_right(s);
  while (strip_one_token(s)) trim_right(s);
  return s;
}

ResponseSplit split_response(const std::string& query, const std::string& prompt) {
  if (prompt.empty()) {
    // Nothing to find: the query is the response, or ends with one after a turn marker.
    if (auto r = after_last_assistant_turn(query)) return *r;
    return response_at(query, 0, ResponseFrom::prompt);
  }
  if (const auto at = query.find(prompt); at != std::string::npos)
    return response_at(query, at + prompt.size(), ResponseFrom::prompt);
  if (auto r = after_prompt_tail(query, prompt)) return *r;
  if (auto r = after_last_assistant_turn(query)) return *r;
  return {"", ResponseFrom::not_found};
}

}  // namespace tessera::serve::detail
