#pragma once
// `tessera bench report RUN`: one self-contained HTML page (inline SVG and
// CSS, nothing fetched) and a Markdown twin, from a run folder's records
// (docs/bench.md, "The report"): heat maps of the speedup over (M, N) for each
// K, speedup against FLOPs, TFLOP/s against the roofline of the measured peak
// and DRAM bandwidth, the per-bucket table, the worst and best shapes with
// their kernels and counters, and the comparison with another tool if given.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bench/ceiling.hpp"
#include "bench/compare.hpp"
#include "bench/run.hpp"
#include "bench/table.hpp"

namespace tessera::bench {

inline constexpr int kExtremeShapes = 10;    // worst and best shapes listed
inline constexpr int kMaxHeatmaps = 16;      // distinct K values drawn as heat maps
inline constexpr int kMaxHeatmapAxis = 24;   // distinct M (or N) values a heat map may have

struct ReportOptions {
  double peak_tflops = 0;  // > 0: overrides the stored peak
  double dram_gbps = 0;    // > 0: overrides the stored bandwidth
  std::filesystem::path against;  // another tool's per-shape CSV
  std::string against_name = "CUDA-L2";
  std::string against_method = kCudaL2Method;
  int extremes = kExtremeShapes;
};

// Everything the two renderings share, computed once.
struct ReportData {
  const Run* run = nullptr;
  std::vector<ShapeRow> rows;
  std::vector<BucketSummary> buckets;
  Ceiling ceiling;
  std::vector<AbovePeak> above;
  std::optional<Comparison> comparison;
  bool kernels = false;  // some kernel was timed
  std::string device, generated_at;
};

ReportData report_data(const Run& run, const ReportOptions& options);
std::string report_html(const ReportData& data, const ReportOptions& options);
std::string report_markdown(const ReportData& data, const ReportOptions& options);

struct ReportFiles {
  std::filesystem::path html, markdown;
};
// Writes report.html and report.md (and the tables) into the run folder.
ReportFiles write_report(const Run& run, const ReportOptions& options);

}  // namespace tessera::bench
