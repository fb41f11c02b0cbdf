#pragma once
// LLM endpoints: configuration, one chat call, and the client interface.
// Providers: OpenAI-compatible Chat Completions (OpenAI, vLLM, SGLang,
// llama.cpp server, Ollama, DeepSeek, OpenRouter...) and Anthropic Messages.
// A failed call is data (ChatResult::ok == false), never an exception.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/proposer.hpp"
#include "agent/retry.hpp"

namespace tessera::agent {

enum class Provider { openai, anthropic };
std::string to_string(Provider p);
Provider parse_provider(const std::string& s);  // throws bad_input

inline constexpr double kDefaultConnectTimeoutS = 10.0;
inline constexpr double kDefaultTotalTimeoutS = 600.0;   // per attempt; reasoning models are slow
inline constexpr std::size_t kDefaultMaxResponseBytes = 16u << 20;  // 16 MiB
inline constexpr int kDefaultMaxConcurrency = 8;
inline constexpr double kDefaultRequestsPerSecond = 0;  // unlimited
inline constexpr int kDefaultAnthropicMaxTokens = 8192;  // Anthropic requires max_tokens
// Under a token or cost budget every call needs a bound on its reply: a
// request with no max_tokens is sent with this one (completion tokens).
inline constexpr int kBudgetedMaxTokens = 16384;
inline constexpr const char* kDefaultApiKeyEnv = "OPENAI_API_KEY";
inline constexpr const char* kAnthropicVersion = "2023-06-01";

struct EndpointConfig {
  std::string name;  // label for logs, ensembles and `model` selection; defaults to `model`
  Provider provider = Provider::openai;
  std::string base_url;  // e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1
  std::string model;
  std::string api_key_env = kDefaultApiKeyEnv;  // empty or unset variable: no auth header
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<int> max_tokens;
  std::optional<std::uint64_t> seed;
  nlohmann::json extra_body = nlohmann::json::object();  // merged into the request body (JSON merge patch)
  std::map<std::string, std::string> extra_headers;
  bool stream = false;
  double connect_timeout_s = kDefaultConnectTimeoutS;
  double total_timeout_s = kDefaultTotalTimeoutS;
  std::size_t max_response_bytes = kDefaultMaxResponseBytes;
  RetryPolicy retry;
  int max_concurrency = kDefaultMaxConcurrency;
  double requests_per_second = kDefaultRequestsPerSecond;
  double weight = 1.0;  // ensemble weight

  const std::string& label() const { return name.empty() ? model : name; }
};

// Strict parsing of one endpoint object (docs/agent.md lists the keys);
// unknown keys are bad_input so typos do not pass silently.
EndpointConfig parse_endpoint_config(const nlohmann::json& j);
// Every key parse_endpoint_config reads, so a run can be resumed from it. It
// holds the name of the key's variable, never a key: extra headers that may
// carry a secret (is_secret_header) are left out and named under
// "redacted_headers", which endpoint_from_record reports.
nlohmann::json to_json(const EndpointConfig& c);
// Reads to_json's output back. `redacted` (when given) receives the names of
// the headers that were left out.
EndpointConfig endpoint_from_record(const nlohmann::json& j, std::vector<std::string>* redacted = nullptr);
// Authorization, cookies, and any name holding "key", "token", "secret" or "auth".
bool is_secret_header(const std::string& name);
// A file with one endpoint object, or {"endpoints": [...]} (an ensemble).
std::vector<EndpointConfig> load_endpoint_configs(const std::filesystem::path& path);

// TESSERA_LLM_BASE_URL and TESSERA_LLM_MODEL (both required), optional
// TESSERA_LLM_API_KEY_ENV (default OPENAI_API_KEY), TESSERA_LLM_PROVIDER
// (openai | anthropic), TESSERA_LLM_STREAM (0/1). nullopt when either of the
// two required variables is unset or empty.
std::optional<EndpointConfig> endpoint_from_env();

struct ChatRequest {
  std::vector<ChatMessage> messages;
  std::optional<double> temperature;  // overrides the endpoint's
  std::optional<std::uint64_t> seed;
  std::optional<int> max_tokens;
  std::uint64_t sample_index = 0;  // part of the cache key: distinct samples of one prompt
};

enum class ChatErrorKind {
  none,
  network,         // connection refused/reset, DNS: retried
  timeout,         // connect or total timeout: retried
  http_status,     // a non-retryable 4xx other than auth
  auth,            // 401/403: not retried
  rate_limited,    // 429 after all retries
  server,          // 5xx after all retries
  malformed,       // body is not the JSON/SSE we expected: not retried
  truncated,       // stream ended before completion: retried
  too_large,       // response over max_response_bytes: not retried
  content_type,    // unexpected Content-Type: not retried
  cancelled,
  budget,
  cache_miss,      // replay mode and no recorded response
  config,          // bad URL, missing key variable...
};
std::string to_string(ChatErrorKind k);
// Errors that no retry and no other prompt can fix: the key, the model name or
// the URL is wrong (auth, http_status, config, content_type). A search stops
// after a few of them in a row instead of spending its steps on them.
bool is_permanent(ChatErrorKind k);

struct ChatResult {
  bool ok = false;
  ChatErrorKind error_kind = ChatErrorKind::none;
  std::string error;  // one line
  long http_status = 0;
  std::string content;
  std::string reasoning;      // reasoning_content / reasoning / thinking, when the model sends it
  std::string finish_reason;  // stop | length | ...
  std::string model;          // as the server reported it (else the configured one)
  std::string endpoint;       // EndpointConfig::label()
  Usage usage;                // tokens, cost (0 when unpriced or cached), latency
  bool priced = true;         // false: model missing from the price table
  bool from_cache = false;
  int attempts = 0;
  std::string budget_limit;   // error_kind budget: the limit that refused the call, "tokens" or "usd"
};

class LlmClient {
public:
  virtual ~LlmClient() = default;
  virtual const EndpointConfig& config() const = 0;
  virtual ChatResult chat(const ChatRequest& request, const CancelToken* cancel = nullptr) = 0;
};

}  // namespace tessera::agent
