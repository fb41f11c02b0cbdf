#include <cctype>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "agent/endpoint.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/json_read.hpp"

namespace tessera::agent {

std::string to_string(Provider p) { return p == Provider::openai ? "openai" : "anthropic"; }

Provider parse_provider(const std::string& s) {
  if (s == "openai") return Provider::openai;
  if (s == "anthropic") return Provider::anthropic;
  fail_bad_input(fmt::format("unknown LLM provider '{}' (openai, anthropic)", s));
}

std::string to_string(ChatErrorKind k) {
  switch (k) {
    case ChatErrorKind::none: return "none";
    case ChatErrorKind::network: return "network";
    case ChatErrorKind::timeout: return "timeout";
    case ChatErrorKind::http_status: return "http_status";
    case ChatErrorKind::auth: return "auth";
    case ChatErrorKind::rate_limited: return "rate_limited";
    case ChatErrorKind::server: return "server";
    case ChatErrorKind::malformed: return "malformed";
    case ChatErrorKind::truncated: return "truncated";
    case ChatErrorKind::too_large: return "too_large";
    case ChatErrorKind::content_type: return "content_type";
    case ChatErrorKind::cancelled: return "cancelled";
    case ChatErrorKind::budget: return "budget";
    case ChatErrorKind::cache_miss: return "cache_miss";
    case ChatErrorKind::config: return "config";
  }
  return "unknown";
}

bool is_permanent(ChatErrorKind k) {
  return k == ChatErrorKind::auth || k == ChatErrorKind::http_status || k == ChatErrorKind::config ||
         k == ChatErrorKind::content_type;
}

namespace {
const std::set<std::string>& known_keys() {
  static const std::set<std::string> keys = {
      "name", "provider", "base_url", "model", "api_key_env", "temperature", "top_p", "max_tokens", "seed",
      "extra_body", "extra_headers", "stream", "connect_timeout_s", "total_timeout_s", "max_response_bytes",
      "retry", "max_concurrency", "requests_per_second", "weight"};
  return keys;
}

template <typename T>
T get_as(const nlohmann::json& j, const char* key, const char* type_name) {
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    fail_bad_input(fmt::format("endpoint config: '{}' must be {}", key, type_name));
  }
}

void require_number(const nlohmann::json& j, const char* key) {
  if (!j.at(key).is_number()) fail_bad_input(fmt::format("endpoint config: '{}' must be a number", key));
}

RetryPolicy parse_retry(const nlohmann::json& j) {
  if (!j.is_object()) fail_bad_input("endpoint config: 'retry' must be an object");
  RetryPolicy p;
  for (const auto& [k, v] : j.items()) {
    if (!v.is_number()) fail_bad_input(fmt::format("endpoint config: retry.{} must be a number", k));
    if (k == "max_attempts") p.max_attempts = integer_of<int>(v, "retry.max_attempts");
    else if (k == "initial_backoff_ms") p.initial_backoff = Millis(integer_of<long long>(v, "retry.initial_backoff_ms"));
    else if (k == "multiplier") p.multiplier = v.get<double>();
    else if (k == "max_backoff_ms") p.max_backoff = Millis(integer_of<long long>(v, "retry.max_backoff_ms"));
    else if (k == "jitter") p.jitter = v.get<double>();
    else if (k == "max_retry_after_ms") p.max_retry_after = Millis(integer_of<long long>(v, "retry.max_retry_after_ms"));
    else fail_bad_input(fmt::format("endpoint config: unknown retry key '{}' (max_attempts, initial_backoff_ms, multiplier, max_backoff_ms, jitter, max_retry_after_ms)", k));
  }
  if (p.max_attempts < 1) fail_bad_input("endpoint config: retry.max_attempts must be >= 1");
  return p;
}
}  // namespace

EndpointConfig parse_endpoint_config(const nlohmann::json& j) {
  if (!j.is_object()) fail_bad_input("endpoint config must be a JSON object");
  for (const auto& [k, v] : j.items())
    if (!known_keys().count(k)) fail_bad_input(fmt::format("endpoint config: unknown key '{}' (see docs/agent.md)", k));
  EndpointConfig c;
  if (j.contains("provider")) c.provider = parse_provider(get_as<std::string>(j, "provider", "a string"));
  if (c.provider == Provider::anthropic) c.api_key_env = "ANTHROPIC_API_KEY";
  if (!j.contains("base_url") || !j.contains("model")) fail_bad_input("endpoint config: 'base_url' and 'model' are required");
  c.base_url = get_as<std::string>(j, "base_url", "a string");
  c.model = get_as<std::string>(j, "model", "a string");
  if (c.base_url.empty() || c.model.empty()) fail_bad_input("endpoint config: 'base_url' and 'model' must not be empty");
  if (j.contains("name")) c.name = get_as<std::string>(j, "name", "a string");
  if (j.contains("api_key_env")) c.api_key_env = get_as<std::string>(j, "api_key_env", "a string");
  if (j.contains("temperature")) { require_number(j, "temperature"); c.temperature = j["temperature"].get<double>(); }
  if (j.contains("top_p")) { require_number(j, "top_p"); c.top_p = j["top_p"].get<double>(); }
  if (j.contains("max_tokens")) { require_number(j, "max_tokens"); c.max_tokens = integer_of<int>(j["max_tokens"], "max_tokens"); }
  if (j.contains("seed")) { require_number(j, "seed"); c.seed = integer_of<std::uint64_t>(j["seed"], "seed"); }
  if (j.contains("extra_body")) {
    if (!j["extra_body"].is_object()) fail_bad_input("endpoint config: 'extra_body' must be an object");
    c.extra_body = j["extra_body"];
  }
  if (j.contains("extra_headers"))
    c.extra_headers = get_as<std::map<std::string, std::string>>(j, "extra_headers", "an object of strings");
  if (j.contains("stream")) c.stream = get_as<bool>(j, "stream", "a boolean");
  if (j.contains("connect_timeout_s")) { require_number(j, "connect_timeout_s"); c.connect_timeout_s = j["connect_timeout_s"].get<double>(); }
  if (j.contains("total_timeout_s")) { require_number(j, "total_timeout_s"); c.total_timeout_s = j["total_timeout_s"].get<double>(); }
  if (j.contains("max_response_bytes")) { require_number(j, "max_response_bytes"); c.max_response_bytes = integer_of<std::size_t>(j["max_response_bytes"], "max_response_bytes"); }
  if (j.contains("retry")) c.retry = parse_retry(j["retry"]);
  if (j.contains("max_concurrency")) { require_number(j, "max_concurrency"); c.max_concurrency = integer_of<int>(j["max_concurrency"], "max_concurrency"); }
  if (j.contains("requests_per_second")) { require_number(j, "requests_per_second"); c.requests_per_second = j["requests_per_second"].get<double>(); }
  if (j.contains("weight")) { require_number(j, "weight"); c.weight = j["weight"].get<double>(); }
  if (c.connect_timeout_s <= 0 || c.total_timeout_s <= 0) fail_bad_input("endpoint config: timeouts must be > 0 seconds");
  if (c.weight < 0) fail_bad_input("endpoint config: 'weight' must be >= 0");
  return c;
}

