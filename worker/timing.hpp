#pragma once
// The measurement protocol (docs/harness.md, "Measurement"). One Timer per worker; baselines and
// candidates go through the same object, so they are measured the same way.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace tessera::worker {

// One call of the thing being timed. It must enqueue all its work on the
// given stream (the harness checks for work elsewhere through CUPTI).
using LaunchFn = std::function<void(cudaStream_t)>;

inline constexpr double kDefaultCheckFraction = 0.125;  // timed calls of a guarded callable whose output is checked

// Harness work around a candidate's timed calls (docs/harness.md, "Integrity").
// All of it is enqueued outside the measured windows and uses only kernels
// with the harness prefix, which the timer leaves out; none of it tells the
// candidate whether the call it is in will be checked: that is drawn from
// the timer's seed after the call is enqueued.
struct CallGuard {
  // Before the L2 flush that precedes every call (timed or warm-up): poison
  // the output, zero the workspace, draw fresh inputs.
  std::function<void(cudaStream_t)> prepare;
  // Right after a call chosen for checking: compare its output on the device
  // and add the outcome to the batch's verdict.
  std::function<void(cudaStream_t)> check;
  // Before the first call of a batch: reset the batch's verdict.
  std::function<void(cudaStream_t)> begin_batch;
  // After the batch has finished (synchronised): empty, or what was wrong.
  // A non-empty verdict stops the timing.
  std::function<std::string()> verdict;
  double check_fraction = kDefaultCheckFraction;
};

// One callable of an interleaved cold measurement; guard may be null (a baseline).
struct GuardedCall {
  std::function<void(cudaStream_t)> launch;
  const CallGuard* guard = nullptr;
};

struct GuardedTiming {
  std::vector<TimingStats> stats;  // one per call, in order
  std::string violation;           // the first failed verdict; the timing stopped there
  int guarded_calls = 0;           // timed calls of guarded callables
  int checked_calls = 0;           // of those, how many had their output checked
};

// Hot timing of a guarded callable: the graph holds `calls` calls, call i
// reading an input set of its own and writing an output of its own; before
// each replay (outside its events) every output is poisoned and every input
// set refreshed, and after it one call, drawn at random, is checked. So no
// call of a replay has inputs another call had: a result kept from an earlier
// call (memoised in a device global) is never this call's answer.
struct HotGuard {
  int calls = 0;  // calls per replay; 0: the timer's hot_batch, all on the same buffers (an unguarded callable)
  std::function<void(int call, cudaStream_t)> launch_into;
  std::function<void(cudaStream_t)> prepare;
  std::function<void(int call, cudaStream_t)> check;
  std::function<void(cudaStream_t)> begin;
  // After the last replay (synchronised): empty, or what was wrong.
  std::function<std::string()> verdict;
};

struct HotTiming {
  TimingStats stats;
  std::string violation;
  int checked_replays = 0;
  int calls = 0;  // calls per replay
};

struct TimingOptions {
  int warmup_calls = 3;
  int min_samples = 10;
  double min_time_ms = 20.0;        // measure at least this long in total
  double max_rel_spread = 0.02;     // stop once (p90-p10)/median is below this,
  double max_median_ci = 0.005;     // or once the median is known to within this (95% CI, relative)
  double timeout_ms = 2000.0;       // stop anyway once every callable has a sample; converged=false
  // A callable without a kept sample at timeout_ms is timed on, up to this
  // budget: one batch of a large shape (its fp64 checks included) can outlast
  // timeout_ms alone, and a record must not lose its figure to that.
  double hard_timeout_ms = 30000.0;
  int max_samples = 2000;
  // Discard samples whose SM clock is below this fraction of the batch's
  // median clock: a transient dip. (Not of its fastest clock: under sustained
  // power capping the fastest clocks are the few samples after a pause, and
  // every other sample would be discarded; see docs/harness.md.)
  double throttle_fraction = 0.97;
  // A cold timing whose kept samples ran below this fraction of the fastest
  // SM clock this timer has seen (the median of a batch) failed for a reason
  // of the machine (a thermal or power brake, another tenant): far below what
  // power capping does to a GEMM. Not the device's rated clock: clocks locked
  // lower by an administrator are the machine's setting, not a failure.
  double clock_floor_fraction = 0.5;
  int hot_batch = 20;               // launches per hot sample (graph replay), at most
};

// Attempts of a cold timing that the machine failed (every sample throttled
// or lost, clocks below the floor, no sample within the budget) before the
// failure is reported, and masked (core/result_status.hpp).
inline constexpr int kColdTimingAttempts = 2;

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
  // The same, with guards around the candidate's calls; which calls are
  // checked is drawn from `seed`. A guarded timing runs at least two batches.
  GuardedTiming cold_guarded(const std::vector<GuardedCall>& calls, std::uint64_t seed);
  // Warm L2, back-to-back: CUDA graph replay of hot_batch calls when the
  // launch can be captured, else a plain loop; per-call time.
  TimingStats hot(const LaunchFn& launch);
  HotTiming hot_guarded(const HotGuard& guard, std::uint64_t seed);
  // The fastest batch-median SM clock seen so far, GHz; 0 before any cold timing.
  double fastest_clock_ghz() const;
  // Host-inclusive latency per call (launch path included), synchronised.
  // With a guard, every call is prepared before its clock starts and some are
  // checked after it stops; a failed verdict is written to *violation.
  double host_latency_us(const LaunchFn& launch, int calls = 50, const CallGuard* guard = nullptr,
                         std::uint64_t seed = 0, std::string* violation = nullptr);

  const TimingOptions& options() const { return options_; }
  void set_options(const TimingOptions& o) { options_ = o; }
  bool cupti_available() const;
  // Called as timed calls finish (at most every 250 ms), so the worker can tell the harness it is alive.
  void set_heartbeat(std::function<void()> heartbeat);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  TimingOptions options_;
};

// Summary statistics of a sample set (microseconds); pure, unit-tested. An
// empty set is a failed stage with a reason.
TimingStats summarize(std::vector<double> samples_us, const std::string& method);

// cold_guarded, again with a fresh draw of the checks while the machine
// failed it (timing_rules.hpp), at most `attempts` times; the failed
// callables' reasons then name every attempt.
GuardedTiming cold_guarded_retried(Timer& timer, const std::vector<GuardedCall>& calls, std::uint64_t seed,
                                   int attempts = kColdTimingAttempts);

}  // namespace tessera::worker
