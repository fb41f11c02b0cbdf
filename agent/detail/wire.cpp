#include "agent/detail/wire.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/json_read.hpp"

namespace tessera::agent::detail {

namespace {
std::string trimmed_base(const std::string& url) {
  std::string b = url;
  while (!b.empty() && b.back() == '/') b.pop_back();
  return b;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  if (s.size() > kMaxErrorChars) s = s.substr(0, kMaxErrorChars) + "...";
  return s;
}

std::string str_or_empty(const nlohmann::json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
  return {};
}

long long int_or_zero(const nlohmann::json& j, const char* key) {
  const auto& v = field_or_null(j, key);
  // A count some server wrote as a float: kept when a long long holds it (a
  // cast of one out of range would be undefined behaviour), else 0.
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return std::isfinite(d) && std::fabs(d) < 9.0e18 ? static_cast<long long>(d) : 0;
  }
  return integer_or(j, key, 0);
}

// Content may be a string, null, or (some servers) an array of {type,text} parts.
std::string content_text(const nlohmann::json& c) {
  if (c.is_string()) return c.get<std::string>();
  std::string out;
  if (c.is_array())
    for (const auto& part : c) out += str_or_empty(part, "text");
  return out;
}

// Reasoning models name the field differently: reasoning_content (DeepSeek,
// vLLM), reasoning (OpenRouter, Ollama).
std::string reasoning_text(const nlohmann::json& m) {
  std::string r = str_or_empty(m, "reasoning_content");
  return r.empty() ? str_or_empty(m, "reasoning") : r;
}

void openai_usage(const nlohmann::json& u, Usage& usage) {
  if (!u.is_object()) return;
  usage.prompt_tokens = int_or_zero(u, "prompt_tokens");
  usage.completion_tokens = int_or_zero(u, "completion_tokens");
  if (u.contains("completion_tokens_details"))
    usage.reasoning_tokens = int_or_zero(u["completion_tokens_details"], "reasoning_tokens");
}

ParsedReply fail(ChatErrorKind kind, std::string error) {
  ParsedReply r;
  r.kind = kind;
  r.error = one_line(std::move(error));
  return r;
}

std::string embedded_error(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("error") || j["error"].is_null()) return {};
  const auto& e = j["error"];
  if (e.is_string()) return e.get<std::string>();
  std::string m = str_or_empty(e, "message");
  return m.empty() ? e.dump() : m;
}

ParsedReply openai_json(const nlohmann::json& j) {
  if (auto e = embedded_error(j); !e.empty()) return fail(ChatErrorKind::server, "server reported an error: " + e);
  if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty() || !j["choices"][0].is_object())
    return fail(ChatErrorKind::malformed, "reply has no choices[0]");
  const auto& choice = j["choices"][0];
  const auto& msg = choice.contains("message") ? choice["message"] : nlohmann::json::object();
  ParsedReply r;
  r.content = msg.is_object() && msg.contains("content") ? content_text(msg["content"]) : str_or_empty(choice, "text");
  r.reasoning = reasoning_text(msg);
  r.finish_reason = str_or_empty(choice, "finish_reason");
  r.model = str_or_empty(j, "model");
  if (j.contains("usage")) openai_usage(j["usage"], r.usage);
  r.ok = true;
  return r;
}

ParsedReply openai_stream(const std::vector<std::string>& events) {
  ParsedReply r;
  bool done = false;
  for (const auto& data : events) {
    if (data == "[DONE]") {
      done = true;
      break;
    }
    nlohmann::json j = nlohmann::json::parse(data, nullptr, false);
    if (j.is_discarded()) return fail(ChatErrorKind::malformed, "stream event is not JSON: " + data);
    if (auto e = embedded_error(j); !e.empty()) return fail(ChatErrorKind::server, "server reported an error mid-stream: " + e);
    if (r.model.empty()) r.model = str_or_empty(j, "model");
    if (j.contains("usage")) openai_usage(j["usage"], r.usage);
    if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) continue;
    const auto& choice = j["choices"][0];
    if (choice.contains("delta") && choice["delta"].is_object()) {
      const auto& d = choice["delta"];
      if (d.contains("content")) r.content += content_text(d["content"]);
      r.reasoning += reasoning_text(d);
    }
    if (auto f = str_or_empty(choice, "finish_reason"); !f.empty()) r.finish_reason = f;
  }
  if (!done && r.finish_reason.empty())
    return fail(ChatErrorKind::truncated, fmt::format("stream ended without [DONE] or finish_reason after {} events", events.size()));
  r.ok = true;
  return r;
}

ParsedReply anthropic_json(const nlohmann::json& j) {
  if (auto e = embedded_error(j); !e.empty()) return fail(ChatErrorKind::server, "server reported an error: " + e);
  if (!j.contains("content") || !j["content"].is_array()) return fail(ChatErrorKind::malformed, "reply has no content array");
  ParsedReply r;
  for (const auto& block : j["content"]) {
    const std::string type = str_or_empty(block, "type");
    if (type == "text") r.content += str_or_empty(block, "text");
    else if (type == "thinking") r.reasoning += str_or_empty(block, "thinking");
  }
  r.finish_reason = str_or_empty(j, "stop_reason");
  r.model = str_or_empty(j, "model");
  if (j.contains("usage")) {
    r.usage.prompt_tokens = int_or_zero(j["usage"], "input_tokens");
    r.usage.completion_tokens = int_or_zero(j["usage"], "output_tokens");
  }
  r.ok = true;
  return r;
}

