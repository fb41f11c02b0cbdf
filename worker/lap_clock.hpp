#pragma once
// Wall milliseconds since the previous lap (or construction): the one clock
// behind an evaluation's phase_ms and the counter profiler's profile_ms.
#include <chrono>

namespace tessera::worker {

class LapClock {
public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
    return ms;
  }

private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace tessera::worker
