#pragma once
// A clock whose sleeps return at once and advance virtual time, recording
// each requested delay so tests can check backoff schedules exactly.
#include <mutex>
#include <vector>

#include "agent/retry.hpp"

namespace tessera::testing {

class FakeClock final : public agent::Clock {
public:
  std::chrono::steady_clock::time_point now() override {
    std::lock_guard lock(mutex_);
    return start_ + offset_;
  }
  std::chrono::system_clock::time_point wall_now() override {
    std::lock_guard lock(mutex_);
    return wall_start_ + offset_;
  }
  bool sleep_for(agent::Millis d, const agent::CancelToken* cancel) override {
    std::lock_guard lock(mutex_);
    sleeps_.push_back(d);
    offset_ += d;
    return !agent::is_cancelled(cancel);
  }
  std::vector<agent::Millis> sleeps() const {
    std::lock_guard lock(mutex_);
    return sleeps_;
  }
  void set_wall(std::chrono::system_clock::time_point t) {
    std::lock_guard lock(mutex_);
    wall_start_ = t - offset_;
  }

private:
  mutable std::mutex mutex_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::system_clock::time_point wall_start_ = std::chrono::system_clock::now();
  std::chrono::milliseconds offset_{0};
  std::vector<agent::Millis> sleeps_;
};

}  // namespace tessera::testing
