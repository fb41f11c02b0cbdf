#include "serve/detail/reward_text.hpp"

namespace tessera::serve::detail {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void trim_right(std::string& s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) s.pop_back();
}

// One trailing special token, if there is one: <|...|> (ChatML, Llama 3) or
// </s> and <eos> (SentencePiece models).
bool strip_one_special_token(std::string& s) {
  for (const char* t : {"</s>", "<eos>"}) {
    if (ends_with(s, t)) {
      s.resize(s.size() - std::string(t).size());
      return true;
    }
  }
  if (!ends_with(s, "|>")) return false;
  const auto open = s.rfind("<|");
  if (open == std::string::npos || s.find('\n', open) != std::string::npos) return false;
  s.resize(open);
  return true;
}
}  // namespace

std::string response_text(const std::string& query, const std::string& prompt) {
  std::string r = query;
  if (!prompt.empty()) {
    const auto at = query.find(prompt);
    if (at != std::string::npos) r = query.substr(at + prompt.size());
  }
  trim_right(r);
  while (strip_one_special_token(r)) trim_right(r);
  return r;
}

}  // namespace tessera::serve::detail
