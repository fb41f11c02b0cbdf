#pragma once
// The two wire formats: request bodies and reply parsing (plain JSON and
// server-sent events) for OpenAI Chat Completions and Anthropic Messages.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/endpoint.hpp"

namespace tessera::agent::detail {

std::string request_url(const EndpointConfig& c);
nlohmann::json build_body(const EndpointConfig& c, const ChatRequest& r);
std::vector<std::string> build_headers(const EndpointConfig& c, const std::string& api_key);

struct ParsedReply {
  bool ok = false;
  ChatErrorKind kind = ChatErrorKind::none;
  std::string error;
  std::string content, reasoning, finish_reason, model;
  Usage usage;  // tokens only
};

ParsedReply parse_reply(Provider provider, const std::string& body, bool server_sent_events);

// The server's own error message from an error body ({"error": {"message"}} and
// friends), else the body's first line; at most kMaxErrorChars.
inline constexpr std::size_t kMaxErrorChars = 300;
std::string server_error_message(const std::string& body);

// Data payloads of server-sent events, in order ("data:" lines of one event joined by '\n').
std::vector<std::string> sse_data(const std::string& stream);

}  // namespace tessera::agent::detail
