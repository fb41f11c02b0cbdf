#pragma once
// The measurement protocol (docs/harness.md, "Measurement"). One Timer per worker; baselines and
// candidates go through the same object, so they are measured the same way.
#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/core/result.hpp"

namespace tessera::gpu {

// One call of the thing being timed. It must enqueue all its work on the
// given stream (the harness checks for work elsewhere through CUPTI).
using LaunchFn = std::function<void(cudaStream_t)>;

struct TimingOptions {
  int warmup_calls = 3;
  int min_samples = 10;
  double min_time_ms = 20.0;        // measure at least this long in total
  double max_rel_spread = 0.02;     // stop once (p90-p10)/median is below this,
  double max_median_ci = 0.005;     // or once the median is known to within this (95% CI, relative)
  double timeout_ms = 2000.0;       // stop anyway; converged=false
  int max_samples = 2000;
  double throttle_fraction = 0.97;  // discard samples whose SM clock is below this fraction of the max seen
  int hot_batch = 20;               // launches per hot sample (graph replay)
};

class Timer {
public:
  Timer(cudaStream_t stream, TimingOptions options);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // L2 flushed before each sample; kernel GPU time from CUPTI activity
  // records (all kernels and copies of the call, first start to last end),
  // falling back to CUDA events when CUPTI is unavailable.
  TimingStats cold(const LaunchFn& launch);
  // Several callables measured in interleaved order (A B C A B C ...), so
  // that drift affects all of them alike. Same protocol as cold().
  std::vector<TimingStats> cold_interleaved(const std::vector<LaunchFn>& launches);
  // Warm L2, back-to-back: CUDA graph replay of hot_batch calls when the
  // launch can be captured, else a plain loop; per-call time.
  TimingStats hot(const LaunchFn& launch);
  // Host-inclusive latency per call (launch path included), synchronised.
  double host_latency_us(const LaunchFn& launch, int calls = 50);

  const TimingOptions& options() const { return options_; }
  void set_options(const TimingOptions& o) { options_ = o; }
  bool cupti_available() const;
  // Called between batches of samples, so the worker can tell the harness it is alive.
  void set_heartbeat(std::function<void()> heartbeat);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  TimingOptions options_;
};

// Summary statistics of a sample set (microseconds); pure, unit-tested.
TimingStats summarize(std::vector<double> samples_us, const std::string& method);

}  // namespace tessera::gpu
