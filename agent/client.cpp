#include "agent/client.hpp"

#include <cstdlib>
#include <mutex>
#include <random>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/detail/curl.hpp"
#include "agent/detail/wire.hpp"
#include "agent/limiter.hpp"

namespace tessera::agent {

namespace {

bool is_retryable(ChatErrorKind k) {
  return k == ChatErrorKind::network || k == ChatErrorKind::timeout || k == ChatErrorKind::rate_limited ||
         k == ChatErrorKind::server || k == ChatErrorKind::truncated;
}

struct Attempt {
  ChatResult result;
  std::optional<Millis> retry_after;
};

class HttpClient final : public LlmClient {
public:
  HttpClient(EndpointConfig config, ClientOptions options)
      : config_(std::move(config)),
        options_(std::move(options)),
        clock_(options_.clock != nullptr ? *options_.clock : system_clock()),
        prices_(options_.prices != nullptr ? *options_.prices : PriceTable::builtin()),
        concurrency_(config_.max_concurrency),
        rate_(config_.requests_per_second, clock_),
        rng_(options_.jitter_seed != 0 ? options_.jitter_seed
                                       : std::uint64_t(clock_.now().time_since_epoch().count())) {}

  const EndpointConfig& config() const override { return config_; }

  ChatResult chat(const ChatRequest& request, const CancelToken* cancel) override {
    const auto started = clock_.now();
    std::optional<BudgetReservation> reservation;
    ChatResult result = run(request, cancel, reservation);
    result.endpoint = config_.label();
    if (result.model.empty()) result.model = config_.model;
    result.usage.latency_ms = std::chrono::duration<double, std::milli>(clock_.now() - started).count();
    result.priced = prices_.price(result.model, result.usage) || prices_.price(config_.model, result.usage);
    if (result.from_cache) result.usage.cost_usd = 0;  // nothing was paid for a replayed reply
    if (reservation) settle(*reservation, result);
    else if (options_.budget && result.ok && !result.from_cache) options_.budget->charge(result.usage);  // no limit: totals only
    if (options_.ledger) options_.ledger->record(config_.label(), result.usage, result.ok, result.from_cache, result.priced);
    return result;
  }

private:
  // Whether the body sent for `request` limits the reply's tokens. extra_body
  // is merged last, so a bound there counts (max_completion_tokens is how
  // OpenAI's reasoning models take it).
  bool bounded(const ChatRequest& request) const {
    if (request.max_tokens || config_.max_tokens || config_.provider == Provider::anthropic) return true;
    for (const char* key : {"max_tokens", "max_completion_tokens"})
      if (config_.extra_body.contains(key) && config_.extra_body[key].is_number_integer()) return true;
    return false;
  }

  // The completion tokens a request allows. Under a budget a request must
  // have a bound, so one without any is sent with kBudgetedMaxTokens.
  long long max_completion_tokens(const ChatRequest& request) const {
    long long n = request.max_tokens ? *request.max_tokens
                  : config_.max_tokens ? *config_.max_tokens
                  : config_.provider == Provider::anthropic ? kDefaultAnthropicMaxTokens
                                                            : 0;
    for (const char* key : {"max_tokens", "max_completion_tokens"})
      if (config_.extra_body.contains(key) && config_.extra_body[key].is_number_integer())
        n = std::max(n, config_.extra_body[key].get<long long>());
    return n > 0 ? n : kBudgetedMaxTokens;
  }

  // Holds the call's worst case against the budget, or says why it may not be sent.
  std::optional<ChatResult> reserve(const ChatRequest& request, std::optional<BudgetReservation>& reservation) {
    Budget& budget = *options_.budget;
    const std::optional<Price> price = prices_.find(config_.model);
    if (!price && budget.max_usd() > 0) {
      ChatResult refused = error(ChatErrorKind::budget,
                                 fmt::format("model '{}' is not in the price table, so a cost budget cannot be kept; "
                                             "add its price to a table named by $TESSERA_PRICES (docs/agent.md) or "
                                             "limit tokens instead", config_.model));
      refused.budget_limit = "usd";
      return refused;
    }
    const CallCost worst = worst_case_cost(max_prompt_tokens(request.messages), max_completion_tokens(request), price);
    std::string why, limit;
    reservation = budget.reserve(worst, why, limit);
    if (reservation) return std::nullopt;
    ChatResult refused = error(ChatErrorKind::budget, why);
    refused.budget_limit = limit;
    return refused;
  }

