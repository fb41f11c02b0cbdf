#pragma once
// Per-endpoint admission control: at most N requests in flight, and at most R
// request starts per second. Both waits observe cancellation, so nothing here
// blocks forever once a caller cancels.
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "agent/retry.hpp"

namespace tessera::agent {

class ConcurrencyLimiter {
public:
  explicit ConcurrencyLimiter(int max_in_flight);  // <= 0: unlimited
  // Returns false when cancelled while waiting.
  bool acquire(const CancelToken* cancel);
  void release();
  int in_flight() const;

private:
  int max_;
  int in_flight_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
};

// Holds one slot of a ConcurrencyLimiter for its lifetime.
class LimiterSlot {
public:
  LimiterSlot(ConcurrencyLimiter& limiter, const CancelToken* cancel) : limiter_(limiter), held_(limiter.acquire(cancel)) {}
  ~LimiterSlot() {
    if (held_) limiter_.release();
  }
  LimiterSlot(const LimiterSlot&) = delete;
  LimiterSlot& operator=(const LimiterSlot&) = delete;
  bool held() const noexcept { return held_; }

private:
  ConcurrencyLimiter& limiter_;
  bool held_;
};

// Spaces request starts at least 1/rate apart (no bursts: endpoints that rate
// limit usually count per second or per minute, and smooth is safest).
class RateLimiter {
public:
  RateLimiter(double requests_per_second, Clock& clock);  // <= 0: unlimited
  bool wait(const CancelToken* cancel);  // false when cancelled

private:
  std::chrono::steady_clock::duration interval_{};
  Clock& clock_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point next_{};
};

}  // namespace tessera::agent
