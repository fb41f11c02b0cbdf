#include "agent/limiter.hpp"

#include <algorithm>

namespace tessera::agent {

ConcurrencyLimiter::ConcurrencyLimiter(int max_in_flight) : max_(max_in_flight) {}

bool ConcurrencyLimiter::acquire(const CancelToken* cancel) {
  std::unique_lock lock(mutex_);
  while (max_ > 0 && in_flight_ >= max_) {
    if (is_cancelled(cancel)) return false;
    // Timed wait: a cancel flag has no way to notify this condition variable.
    cv_.wait_for(lock, kCancelPollInterval);
  }
  if (is_cancelled(cancel)) return false;
  ++in_flight_;
  return true;
}

void ConcurrencyLimiter::release() {
  {
    std::lock_guard lock(mutex_);
    --in_flight_;
  }
  cv_.notify_one();
}

int ConcurrencyLimiter::in_flight() const {
  std::lock_guard lock(mutex_);
  return in_flight_;
}

RateLimiter::RateLimiter(double requests_per_second, Clock& clock) : clock_(clock) {
  if (requests_per_second > 0)
    interval_ = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(1.0 / requests_per_second));
}

bool RateLimiter::wait(const CancelToken* cancel) {
  if (interval_ == std::chrono::steady_clock::duration::zero()) return !is_cancelled(cancel);
  std::chrono::steady_clock::time_point start;
  {
    // Reserve the next start slot, then sleep outside the lock.
    std::lock_guard lock(mutex_);
    start = std::max(next_, clock_.now());
    next_ = start + interval_;
  }
  const auto delay = std::chrono::ceil<Millis>(start - clock_.now());
  if (delay > Millis(0)) return clock_.sleep_for(delay, cancel);
  return !is_cancelled(cancel);
}

}  // namespace tessera::agent