  // Charges what the call cost. A reply that reports no usage is charged its
  // worst case: nothing else bounds what it was billed. A failed call is
  // charged what it reported (usually nothing: servers bill replies).
  static void settle(BudgetReservation& reservation, const ChatResult& result) {
    if (result.from_cache) return reservation.settle(0, 0);
    const long long tokens = result.usage.prompt_tokens + result.usage.completion_tokens;
    if (result.ok && tokens == 0) return reservation.settle(reservation.reserved().tokens(), reservation.reserved().usd);
    reservation.settle(tokens, result.usage.cost_usd);
  }

  ChatResult run(const ChatRequest& request, const CancelToken* cancel, std::optional<BudgetReservation>& reservation) {
    // The cache key is the request as asked; a bound added for the budget
    // below does not change which recorded reply it is.
    const nlohmann::json body = detail::build_body(config_, request);
    std::string key;
    if (options_.cache && options_.cache->mode() != CacheMode::off) {
      key = ResponseCache::key(config_, body, request.sample_index);
      if (auto hit = options_.cache->lookup(key)) return *hit;
      if (options_.cache->mode() == CacheMode::replay) {
        auto miss = error(ChatErrorKind::cache_miss,
                          fmt::format("replay cache miss: no recorded reply for model '{}' at {} (sample {}, key {}) in {}; "
                                      "record it first with cache mode read_write",
                                      config_.model, config_.base_url, request.sample_index, key,
                                      options_.cache->dir().string()));
        spdlog::error("{}", miss.error);
        return miss;
      }
    }
    nlohmann::json sent = body;
    if (options_.budget && options_.budget->limited()) {
      if (auto refused = reserve(request, reservation)) return *refused;
      if (!bounded(request)) {
        ChatRequest with_bound = request;
        with_bound.max_tokens = kBudgetedMaxTokens;
        sent = detail::build_body(config_, with_bound);
      }
    }
    ChatResult result = with_retries(sent, cancel);
    if (result.ok && !key.empty()) options_.cache->store(key, sent, result);
    return result;
  }

  ChatResult with_retries(const nlohmann::json& body, const CancelToken* cancel) {
    const std::string api_key = read_api_key();
    detail::HttpRequest http;
    http.url = detail::request_url(config_);
    http.headers = detail::build_headers(config_, api_key);
    http.body = body.dump();
    http.connect_timeout_s = config_.connect_timeout_s;
    http.total_timeout_s = config_.total_timeout_s;
    http.max_response_bytes = config_.max_response_bytes;
    const int max_attempts = std::max(1, config_.retry.max_attempts);
    ChatResult last;
    for (int attempt = 1;; ++attempt) {
      Attempt a = attempt_once(http, cancel);
      a.result.attempts = attempt;
      last = std::move(a.result);
      if (last.ok || !is_retryable(last.error_kind)) return last;
      if (attempt >= max_attempts) {
        last.error = fmt::format("{} (gave up after {} attempts)", last.error, attempt);
        return last;
      }
      Millis delay = backoff_delay(config_.retry, attempt, unit_random());
      if (a.retry_after) {
        if (*a.retry_after > config_.retry.max_retry_after) {
          last.error = fmt::format("{} (server asked to retry after {} ms, more than max_retry_after {} ms; not retrying)",
                                   last.error, a.retry_after->count(), config_.retry.max_retry_after.count());
          return last;
        }
        delay = *a.retry_after;  // the server knows its own limits better than our backoff
      }
      spdlog::warn("LLM {} attempt {}/{} failed: {}; retrying in {} ms", config_.label(), attempt, max_attempts,
                   last.error, delay.count());
      if (!clock_.sleep_for(delay, cancel)) return error(ChatErrorKind::cancelled, "cancelled while waiting to retry");
    }
  }

  Attempt attempt_once(const detail::HttpRequest& http, const CancelToken* cancel) {
    if (!rate_.wait(cancel)) return {error(ChatErrorKind::cancelled, "cancelled while rate limited"), std::nullopt};
    LimiterSlot slot(concurrency_, cancel);
    if (!slot.held()) return {error(ChatErrorKind::cancelled, "cancelled while waiting for a concurrency slot"), std::nullopt};
    const detail::HttpResponse r = detail::http_post(http, cancel);
    return classify(http.url, r);
  }

