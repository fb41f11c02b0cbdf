#pragma once
// The policy's response inside an OpenRLHF query: the query is the prompt
// and the response decoded together, special tokens included.
#include <string>

namespace tessera::serve::detail {

// The text after `prompt` in `query` (all of `query` when the prompt is
// empty or not found), without trailing end-of-turn tokens such as
// <|im_end|>, <|eot_id|> or </s>.
std::string response_text(const std::string& query, const std::string& prompt);

}  // namespace tessera::serve::detail
