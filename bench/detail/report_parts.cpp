#include "bench/detail/report_parts.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "search/descriptor.hpp"
#include "core/json_read.hpp"

namespace tessera::bench::detail {

namespace {

std::string counter(const nlohmann::json& c, const char* key) {
  return c.is_object() && c.contains(key) && c.at(key).is_number() ? fmt::format("{:.0f}%", c.at(key).get<double>())
                                                                    : "-";
}

const Stat* all_stat(const ReportData& d, const std::string& column) {
  const auto& all = d.buckets.back();  // summarize() ends with "all"
  auto it = all.speedup.find(column);
  return it == all.speedup.end() || it->second.n == 0 ? nullptr : &it->second;
}

// Whether the sweep spread its shapes over GPUs: only then do rows name theirs.
bool spread(const ReportData& d) {
  return std::any_of(d.rows.begin(), d.rows.end(), [](const ShapeRow& r) { return !r.gpu.empty(); });
}

}  // namespace

std::string tflops_text(const Task& t, double us) { return fmt::format("{:.1f}", t.tflops_at(us)); }

std::string report_title(const ReportData& d) {
  const auto& c = d.run->config;
  return fmt::format("tessera bench: {} ({} shapes), kernels {}, on {}", c.task_set, c.tasks.size(), c.kernels,
                     d.device.empty() ? "no GPU" : d.device);
}

std::string method_text(const ReportData& d) {
  const std::string who = d.kernels ? "Each kernel and the four baselines (cuBLAS TN and NN, cuBLASLt heuristic, "
                                      "cuBLASLt autotuned) were timed in one worker process, interleaved"
                                    : "The four baselines (cuBLAS TN and NN, cuBLASLt heuristic, cuBLASLt autotuned) "
                                      "were timed in one process, interleaved";
  return who + ": cold kernel GPU time (CUPTI activity records), L2 flushed before every sample, fresh random inputs, "
               "stopping once the median is known (or at a timeout)." +
         (d.kernels ? " A speedup is a baseline's median over the kernel's, both from that one run." : "") +
         " Launch overhead is not in these times.";
}

std::string ceiling_text(const ReportData& d) {
  const auto& c = d.ceiling;
  std::string s = c.has_peak() ? fmt::format("Peak {:.0f} TFLOP/s ({}).", c.peak_tflops, c.peak_source)
                               : "No stored peak: \"% of peak\" is not shown (give --peak-tflops).";
  s += c.has_bandwidth() ? fmt::format(" DRAM bandwidth {:.0f} GB/s ({}).", c.dram_gbps, c.dram_source)
                         : " No stored DRAM bandwidth: the roofline has no bandwidth roof (give --dram-gbps).";
  if (!c.has_peak()) return s;
  if (d.above.empty()) return s + " No figure is above the peak.";
  double worst = 0;
  for (const auto& a : d.above) worst = std::max(worst, a.tflops);
  return s + fmt::format(" {} figure(s) are ABOVE this peak (up to {:.0f} TFLOP/s, {:.1f}%): they are shown as measured, "
                         "not clamped; the stored peak is lower than what this GPU did and should be measured again.",
                         d.above.size(), worst, 100.0 * worst / c.peak_tflops);
}

std::vector<std::pair<std::string, std::string>> headline(const ReportData& d) {
  const auto& all = d.buckets.back();
  std::vector<std::pair<std::string, std::string>> out = {{"shapes measured", fmt::format("{} of {}", all.done, all.shapes)}};
  if (all.kernel_compiled) out.push_back({"kernels compiled only (not run)", std::to_string(all.kernel_compiled)});
  if (d.kernels) {
    out.push_back({"kernels verified and timed", fmt::format("{} ({} failed)", all.kernel_ok, all.kernel_failed)});
    for (const auto& [column, label] : std::vector<std::pair<std::string, std::string>>{
             {"baseline-max", "vs the fastest baseline"}, {"cuBLAS-max", "vs cuBLAS (faster of TN/NN)"},
             {"cuBLASLt-auto-tuning-max", "vs cuBLASLt autotuned"}})
      if (const Stat* s = all_stat(d, column))
        out.push_back({label, fmt::format("{:.3f}x geomean, {:.3f}x mean, faster on {} of {}", s->geomean, s->mean,
                                          s->wins, s->n)});
  } else {
    std::string most;
    int count = 0;
    for (const auto& [b, n] : all.fastest_baseline)
      if (n > count) most = b, count = n;
    if (count) out.push_back({"fastest baseline most often", fmt::format("{} ({} of {} shapes)", most, count, all.done)});
  }
  if (spread(d)) {
    // Shapes and the seconds they took, by "ordinal name": how evenly the GPUs shared the sweep.
    std::map<std::string, std::pair<int, double>> shapes;
    for (const auto& r : d.rows) {
      auto& [n, seconds] = shapes[r.gpu.empty() ? "one GPU (an earlier session)" : r.gpu];
      ++n, seconds += r.wall_s;
    }
    std::string per;
    for (const auto& [gpu, v] : shapes)
      per += fmt::format("{}{}: {} ({:.0f} s)", per.empty() ? "" : ", ", gpu, v.first, v.second);
    out.push_back({"shapes per GPU (time measuring)", per});
  }
  if (d.ceiling.has_peak()) out.push_back({"peak (for % of peak)", fmt::format("{:.0f} TFLOP/s", d.ceiling.peak_tflops)});
  if (!d.above.empty()) out.push_back({"figures above the peak", fmt::format("{} (see below)", d.above.size())});
  return out;
}

std::optional<double> shape_value(const ShapeRow& r, bool kernels) {
  if (kernels) {
    auto it = r.speedup.find("baseline-max");
    return it == r.speedup.end() ? std::nullopt : std::optional(it->second);
  }
  if (!r.best_baseline_us) return std::nullopt;
  return r.task.tflops_at(*r.best_baseline_us);
}

std::vector<const ShapeRow*> extremes(const ReportData& d, bool worst, int n) {
  std::vector<const ShapeRow*> v;
  for (const auto& r : d.rows)
    if (shape_value(r, d.kernels)) v.push_back(&r);
  std::stable_sort(v.begin(), v.end(), [&](const ShapeRow* a, const ShapeRow* b) {
    const double x = *shape_value(*a, d.kernels), y = *shape_value(*b, d.kernels);
    return worst ? x < y : x > y;
  });
  if (int(v.size()) > n) v.resize(std::size_t(n));
  return v;
}

std::vector<std::string> extreme_headers(const ReportData& d) {
  std::vector<std::string> h{"shape", "bucket", d.kernels ? "kernel" : "fastest baseline", d.kernels ? "speedup" : "TFLOP/s",
          d.kernels ? "kernel µs" : "µs", d.kernels ? "fastest baseline (µs)" : "others (µs)", "TFLOP/s",
          "% of peak", "bottleneck", "SM", "DRAM", "tensor", "occupancy"};
  if (d.kernels) h.push_back("cost model: winner's rank, predicted µs");
  if (spread(d)) h.push_back("GPU");
  return h;
}

ExtremeRow extreme_row(const ReportData& d, const ShapeRow& r) {
  ExtremeRow e;
  e.shape = r.task.shape();
  e.bucket = r.bucket;
  const double us = d.kernels ? *r.kernel_us : *r.best_baseline_us;
  e.kernel = d.kernels ? r.kernel : r.best_baseline;
  e.value = d.kernels ? fmt::format("{:.3f}x", *shape_value(r, true)) : tflops_text(r.task, us);
  e.kernel_us = fmt::format("{:.2f}", us);
  if (d.kernels) {
    e.baseline = fmt::format("{} ({:.2f})", r.best_baseline, r.best_baseline_us.value_or(0));
  } else {
    for (const auto& [name, bus] : r.baseline_us)
      if (name != r.best_baseline) e.baseline += fmt::format("{}{} {:.2f}", e.baseline.empty() ? "" : ", ", name, bus);
  }
  const double tflops = r.task.tflops_at(us);
  e.tflops = fmt::format("{:.1f}", tflops);
  e.pct_peak = d.ceiling.has_peak() ? fmt::format("{:.1f}%", percent_of_peak(tflops, d.ceiling)) : "-";
  e.bottleneck = r.counters.is_object() && !r.counters.empty() && !r.counters.contains("error")
                     ? search::bottleneck(r.counters)
                     : "-";
  e.sm = counter(r.counters, "sm_throughput_pct");
  e.dram = counter(r.counters, "dram_throughput_pct");
  e.tensor = counter(r.counters, "tensor_pipe_pct");
  e.occupancy = counter(r.counters, "achieved_occupancy_pct");
  e.kernels = d.kernels;
  if (const long long rank = integer_or(r.model, "winner_rank", 0); rank > 0)
    e.model = fmt::format("#{}, {:.2f}", rank, r.model.value("winner_predicted_us", 0.0));
  e.spread = spread(d);
  e.gpu = r.gpu.empty() ? "-" : r.gpu;
  return e;
}

std::vector<std::string> cells_of(const ExtremeRow& e) {
  std::vector<std::string> c{e.shape, e.bucket,     e.kernel, e.value, e.kernel_us, e.baseline, e.tflops,
                             e.pct_peak, e.bottleneck, e.sm,     e.dram,  e.tensor,    e.occupancy};
  if (e.kernels) c.push_back(e.model);
  if (e.spread) c.push_back(e.gpu);
  return c;
}

Table extremes_table(const ReportData& d, bool worst, int n) {
  Table table(extreme_headers(d));
  for (const auto* r : extremes(d, worst, n)) table.add_row(cells_of(extreme_row(d, *r)));
  return table;
}

}  // namespace tessera::bench::detail