  Attempt classify(const std::string& url, const detail::HttpResponse& r) {
    Attempt a;
    a.result.http_status = r.status;
    if (r.cancelled) return {error(ChatErrorKind::cancelled, "cancelled during the request"), std::nullopt};
    if (r.too_large)
      return {error(ChatErrorKind::too_large, fmt::format("response from {} exceeded the limit of {} bytes (max_response_bytes)",
                                                          url, config_.max_response_bytes)), std::nullopt};
    const bool got_status = r.status >= 100;
    if (r.code != CURLE_OK && !(r.status >= 200 && r.status < 300 && partial(r.code))) {
      if (r.code == CURLE_OPERATION_TIMEDOUT)
        return {error(ChatErrorKind::timeout, fmt::format("request to {} timed out: {}", url, r.curl_error)), std::nullopt};
      if (r.code == CURLE_URL_MALFORMAT || r.code == CURLE_UNSUPPORTED_PROTOCOL)
        return {error(ChatErrorKind::config, fmt::format("bad endpoint URL {}: {}", url, r.curl_error)), std::nullopt};
      if (!got_status)
        return {error(ChatErrorKind::network, fmt::format("request to {} failed: {}", url, r.curl_error)), std::nullopt};
    }
    if (r.status == 401 || r.status == 403) {
      a.result = error(ChatErrorKind::auth, fmt::format("authentication failed (HTTP {}) at {}: {}; check ${} (api_key_env)",
                                                        r.status, url, detail::server_error_message(r.body), config_.api_key_env));
      a.result.http_status = r.status;
      return a;
    }
    if (r.status < 200 || r.status >= 300) {
      const auto kind = r.status == 429 ? ChatErrorKind::rate_limited
                        : is_retryable_status(r.status) ? ChatErrorKind::server
                                                        : ChatErrorKind::http_status;
      a.result = error(kind, fmt::format("HTTP {} from {}: {}", r.status, url, detail::server_error_message(r.body)));
      a.result.http_status = r.status;
      if (r.retry_after && kind != ChatErrorKind::http_status) a.retry_after = parse_retry_after(*r.retry_after, clock_.wall_now());
      return a;
    }
    const bool sse = r.content_type == "text/event-stream";
    if (!sse && r.content_type != "application/json" && !r.content_type.empty()) {
      a.result = error(ChatErrorKind::content_type,
                       fmt::format("unexpected Content-Type '{}' from {} (expected application/json or text/event-stream); "
                                   "is base_url the API root (e.g. .../v1)?", r.content_type, url));
      a.result.http_status = r.status;
      return a;
    }
    detail::ParsedReply p = detail::parse_reply(config_.provider, r.body, sse);
    if (r.code != CURLE_OK && p.ok) {
      p.ok = false;
      p.kind = ChatErrorKind::truncated;
      p.error = "connection closed before the reply was complete: " + r.curl_error;
    } else if (r.code != CURLE_OK && p.kind == ChatErrorKind::malformed) {
      p.kind = ChatErrorKind::truncated;  // a cut-off body is not a malformed one
      p.error = "connection closed before the reply was complete: " + r.curl_error;
    }
    a.result.http_status = r.status;
    if (!p.ok) {
      a.result.error_kind = p.kind;
      a.result.error = p.error;
      return a;
    }
    a.result.ok = true;
    a.result.content = std::move(p.content);
    a.result.reasoning = std::move(p.reasoning);
    a.result.finish_reason = std::move(p.finish_reason);
    a.result.model = std::move(p.model);
    a.result.usage = p.usage;
    return a;
  }

  static bool partial(CURLcode c) { return c == CURLE_PARTIAL_FILE || c == CURLE_RECV_ERROR || c == CURLE_GOT_NOTHING; }

  std::string read_api_key() const {
    if (config_.api_key_env.empty()) return {};
    const char* v = std::getenv(config_.api_key_env.c_str());
    return v == nullptr ? std::string() : std::string(v);  // local servers need none
  }

  double unit_random() {
    std::lock_guard lock(rng_mutex_);
    return std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
  }

  static ChatResult error(ChatErrorKind kind, std::string message) {
    ChatResult r;
    r.error_kind = kind;
    r.error = std::move(message);
    return r;
  }

  EndpointConfig config_;
  ClientOptions options_;
  Clock& clock_;
  const PriceTable& prices_;
  ConcurrencyLimiter concurrency_;
  RateLimiter rate_;
  std::mutex rng_mutex_;
  std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<LlmClient> make_client(EndpointConfig config, ClientOptions options) {
  if (config.base_url.empty() || config.model.empty()) fail_bad_input("LLM endpoint needs a base URL and a model");
  return std::make_unique<HttpClient>(std::move(config), std::move(options));
}

}  // namespace tessera::agent
