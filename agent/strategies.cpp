#include "agent/strategies.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

namespace tessera::agent {

const std::vector<Strategy>& strategies() {
  static const std::vector<Strategy> list = {
      {"tiling", "tensor_pipe", "tensor", "block/warp tile shapes and MMA shape to raise tensor-core utilisation and reuse"},
      {"pipelining", "memory_latency", "memory", "multi-stage cp.async/TMA pipelines that overlap loads with MMA"},
      {"memory_layout", "shared_memory", "memory", "shared-memory layouts and swizzles that remove bank conflicts; vectorised access"},
      {"epilogue", "dram_bandwidth", "memory", "faster epilogue: vectorised/TMA stores, staging through shared memory"},
      {"occupancy_registers", "occupancy", "latency", "register and shared-memory pressure vs occupancy, launch bounds, spills"},
      {"rasterisation", "l2_locality", "memory", "block rasterisation / swizzled tile order for L2 reuse; persistent scheduling"},
      {"split_k", "sm_parallelism", "latency", "split-K or stream-K to fill all SMs when M×N has too few tiles"},
      {"instruction_choice", "issue_slots", "tensor", "instruction choice: wgmma vs mma.sync, ldmatrix, fewer address computations"},
      {"rewrite", "none", "none", "a different design written from scratch (exploration; never a diff)", true},
  };
  return list;
}

const Strategy* find_strategy(const std::string& name) {
  for (const auto& s : strategies())
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> out;
  for (const auto& s : strategies()) out.push_back(s.name);
  return out;
}

namespace {
struct Figures {
  std::optional<double> tensor, dram, sm, occupancy, l2_hit;
};

std::optional<double> number_of(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_object())
    for (const char* k : {"value", "avg", "pct"})
      if (v.contains(k) && v[k].is_number()) return v[k].get<double>();
  return std::nullopt;
}

void scan(const nlohmann::json& j, Figures& f) {
  if (j.is_array()) {
    for (const auto& e : j) {
      if (e.is_object() && e.contains("name") && e["name"].is_string()) {
        nlohmann::json one = {{e["name"].get<std::string>(), e.contains("value") ? e["value"] : nlohmann::json()}};
        scan(one, f);
      } else {
        scan(e, f);
      }
    }
    return;
  }
  if (!j.is_object()) return;
  for (const auto& [key, v] : j.items()) {
    const auto x = number_of(v);
    if (!x) {
      if (v.is_object() || v.is_array()) scan(v, f);
      continue;
    }
    const bool pct = key.find("pct") != std::string::npos || key.find("percent") != std::string::npos ||
                     key.find("rate") != std::string::npos || key.find("_util") != std::string::npos;
    if (key.find("tensor") != std::string::npos) f.tensor = std::max(f.tensor.value_or(0), *x);
    else if (key.find("dram__throughput") != std::string::npos || (key.find("dram") != std::string::npos && pct))
      f.dram = std::max(f.dram.value_or(0), *x);
    else if (key.find("sm__throughput") != std::string::npos || key.find("sm_throughput") != std::string::npos) f.sm = *x;
    else if (key.find("warps_active") != std::string::npos || key.find("occupancy") != std::string::npos) f.occupancy = *x;
    else if (key.find("hit_rate") != std::string::npos || key.find("l2_hit") != std::string::npos) f.l2_hit = *x;
  }
}

// The summary keys worker/counters.hpp's collect_counters() writes.
bool read_summary_keys(const nlohmann::json& c, Figures& f) {
  if (!c.is_object()) return false;
  auto get = [&](const char* key) -> std::optional<double> {
    if (c.contains(key) && c[key].is_number()) return c[key].get<double>();
    return std::nullopt;
  };
  f.tensor = get("tensor_pipe_pct");
  f.dram = get("dram_throughput_pct");
  if (!f.dram) f.dram = get("memory_throughput_pct");
  f.sm = get("sm_throughput_pct");
  f.occupancy = get("achieved_occupancy_pct");
  f.l2_hit = get("l2_hit_rate_pct");
  return f.tensor || f.dram || f.sm || f.occupancy || f.l2_hit;
}
}  // namespace

BottleneckReading read_bottleneck(const nlohmann::json& counters) {
  BottleneckReading r;
  Figures f;
  if (!read_summary_keys(counters, f) && (counters.is_object() || counters.is_array())) scan(counters, f);
  auto put = [&](const char* name, const std::optional<double>& v) {
    if (v) r.figures[name] = *v;
  };
  put("tensor_pipe_pct", f.tensor);
  put("dram_throughput_pct", f.dram);
  put("sm_throughput_pct", f.sm);
  put("achieved_occupancy_pct", f.occupancy);
  put("l2_hit_rate_pct", f.l2_hit);
  if (r.figures.empty()) {
    r.summary = counters.is_object() && counters.contains("error")
                    ? fmt::format("no counters measured ({})", counters["error"].dump())
                    : "no counters measured";
    return r;
  }
  const double tensor = f.tensor.value_or(-1), dram = f.dram.value_or(-1), sm = f.sm.value_or(-1);
  if (tensor >= kSaturatedPct) r.saturated.push_back("tensor_pipe");
  if (dram >= kSaturatedPct) r.saturated.insert(r.saturated.end(), {"dram_bandwidth", "memory_latency"});
  if (f.occupancy && *f.occupancy >= kSaturatedPct) r.saturated.push_back("occupancy");
  if (f.l2_hit && *f.l2_hit >= kL2HitSaturatedPct) r.saturated.push_back("l2_locality");
  if (sm >= kSaturatedPct) r.saturated.push_back("sm_parallelism");
  if (sm >= kSaturatedPct && tensor >= 0 && tensor < kBusyPct) r.saturated.push_back("issue_slots");

  auto pct = [](double v) { return v < 0 ? std::string("n/a") : fmt::format("{:.0f}%", v); };
  if (tensor >= kBusyPct && (dram < kBusyPct || tensor >= dram))
    r.summary = fmt::format("compute-bound: tensor pipe at {} of peak; remaining gains come from overlap and fewer non-MMA instructions", pct(tensor));
  else if (dram >= kBusyPct)
    r.summary = fmt::format("memory-bandwidth-bound: DRAM at {} of peak, tensor pipe {}; raise reuse (larger tiles, L2-friendly rasterisation)", pct(dram), pct(tensor));
  else if (sm >= kBusyPct)
    r.summary = fmt::format("issue-bound: SM throughput {} but tensor pipe only {}; move work to wgmma/mma and cut address arithmetic", pct(sm), pct(tensor));
  else
    r.summary = fmt::format("latency-bound: neither tensor pipe ({}) nor DRAM ({}) is busy; deepen the pipeline, keep more bytes in flight or raise occupancy", pct(tensor), pct(dram));
  return r;
}

std::vector<std::string> unmasked_strategies(const nlohmann::json& counters) {
  const auto reading = read_bottleneck(counters);
  std::vector<std::string> out;
  for (const auto& s : strategies())
    if (std::find(reading.saturated.begin(), reading.saturated.end(), s.target_resource) == reading.saturated.end())
      out.push_back(s.name);
  return out;
}

}  // namespace tessera::agent
