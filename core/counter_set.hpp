#pragma once
// Which hardware counters an evaluation reads (docs/counters.md), and what a
// summary of them says about the bottleneck. Names and JSON only:
// the metric lists live with the profiler (worker::metrics_for), but the name is
// checked wherever it is given (search configs, command lines, worker requests),
// and those places need not link the CUDA side.
#include <string>

#include <nlohmann/json.hpp>

namespace tessera {

// full: every summary key (9 range-profiler passes on GH100). fast: all but
// sm_throughput_pct and memory_throughput_pct, whose breakdown metrics need 7
// of those passes (2 passes on GH100); the search reads this set for every
// candidate.
enum class CounterSet { full, fast };

CounterSet parse_counter_set(const std::string& name);  // "full" | "fast"; bad_input otherwise
std::string to_string(CounterSet set);

// Thresholds (percent of peak) for bottleneck_hint.
inline constexpr double kTensorBoundPct = 60.0;  // tensor pipe at least this busy
inline constexpr double kMemoryBoundPct = 60.0;  // DRAM at least this busy
inline constexpr double kLatencyBoundPct = 40.0; // SM and DRAM both below this

// "tensor-pipe-bound", "memory-bound", "latency-bound" or "unknown" from the
// summary keys of collect_counters() (docs/counters.md gives the rules).
std::string bottleneck_hint(const nlohmann::json& counters);

}  // namespace tessera
