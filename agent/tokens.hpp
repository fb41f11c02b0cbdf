#pragma once
// Token counts before a call, for the prompt's token budget: characters
// divided by a chars-per-token ratio. The ratio starts at kCharsPerToken,
// measured with a real tokenizer on this project's prompts (kernel source,
// the ABI header and English), and then learns from the prompt tokens each
// reply reports, since every model's tokenizer differs.
#include <cstddef>
#include <mutex>
#include <string>

namespace tessera::agent {

inline constexpr double kCharsPerToken = 3.2;      // code-heavy prompts; English prose runs nearer 4
inline constexpr double kMinCharsPerToken = 1.0;   // a learned ratio is clamped to [min, max]
inline constexpr double kMaxCharsPerToken = 8.0;
inline constexpr double kRatioPriorTokens = 4000;  // weight of the starting ratio, in tokens seen

// ceil(characters / chars_per_token).
std::size_t approx_tokens(const std::string& text, double chars_per_token = kCharsPerToken);

// The ratio learned so far: (prior weight + characters sent) over (prior
// weight + prompt tokens reported), so one odd reply moves it only a little.
// Thread-safe.
class TokenRatio {
public:
  explicit TokenRatio(double prior = kCharsPerToken);
  // A reply's usage: `prompt_tokens` for a prompt of `prompt_chars` characters.
  // Replies without usage (0 tokens) teach nothing.
  void observe(std::size_t prompt_chars, long long prompt_tokens);
  double chars_per_token() const;
  long long observations() const;

private:
  mutable std::mutex mutex_;
  double prior_;
  double chars_ = 0, tokens_ = 0;
  long long observations_ = 0;
};

}  // namespace tessera::agent
