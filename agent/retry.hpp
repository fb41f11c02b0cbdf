#pragma once
// Time, cancellation and the retry policy of the LLM clients. The clock is an
// interface so tests can check backoff timings without sleeping for real.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tessera::agent {

using Millis = std::chrono::milliseconds;

// Cooperative cancellation: set once, observed by waits and transfers.
class CancelToken {
public:
  void cancel() noexcept { flag_.store(true, std::memory_order_relaxed); }
  bool cancelled() const noexcept { return flag_.load(std::memory_order_relaxed); }

private:
  std::atomic<bool> flag_{false};
};

inline bool is_cancelled(const CancelToken* t) noexcept { return t != nullptr && t->cancelled(); }

class Clock {
public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point now() = 0;
  // Wall clock, for Retry-After given as an HTTP date.
  virtual std::chrono::system_clock::time_point wall_now() = 0;
  // Returns false when cancelled before the full duration passed.
  virtual bool sleep_for(Millis duration, const CancelToken* cancel) = 0;
};

// The real clock; its sleep wakes every kCancelPollInterval to notice cancellation.
Clock& system_clock();
inline constexpr Millis kCancelPollInterval{20};

inline constexpr int kDefaultMaxAttempts = 5;                // first try included
inline constexpr Millis kDefaultInitialBackoff{1000};
inline constexpr double kDefaultBackoffMultiplier = 2.0;
inline constexpr Millis kDefaultMaxBackoff{30000};
inline constexpr double kDefaultJitterFraction = 0.25;       // delay drawn from [d*(1-j), d]
inline constexpr Millis kDefaultMaxRetryAfter{120000};       // longer Retry-After: give up

struct RetryPolicy {
  int max_attempts = kDefaultMaxAttempts;
  Millis initial_backoff = kDefaultInitialBackoff;
  double multiplier = kDefaultBackoffMultiplier;
  Millis max_backoff = kDefaultMaxBackoff;
  double jitter = kDefaultJitterFraction;
  Millis max_retry_after = kDefaultMaxRetryAfter;
};

// Delay before retry number `retry` (1 = the first retry), without Retry-After:
// initial * multiplier^(retry-1), capped at max_backoff, then jittered down by
// up to `jitter` of itself using `unit_random` in [0, 1).
Millis backoff_delay(const RetryPolicy& p, int retry, double unit_random);

// Retry-After is either delta-seconds ("3") or an HTTP date. Returns the
// delay from `now`; nullopt when absent or unparseable. A date in the past is 0.
std::optional<Millis> parse_retry_after(std::string_view value, std::chrono::system_clock::time_point now);

// HTTP statuses worth retrying: 408 (request timeout), 429 and every 5xx.
bool is_retryable_status(long status);

}  // namespace tessera::agent
