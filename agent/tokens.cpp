#include "agent/tokens.hpp"

#include <algorithm>
#include <cmath>

namespace tessera::agent {

std::size_t approx_tokens(const std::string& text, double chars_per_token) {
  const double ratio = std::clamp(chars_per_token, kMinCharsPerToken, kMaxCharsPerToken);
  return static_cast<std::size_t>(std::ceil(double(text.size()) / ratio));
}

TokenRatio::TokenRatio(double prior) : prior_(std::clamp(prior, kMinCharsPerToken, kMaxCharsPerToken)) {}

void TokenRatio::observe(std::size_t prompt_chars, long long prompt_tokens) {
  if (prompt_tokens <= 0 || prompt_chars == 0) return;
  std::lock_guard lock(mutex_);
  chars_ += double(prompt_chars);
  tokens_ += double(prompt_tokens);
  ++observations_;
}

double TokenRatio::chars_per_token() const {
  std::lock_guard lock(mutex_);
  const double ratio = (prior_ * kRatioPriorTokens + chars_) / (kRatioPriorTokens + tokens_);
  return std::clamp(ratio, kMinCharsPerToken, kMaxCharsPerToken);
}

long long TokenRatio::observations() const {
  std::lock_guard lock(mutex_);
  return observations_;
}

}  // namespace tessera::agent
