#pragma once
// What the HTML and Markdown reports both say, worded once.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/report.hpp"
#include "core/table.hpp"

namespace tessera::bench::detail {

std::string report_title(const ReportData& d);
// How the figures were measured, in one paragraph.
std::string method_text(const ReportData& d);
// The stored peak and bandwidth, and what exceeded the peak (never clamped).
std::string ceiling_text(const ReportData& d);
// The headline numbers as (label, value) pairs.
std::vector<std::pair<std::string, std::string>> headline(const ReportData& d);

// The figure a shape is ranked and coloured by: the speedup over the fastest
// baseline when kernels were timed, else the fastest baseline's TFLOP/s.
std::optional<double> shape_value(const ShapeRow& r, bool kernels);
// The n lowest (worst) or highest shapes by shape_value.
std::vector<const ShapeRow*> extremes(const ReportData& d, bool worst, int n);

struct ExtremeRow {
  std::string shape, bucket, kernel, value, kernel_us, baseline, tflops, pct_peak;
  std::string bottleneck, sm, dram, tensor, occupancy;  // counters, "-" when not measured
  // Kernel reports: the winner's rank in the cost model's order and the model's
  // prediction for it ("-" when the kernel was not tile-tuned).
  bool kernels = false;
  std::string model = "-";
  // A sweep spread over GPUs (--gpus): the GPU that measured the shape ("ordinal name").
  bool spread = false;
  std::string gpu;
};
std::vector<std::string> extreme_headers(const ReportData& d);
ExtremeRow extreme_row(const ReportData& d, const ShapeRow& r);
std::vector<std::string> cells_of(const ExtremeRow& e);
// The n worst or best shapes as a table, one ExtremeRow each.
Table extremes_table(const ReportData& d, bool worst, int n);

std::string tflops_text(const Task& t, double us);

}  // namespace tessera::bench::detail
