#include "agent/retry.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <thread>

namespace tessera::agent {

namespace {
class SystemClock final : public Clock {
public:
  std::chrono::steady_clock::time_point now() override { return std::chrono::steady_clock::now(); }
  std::chrono::system_clock::time_point wall_now() override { return std::chrono::system_clock::now(); }
  bool sleep_for(Millis duration, const CancelToken* cancel) override {
    const auto end = std::chrono::steady_clock::now() + duration;
    while (true) {
      if (is_cancelled(cancel)) return false;
      const auto left = end - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) return true;
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(left, kCancelPollInterval));
    }
  }
};
}  // namespace

Clock& system_clock() {
  static SystemClock clock;
  return clock;
}

Millis backoff_delay(const RetryPolicy& p, int retry, double unit_random) {
  const double base = double(p.initial_backoff.count()) * std::pow(p.multiplier, std::max(0, retry - 1));
  const double capped = std::min(base, double(p.max_backoff.count()));
  const double jitter = std::clamp(p.jitter, 0.0, 1.0) * std::clamp(unit_random, 0.0, 1.0);
  return Millis(static_cast<long long>(std::llround(capped * (1.0 - jitter))));
}

std::optional<Millis> parse_retry_after(std::string_view value, std::chrono::system_clock::time_point now) {
  std::string v(value);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.erase(v.begin());
  if (v.empty()) return std::nullopt;
  if (std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; })) {
    try {
      const double seconds = std::stod(v);  // some servers send fractions
      return Millis(static_cast<long long>(std::llround(seconds * 1000.0)));
    } catch (...) {
      return std::nullopt;
    }
  }
  const time_t when = curl_getdate(v.c_str(), nullptr);
  if (when < 0) return std::nullopt;
  const auto delta = std::chrono::system_clock::from_time_t(when) - now;
  return std::max(Millis(0), std::chrono::duration_cast<Millis>(delta));
}

bool is_retryable_status(long status) { return status == 408 || status == 429 || status >= 500; }

}  // namespace tessera::agent
