// The pure half of the counters: metric names, aggregation over ranges,
// summary keys and the bottleneck reading. No CUDA or CUPTI calls, so it is
// unit-tested on machines without a GPU.
#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "worker/counters.hpp"

namespace tessera::worker {

namespace {

// Summary keys: each is the max over whichever of its metrics were collected
// (on Hopper mma.sync runs on the HMMA pipe and wgmma on the GMMA pipe).
struct SummaryKey {
  const char* key;
  std::vector<const char*> metrics;
};
const std::vector<SummaryKey>& summary_keys() {
  static const std::vector<SummaryKey> keys = {
      {"sm_throughput_pct", {"sm__throughput.avg.pct_of_peak_sustained_elapsed"}},
      {"dram_throughput_pct", {"dram__throughput.avg.pct_of_peak_sustained_elapsed"}},
      {"memory_throughput_pct", {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"}},
      {"tensor_pipe_pct",
       {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"}},
      {"l2_hit_rate_pct", {"lts__t_sector_hit_rate.pct"}},
      {"achieved_occupancy_pct", {"sm__warps_active.avg.pct_of_peak_sustained_active"}},
      {"smem_bank_conflicts", {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"}},
      {"issue_active_pct", {"sm__issue_active.avg.pct_of_peak_sustained_active"}},
  };
  return keys;
}

// sm__throughput and gpu__compute_memory_throughput are breakdowns over many
// units: on GH100 they alone take the range profiler from 2 passes to 9.
bool needs_many_passes(const std::string& metric) {
  return metric == "sm__throughput.avg.pct_of_peak_sustained_elapsed" ||
         metric == "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

}  // namespace

std::vector<std::string> default_metrics() { return metrics_for(CounterSet::full); }

std::vector<std::string> metrics_for(CounterSet set) {
  std::vector<std::string> v;
  for (const auto& k : summary_keys())
    for (const char* m : k.metrics)
      if (set == CounterSet::full || !needs_many_passes(m)) v.emplace_back(m);
  return v;
}

nlohmann::json aggregate_ranges(const std::vector<std::string>& metrics, const std::vector<std::vector<double>>& rows,
                                const std::vector<double>& weights) {
  TESSERA_REQUIRE(weights.size() == rows.size(), "one weight per range");
  nlohmann::json raw = nlohmann::json::object();
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const bool count = ends_with(metrics[i], ".sum");
    double acc = 0, wsum = 0;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      TESSERA_REQUIRE(rows[r].size() == metrics.size(), "one value per metric in every range");
      if (!std::isfinite(rows[r][i])) continue;
      acc += count ? rows[r][i] : weights[r] * rows[r][i];
      wsum += weights[r];
    }
    raw[metrics[i]] = wsum > 0 ? number_or_null(count ? acc : acc / wsum) : nlohmann::json();
  }
  return raw;
}

nlohmann::json summarize_counters(const nlohmann::json& raw) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& k : summary_keys()) {
    nlohmann::json best;  // null unless some metric of this key has a value
    for (const char* m : k.metrics) {
      if (!raw.contains(m) || !raw.at(m).is_number()) continue;
      const double v = raw.at(m).get<double>();
      if (best.is_null() || v > best.get<double>()) best = v;
    }
    out[k.key] = best;
  }
  return out;
}

}  // namespace tessera::worker
