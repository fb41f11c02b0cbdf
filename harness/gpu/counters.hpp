#pragma once
// Hardware counters for one call of a candidate or baseline (docs/counters.md),
// read with the CUPTI Range Profiler (user range + user replay) and evaluated
// with the CUPTI host API. Called between timing phases, never during one.
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/gpu/timing.hpp"

namespace tessera::gpu {

// Hopper metric names (Nsight Compute spelling). A name the host API rejects
// on this GPU is reported in "raw_errors"; the others are still collected.
std::vector<std::string> default_metrics();

struct CounterOptions {
  std::vector<std::string> metrics = default_metrics();
  // Flush L2 before each replay pass, so every pass (and the hit rate) sees
  // the cold-L2 state that the ranking time is measured in.
  bool flush_l2 = true;
};

// Profiles one call of `launch` on `stream` (replayed once per pass the
// metric set needs; the call must be idempotent, as a GEMM is). All kernels of
// the call fall into one range, so a multi-kernel call is aggregated.
// Returns {"sm_throughput_pct", "dram_throughput_pct", "memory_throughput_pct",
// "tensor_pipe_pct", "l2_hit_rate_pct", "achieved_occupancy_pct",
// "smem_bank_conflicts" (null where unavailable), "raw": {metric: value},
// "raw_errors": {metric: reason}, "passes", "chip", "method", "l2_flushed"}
// or {"error": "..."}. Never throws: a profiler failure is data.
nlohmann::json collect_counters(const LaunchFn& launch, cudaStream_t stream, const CounterOptions& options = {});

// For `tessera doctor`: empty when counters can be read here, else why not
// (no GPU, unsupported device, insufficient privileges, ...). Runs one tiny
// profiled kernel on the current device.
std::string probe_counters();

// Thresholds (percent of peak) for bottleneck_hint.
inline constexpr double kTensorBoundPct = 60.0;  // tensor pipe at least this busy
inline constexpr double kMemoryBoundPct = 60.0;  // DRAM at least this busy
inline constexpr double kLatencyBoundPct = 40.0; // SM and DRAM both below this

// "tensor-pipe-bound", "memory-bound", "latency-bound" or "unknown" from the
// summary keys of collect_counters() (docs/counters.md gives the rules).
std::string bottleneck_hint(const nlohmann::json& counters);

}  // namespace tessera::gpu
