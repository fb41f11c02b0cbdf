#pragma once
// The cold timer's rules, apart from the GPU so that tests can plant every
// case (docs/harness.md, "Measurement"): which samples of a batch are kept,
// when the timing stops, what a callable's stats are at the end and why they
// failed, and the retry of a timing the machine failed.
#include <functional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "worker/timing.hpp"

namespace tessera::worker {

// One callable's samples so far.
struct SampleSet {
  std::vector<double> kept_us;
  std::vector<float> kept_clock_ghz;  // the clock probe before each kept sample
  int throttled = 0;                  // discarded: SM clock in a transient dip
  int lost = 0;                       // discarded: no activity records for the sample
};

// The clock a batch's samples are compared with: its median clock reading.
float reference_clock(std::vector<float> clocks_ghz);

// Sorts one batch into `sets` (one per callable): slot j belongs to callable
// call_of[j], took times_us[j] (NaN: its records were lost) after a clock
// reading of clocks_ghz[j]. A sample below throttle_fraction of the batch's
// reference clock is discarded as throttled.
void sort_batch(const std::vector<int>& call_of, const std::vector<double>& times_us,
                const std::vector<float>& clocks_ghz, double throttle_fraction, std::vector<SampleSet>& sets);

// Whether the cold timing stops after a batch: a failed check; enough
// samples; converged (and long enough, and two batches when guarded); the
// budget spent and every callable with a sample; the hard budget spent.
bool cold_should_stop(const std::vector<TimingStats>& stats, const std::vector<SampleSet>& sets,
                      const TimingOptions& o, double elapsed_ms, int batches_done, bool guarded, bool violation);

// A callable's stats at the end: measured from its kept samples, or failed
// with the machine's reason (every sample throttled or lost, nothing within
// the budget, the clock below clock_floor_fraction of fastest_clock_ghz, the
// fastest batch-median clock the timer has seen; 0: no floor).
TimingStats cold_stats(const SampleSet& s, const std::string& method, const TimingOptions& o, double fastest_clock_ghz,
                       double elapsed_ms);

// True when a callable's timing failed for a reason of the machine (and no
// check failed, which is the candidate's).
bool machine_failed(const GuardedTiming& t);

// Runs `attempt(1)`, `attempt(2)`, ... until one is not a machine failure, at
// most `attempts` times. The integrity counts add up over the attempts; a
// callable that failed every attempt has a reason naming each.
GuardedTiming retry_machine_failures(const std::function<GuardedTiming(int attempt)>& attempt, int attempts);

}  // namespace tessera::worker
