#include "core/counter_set.hpp"

#include <cmath>

#include "core/error.hpp"

namespace tessera {

CounterSet parse_counter_set(const std::string& name) {
  if (name == "full") return CounterSet::full;
  if (name == "fast") return CounterSet::fast;
  throw Error(Error::Kind::bad_input, "unknown counter set '" + name + "' (full | fast)");
}

std::string to_string(CounterSet set) { return set == CounterSet::full ? "full" : "fast"; }

std::string bottleneck_hint(const nlohmann::json& c) {
  auto get = [&](const char* key) -> double {
    if (!c.is_object() || !c.contains(key) || !c.at(key).is_number()) return NAN;
    return c.at(key).get<double>();
  };
  if (!c.is_object() || c.contains("error")) return "unknown";
  const double tensor = get("tensor_pipe_pct");
  double memory = get("dram_throughput_pct");
  if (std::isnan(memory)) memory = get("memory_throughput_pct");
  // The fast set has no sm__throughput; issue-slot use is one of its parts,
  // so it can only be lower: a kernel it calls latency-bound may still have
  // one busy unit (docs/counters.md).
  double sm = get("sm_throughput_pct");
  if (std::isnan(sm)) sm = get("issue_active_pct");
  const bool tensor_bound = tensor >= kTensorBoundPct;  // false for NaN
  const bool memory_bound = memory >= kMemoryBoundPct;
  if (tensor_bound && memory_bound) return tensor >= memory ? "tensor-pipe-bound" : "memory-bound";
  if (tensor_bound) return "tensor-pipe-bound";
  if (memory_bound) return "memory-bound";
  if (sm < kLatencyBoundPct && memory < kLatencyBoundPct) return "latency-bound";
  return "unknown";
}

}  // namespace tessera
