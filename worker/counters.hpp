#pragma once
// Hardware counters for one call of a candidate or baseline (docs/counters.md),
// read with the CUPTI Range Profiler (per-kernel ranges, aggregated) and evaluated
// with the CUPTI host API. Called between timing phases, never during one.
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/counter_set.hpp"
#include "worker/timing.hpp"

namespace tessera::worker {

// Hopper metric names (Nsight Compute spelling). A name the host API rejects
// on this GPU is reported in "raw_errors"; the others are still collected.
std::vector<std::string> default_metrics();

// Which metrics to read (CounterSet: core/counter_set.hpp).
using tessera::CounterSet;
using tessera::parse_counter_set;
using tessera::to_string;
std::vector<std::string> metrics_for(CounterSet set);

enum class CounterMode {
  // Auto range + user replay: one range per kernel, as per_kernel, but the
  // passes re-run the whole call (which must be idempotent: a GEMM call is)
  // instead of CUPTI saving and restoring every device allocation around
  // each kernel replay, which costs the most when the worker holds large
  // buffers. Falls back to per_kernel when CUPTI refuses it.
  per_kernel_call_replay,
  // Auto range + kernel replay: one range per kernel, aggregated over the
  // call (counts summed, rates weighted by kernel duration). "Elapsed"
  // percentages then cover kernel time only.
  per_kernel,
  // User range + user replay: one range around the whole call, replayed by
  // calling `launch` once per pass (the call must be idempotent). Its
  // "elapsed" percentages include the launch gaps inside the range.
  whole_call,
};

struct CounterOptions {
  std::vector<std::string> metrics = default_metrics();
  CounterMode mode = CounterMode::per_kernel_call_replay;
  // Flush L2 before the call (before each pass when tessera replays it), so the
  // profiled call starts from the cold-L2 state the ranking time is measured in.
  bool flush_l2 = true;
};

// Profiles one call of `launch` on `stream`; a multi-kernel call is
// aggregated over all its kernels (see CounterMode).
// Returns {"sm_throughput_pct", "dram_throughput_pct", "memory_throughput_pct",
// "tensor_pipe_pct", "l2_hit_rate_pct", "achieved_occupancy_pct",
// "smem_bank_conflicts", "issue_active_pct" (null where unavailable or not in the set), "raw": {metric: value},
// "raw_errors": {metric: reason}, "passes", "ranges", "ranges_dropped",
// "chip", "method", "l2_flushed"} or {"error": "..."}. Never throws: a
// profiler failure is data.
nlohmann::json collect_counters(const LaunchFn& launch, cudaStream_t stream, const CounterOptions& options = {});

// Range-profiler passes that `metrics` need on `chip` (e.g. "GH100"). Host
// API only: needs no GPU. Throws Error (unavailable) if CUPTI refuses.
std::size_t profiler_passes(const std::string& chip, const std::vector<std::string>& metrics);

// For `tessera doctor`: empty when counters can be read here, else why not
// (no GPU, unsupported device, insufficient privileges, ...). Runs one tiny
// profiled kernel on the current device.
std::string probe_counters();

// Pure helpers (counters_summary.cpp; unit-tested without a GPU).
// Per-range values (rows[range][metric]) -> one value per metric: names
// ending in ".sum" are counts and add up; every other metric (rates,
// percentages) is averaged weighted by `weights`. Non-finite values are
// skipped; a metric with no value in any range is null.
nlohmann::json aggregate_ranges(const std::vector<std::string>& metrics, const std::vector<std::vector<double>>& rows,
                                const std::vector<double>& weights);
// The summary keys of collect_counters() from raw metric values: each is the
// max over its metrics that have a value, else null.
nlohmann::json summarize_counters(const nlohmann::json& raw);


}  // namespace tessera::worker
