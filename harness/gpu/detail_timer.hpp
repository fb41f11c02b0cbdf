#pragma once
// The Timer's state, shared by its cold (timing.cpp) and hot (timing_hot.cpp)
// halves. Internal to the timer.
#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "harness/gpu/handles.hpp"
#include "harness/gpu/timing.hpp"

namespace tessera::gpu {

// One enqueued sample of a cold batch: which callable, and whether its output is checked.
struct TimedSlot {
  int call = 0;
  bool check = false;
};

struct Timer::Impl {
  cudaStream_t stream;
  DeviceBuffer scratch;      // the L2 flush's target: at least twice the L2
  DeviceBuffer probe_slots;  // clock readings, one per sample of a batch
  std::vector<Event> events;
  unsigned salt = 1;
  std::function<void()> heartbeat;

  explicit Impl(cudaStream_t s);
  // Enqueues, for each slot: the guard's preparation, the flush, the clock
  // probe, the call, and the guard's check when chosen; returns one kernel
  // time (or NaN) and one clock reading per slot.
  void run_batch(const std::vector<GuardedCall>& calls, const std::vector<TimedSlot>& slots, bool use_cupti,
                 std::vector<double>& times_us, std::vector<float>& clocks);
  void beat() const {
    if (heartbeat) heartbeat();
  }
};

// Percentile of sorted samples, linear interpolation.
double percentile(const std::vector<double>& sorted, double q);
// Stopped on noise: enough samples, and a small spread or a tight median.
bool converged(const TimingStats& s, const TimingOptions& o);

}  // namespace tessera::gpu
