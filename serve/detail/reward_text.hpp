#pragma once
// The policy's response inside an OpenRLHF query. OpenRLHF posts the query as
// the prompt's tokens and the response's decoded together (special tokens
// included) and the prompt as the dataset's text. The two differ when
// OpenRLHF left-truncates a long prompt to fit --max_len, or when decoding
// the tokens does not give back the text exactly; the response must still be
// found, and when it is not, the caller must say so rather than score the
// whole query as an action.
#include <string>
#include <vector>

namespace tessera::serve::detail {

// Where the response was found, best first. The number is what
// extra_logs.response_fallback carries per sample (docs/serve.md).
enum class ResponseFrom {
  prompt = 0,          // after the prompt, found whole in the query (or no prompt was sent)
  prompt_tail = 1,     // after the prompt's last characters: the query's start was truncated or decoded differently
  assistant_turn = 2,  // after the query's last assistant-turn marker of a known chat template
  not_found = 3,       // nowhere: the caller masks the sample
};

struct ResponseSplit {
  std::string text;  // without leading and trailing whitespace and trailing end-of-turn tokens
  ResponseFrom from = ResponseFrom::not_found;
};

// The shortest tail of the prompt searched for (characters): shorter tails
// match too easily inside the response.
inline constexpr std::size_t kMinPromptTailChars = 32;
// The longest tail searched for first (characters).
inline constexpr std::size_t kMaxPromptTailChars = 512;

ResponseSplit split_response(const std::string& query, const std::string& prompt);

// `s` without trailing whitespace and trailing end-of-turn tokens (any
// number of them, in any order).
std::string strip_end_of_turn(std::string s);

// The end-of-turn and end-of-text tokens stripped from a response's end, as
// the chat templates of Llama 3, Qwen (ChatML), Gemma, DeepSeek, Mistral
// (and Llama 2) and Phi write them; docs/serve.md lists them. A trailing
// token of the form <|...|> on one line is stripped too.
const std::vector<std::string>& end_of_turn_tokens();
// The markers after which those templates put the assistant's turn.
const std::vector<std::string>& assistant_turn_markers();

}  // namespace tessera::serve::detail
