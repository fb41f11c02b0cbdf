#pragma once
// Optimisation strategies: named prompt variants, the arms the bandit pulls.
// Each has a prompt fragment (agent/prompts/strategy_<name>.md) and a target
// resource: the hardware resource it needs headroom in. A bandit can mask arms
// whose resource the counters show saturated (see read_bottleneck).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::agent {

struct Strategy {
  std::string name;             // e.g. "pipelining"; also the template file stem
  std::string target_resource;  // tensor_pipe | dram_bandwidth | memory_latency | shared_memory |
                                // occupancy | l2_locality | sm_parallelism | issue_slots | none
  std::string resource_class;   // coarse form for counter-key masking: tensor (tensor_pipe_pct),
                                // memory (dram_throughput_pct), latency (sm_throughput_pct), none
  std::string summary;          // one line for listings
  bool full_rewrite = false;    // asks for a whole new kernel, never a diff
};

const std::vector<Strategy>& strategies();
const Strategy* find_strategy(const std::string& name);  // nullptr when unknown
std::vector<std::string> strategy_names();

// Thresholds (percent of peak) above which a resource counts as saturated.
inline constexpr double kSaturatedPct = 80.0;
inline constexpr double kBusyPct = 60.0;        // "X-bound" reading
inline constexpr double kL2HitSaturatedPct = 90.0;

// A short reading of CUPTI counters. The summary keys of the harness's
// collect_counters() (tensor_pipe_pct, dram_throughput_pct or
// memory_throughput_pct, sm_throughput_pct, achieved_occupancy_pct,
// l2_hit_rate_pct) are used when present; otherwise metric names are matched
// loosely (by substring), so ncu-style full names and short aliases work:
//   tensor: a key containing "tensor" (e.g. sm__pipe_tensor_op_hmma_cycles_active...pct)
//   dram:   "dram__throughput" or "dram" + "pct"
//   sm:     "sm__throughput"
//   occupancy: "warps_active"
//   l2 hit: "lts__t_sector_hit_rate" / "l2_hit"
struct BottleneckReading {
  std::string summary;  // one line; "no counters measured" when there are none
  std::vector<std::string> saturated;  // resources at or above kSaturatedPct
  nlohmann::json figures = nlohmann::json::object();  // the percentages found, by short name
};
BottleneckReading read_bottleneck(const nlohmann::json& counters);

// Strategies whose target resource is not saturated (all when none is).
std::vector<std::string> unmasked_strategies(const nlohmann::json& counters);

}  // namespace tessera::agent
