#pragma once
// The Timer's state, shared by its cold (timing.cpp) and hot (timing_hot.cpp)
// halves. Internal to the timer.
#include <cuda_runtime_api.h>

#include <chrono>
#include <functional>
#include <vector>

#include "worker/handles.hpp"
#include "worker/timing.hpp"

namespace tessera::worker {

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
  std::vector<Event> slot_done;  // recorded after each slot (call and check): the batch's progress
  unsigned salt = 1;
  // The fastest batch-median SM clock this timer has seen, GHz: what a
  // braked GPU is compared with (TimingOptions::clock_floor_fraction).
  double fastest_clock_ghz = 0;
  std::function<void()> heartbeat;
  std::chrono::steady_clock::time_point last_beat{};

  explicit Impl(cudaStream_t s);
  // Enqueues, for each slot: the guard's preparation, the flush, the clock
  // probe, the call, and the guard's check when chosen; returns one kernel
  // time (or NaN) and one clock reading per slot.
  void run_batch(const std::vector<GuardedCall>& calls, const std::vector<TimedSlot>& slots, bool use_cupti,
                 std::vector<double>& times_us, std::vector<float>& clocks);
  // Tells the worker's parent that the GPU made progress: called after each
  // completed slot, hot replay and latency call, not only between batches,
  // because one batch of a large shape (its calls plus fp64 reference checks)
  // can outlast the parent's silence limit. At most one heartbeat per
  // kBeatInterval, so small shapes do not flood the pipe.
  static constexpr std::chrono::milliseconds kBeatInterval{250};
  void beat() {
    const auto now = std::chrono::steady_clock::now();
    if (!heartbeat || now - last_beat < kBeatInterval) return;
    last_beat = now;
    heartbeat();
  }
};

// Stopped on noise: enough samples, and a small spread or a tight median.
bool converged(const TimingStats& s, const TimingOptions& o);

}  // namespace tessera::worker
