#pragma once
// Which hardware counters an evaluation reads (docs/counters.md). A name only:
// the metric lists live with the profiler (gpu::metrics_for), but the name is
// checked wherever it is given (search configs, command lines, worker requests),
// and those places need not link the CUDA side.
#include <string>

namespace tessera {

// full: every summary key (9 range-profiler passes on GH100). fast: all but
// sm_throughput_pct and memory_throughput_pct, whose breakdown metrics need 7
// of those passes (2 passes on GH100); the search reads this set for every
// candidate.
enum class CounterSet { full, fast };

CounterSet parse_counter_set(const std::string& name);  // "full" | "fast"; bad_input otherwise
std::string to_string(CounterSet set);

}  // namespace tessera