ParsedReply anthropic_stream(const std::vector<std::string>& events) {
  ParsedReply r;
  bool done = false;
  for (const auto& data : events) {
    nlohmann::json j = nlohmann::json::parse(data, nullptr, false);
    if (j.is_discarded()) return fail(ChatErrorKind::malformed, "stream event is not JSON: " + data);
    const std::string type = str_or_empty(j, "type");
    if (type == "error") return fail(ChatErrorKind::server, "server reported an error mid-stream: " + embedded_error(j));
    if (type == "message_start" && j.contains("message")) {
      r.model = str_or_empty(j["message"], "model");
      if (j["message"].contains("usage")) r.usage.prompt_tokens = int_or_zero(j["message"]["usage"], "input_tokens");
    } else if (type == "content_block_delta" && j.contains("delta")) {
      const auto& d = j["delta"];
      r.content += str_or_empty(d, "text");
      r.reasoning += str_or_empty(d, "thinking");
    } else if (type == "message_delta") {
      if (j.contains("delta")) r.finish_reason = str_or_empty(j["delta"], "stop_reason");
      if (j.contains("usage")) r.usage.completion_tokens = int_or_zero(j["usage"], "output_tokens");
    } else if (type == "message_stop") {
      done = true;
    }
  }
  if (!done) return fail(ChatErrorKind::truncated, fmt::format("stream ended without message_stop after {} events", events.size()));
  r.ok = true;
  return r;
}
}  // namespace

std::string request_url(const EndpointConfig& c) {
  const std::string base = trimmed_base(c.base_url);
  const std::string suffix = c.provider == Provider::openai ? "/chat/completions" : "/messages";
  return ends_with(base, suffix) ? base : base + suffix;
}

nlohmann::json build_body(const EndpointConfig& c, const ChatRequest& r) {
  nlohmann::json body = {{"model", c.model}};
  nlohmann::json messages = nlohmann::json::array();
  std::string system;
  for (const auto& m : r.messages) {
    if (c.provider == Provider::anthropic && m.role == "system") {
      system += (system.empty() ? "" : "\n\n") + m.content;  // Anthropic takes the system prompt apart
      continue;
    }
    messages.push_back({{"role", m.role}, {"content", m.content}});
  }
  body["messages"] = std::move(messages);
  if (!system.empty()) body["system"] = system;
  const auto temperature = r.temperature ? r.temperature : c.temperature;
  if (temperature) body["temperature"] = *temperature;
  if (c.top_p) body["top_p"] = *c.top_p;
  const auto max_tokens = r.max_tokens ? r.max_tokens : c.max_tokens;
  if (max_tokens) body["max_tokens"] = *max_tokens;
  else if (c.provider == Provider::anthropic) body["max_tokens"] = kDefaultAnthropicMaxTokens;
  const auto seed = r.seed ? r.seed : c.seed;
  if (seed && c.provider == Provider::openai) body["seed"] = *seed;  // Anthropic has no seed
  if (c.stream) {
    body["stream"] = true;
    if (c.provider == Provider::openai) body["stream_options"] = {{"include_usage", true}};
  }
  if (c.extra_body.is_object() && !c.extra_body.empty()) body.merge_patch(c.extra_body);
  return body;
}

std::vector<std::string> build_headers(const EndpointConfig& c, const std::string& api_key) {
  std::vector<std::string> h = {"Content-Type: application/json",
                                c.stream ? "Accept: text/event-stream" : "Accept: application/json"};
  if (c.provider == Provider::anthropic) {
    h.push_back(fmt::format("anthropic-version: {}", kAnthropicVersion));
    if (!api_key.empty()) h.push_back("x-api-key: " + api_key);
  } else if (!api_key.empty()) {
    h.push_back("Authorization: Bearer " + api_key);
  }
  for (const auto& [k, v] : c.extra_headers) h.push_back(k + ": " + v);
  return h;
}

std::vector<std::string> sse_data(const std::string& stream) {
  std::vector<std::string> out;
  std::string current;
  bool has_data = false;
  size_t pos = 0;
  while (pos <= stream.size()) {
    size_t end = stream.find('\n', pos);
    const bool last = end == std::string::npos;
    std::string line = stream.substr(pos, last ? std::string::npos : end - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      if (has_data) out.push_back(current);
      current.clear();
      has_data = false;
    } else if (line.rfind("data:", 0) == 0) {
      std::string v = line.substr(5);
      if (!v.empty() && v.front() == ' ') v.erase(v.begin());
      current += (has_data ? "\n" : "") + v;
      has_data = true;
    }  // event:, id:, retry: and ":" comments carry nothing we need
    if (last) break;
    pos = end + 1;
  }
  // A final event without its blank line is kept: the parser decides whether
  // the stream was complete from its content, not from the framing.
  if (has_data) out.push_back(current);
  return out;
}

ParsedReply parse_reply(Provider provider, const std::string& body, bool server_sent_events) {
  if (server_sent_events) {
    const auto events = sse_data(body);
    return provider == Provider::openai ? openai_stream(events) : anthropic_stream(events);
  }
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded()) {
    // A server that ignored "stream": false, or vice versa, still gets parsed.
    if (body.rfind("data:", 0) == 0) return parse_reply(provider, body, true);
    return fail(ChatErrorKind::malformed, fmt::format("reply is not valid JSON ({} bytes): {}", body.size(), body.substr(0, 120)));
  }
  if (!j.is_object()) return fail(ChatErrorKind::malformed, "reply JSON is not an object");
  return provider == Provider::openai ? openai_json(j) : anthropic_json(j);
}

std::string server_error_message(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_discarded()) {
    if (auto e = embedded_error(j); !e.empty()) return one_line(e);
    if (auto m = str_or_empty(j, "message"); !m.empty()) return one_line(m);
    if (auto d = str_or_empty(j, "detail"); !d.empty()) return one_line(d);
  }
  return one_line(body.substr(0, body.find('\n')));
}

}  // namespace tessera::agent::detail