bool is_secret_header(const std::string& name) {
  std::string n;
  for (char ch : name) n += char(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* word : {"auth", "key", "token", "secret", "cookie", "session", "password"})
    if (n.find(word) != std::string::npos) return true;
  return false;
}

nlohmann::json to_json(const EndpointConfig& c) {
  nlohmann::json j = {{"name", c.label()},
                      {"provider", to_string(c.provider)},
                      {"base_url", c.base_url},
                      {"model", c.model},
                      {"api_key_env", c.api_key_env},
                      {"stream", c.stream},
                      {"connect_timeout_s", c.connect_timeout_s},
                      {"total_timeout_s", c.total_timeout_s},
                      {"max_response_bytes", c.max_response_bytes},
                      {"retry",
                       {{"max_attempts", c.retry.max_attempts},
                        {"initial_backoff_ms", c.retry.initial_backoff.count()},
                        {"multiplier", c.retry.multiplier},
                        {"max_backoff_ms", c.retry.max_backoff.count()},
                        {"jitter", c.retry.jitter},
                        {"max_retry_after_ms", c.retry.max_retry_after.count()}}},
                      {"max_concurrency", c.max_concurrency},
                      {"requests_per_second", c.requests_per_second},
                      {"weight", c.weight}};
  if (c.temperature) j["temperature"] = *c.temperature;
  if (c.top_p) j["top_p"] = *c.top_p;
  if (c.max_tokens) j["max_tokens"] = *c.max_tokens;
  if (c.seed) j["seed"] = *c.seed;
  if (!c.extra_body.empty()) j["extra_body"] = c.extra_body;
  nlohmann::json headers = nlohmann::json::object(), redacted = nlohmann::json::array();
  for (const auto& [k, v] : c.extra_headers) {
    if (is_secret_header(k)) redacted.push_back(k);
    else headers[k] = v;
  }
  if (!headers.empty()) j["extra_headers"] = headers;
  if (!redacted.empty()) j["redacted_headers"] = redacted;
  return j;  // never the key itself, only the variable's name
}

EndpointConfig endpoint_from_record(const nlohmann::json& j, std::vector<std::string>* redacted) {
  nlohmann::json copy = j;
  if (copy.is_object() && copy.contains("redacted_headers")) {
    if (redacted != nullptr)
      for (const auto& h : copy["redacted_headers"])
        if (h.is_string()) redacted->push_back(h.get<std::string>());
    copy.erase("redacted_headers");
  }
  return parse_endpoint_config(copy);
}

std::vector<EndpointConfig> load_endpoint_configs(const std::filesystem::path& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    fail_bad_input(fmt::format("endpoint config {}: invalid JSON: {}", path.string(), e.what()));
  }
  std::vector<EndpointConfig> out;
  if (j.is_object() && j.contains("endpoints")) {
    if (!j["endpoints"].is_array() || j["endpoints"].empty())
      fail_bad_input(fmt::format("endpoint config {}: 'endpoints' must be a non-empty array", path.string()));
    for (const auto& e : j["endpoints"]) out.push_back(parse_endpoint_config(e));
  } else {
    out.push_back(parse_endpoint_config(j));
  }
  return out;
}

std::optional<EndpointConfig> endpoint_from_env() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v == nullptr ? std::string() : std::string(v);
  };
  EndpointConfig c;
  c.base_url = env("TESSERA_LLM_BASE_URL");
  c.model = env("TESSERA_LLM_MODEL");
  if (c.base_url.empty() || c.model.empty()) return std::nullopt;
  if (auto p = env("TESSERA_LLM_PROVIDER"); !p.empty()) c.provider = parse_provider(p);
  if (c.provider == Provider::anthropic) c.api_key_env = "ANTHROPIC_API_KEY";
  if (auto k = env("TESSERA_LLM_API_KEY_ENV"); !k.empty()) c.api_key_env = k;
  if (auto s = env("TESSERA_LLM_STREAM"); !s.empty()) c.stream = s != "0" && s != "false";
  return c;
}

}  // namespace tessera::agent
