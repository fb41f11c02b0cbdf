#pragma once
// Every baseline of one task, timed in this process (cuBLAS and cuBLASLt do
// not crash): random operands, the suite prepared (cuBLASLt autotuned or its
// cached choice), each baseline's output checked against an fp64 reference
// on samples, then all of them timed cold and interleaved by one worker::Timer,
// the same protocol as in the sandbox worker. `tessera baseline` prints it;
// `tessera bench suite` records it for baselines-only sweeps.
#include <cuda_runtime_api.h>

#include <vector>

#include <nlohmann/json.hpp>

#include "worker/baselines/baselines.hpp"
#include "worker/baselines/sample_check.hpp"
#include "core/result.hpp"
#include "core/task.hpp"
#include "worker/timing.hpp"

namespace tessera::baselines {

struct MeasureOptions {
  SuiteOptions suite;
  worker::TimingOptions timing;
  bool hot = true;        // also time back-to-back (graph replay)
  bool counters = false;  // CUPTI counters per baseline
};

struct MeasuredBaseline {
  // launch is cleared on return (what it launches belongs to a suite that is
  // gone); error says why a baseline could not run.
  Baseline baseline;
  bool measured = false;  // ran, was checked and timed
  SampleCheck check;
  TimingStats cold, hot;
  nlohmann::json counters;  // null unless asked
};

struct BaselineMeasurement {
  std::vector<MeasuredBaseline> rows;
  nlohmann::json autotune;           // BaselineSuite::autotune_report()
  nlohmann::json previous_times_us;  // display only, never used in a ratio
  // As the result record has them; a baseline whose output check failed
  // carries the failure as its error, so no ratio uses it.
  std::vector<BaselineResult> results() const;
  bool all_verified() const;
};

// Needs a current CUDA device. Throws tessera::Error only for tessera bugs or
// a broken GPU context.
BaselineMeasurement measure_baselines(const Task& task, const MeasureOptions& options);

}  // namespace tessera::baselines
