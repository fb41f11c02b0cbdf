#pragma once
// The ceilings a report measures against: the device's dense fp16 tensor
// peak and its DRAM bandwidth, as measured and stored with the results
// (DeviceSummary.peak_tflops / dram_gbps), or given on the command line.
// Figures are never clamped to them: a figure above the peak is shown as it
// is, and the report says which shapes exceeded it and by how much.
#include <optional>
#include <string>
#include <vector>

#include "bench/record.hpp"

namespace tessera::bench {

struct Ceiling {
  double peak_tflops = 0;  // 0: unknown (no "% of peak" is shown)
  std::string peak_source;
  double dram_gbps = 0;    // 0: unknown (no bandwidth roof is drawn)
  std::string dram_source;
  bool has_peak() const { return peak_tflops > 0; }
  bool has_bandwidth() const { return dram_gbps > 0; }
};

// The fastest baseline figure of one record (cold), if any was timed.
struct BaselinePeak {
  std::string who;  // the baseline
  std::string shape;
  double tflops = 0;
};
std::optional<BaselinePeak> fastest_baseline(const ShapeRecord& r);

// Overrides (> 0) win; otherwise the highest peak and bandwidth stored in the
// records' device summaries, with their sources, and the peak raised to the
// fastest baseline of the sweep when that is higher: the peak is what
// cuBLAS/cuBLASLt reach on this GPU, and a stored probe that read low (cold
// clocks) must not put cuBLAS itself above 100%.
Ceiling resolve_ceiling(const std::vector<ShapeRecord>& records, double peak_override = 0, double dram_override = 0);

// One measured figure above the peak.
struct AbovePeak {
  std::string shape;
  std::string who;  // the kernel or a baseline
  double tflops = 0;
};
// Every kernel and baseline figure above the peak (empty when the peak is unknown).
std::vector<AbovePeak> above_peak(const std::vector<ShapeRecord>& records, const Ceiling& ceiling);

// "% of peak" of a figure, unclamped; 0 when the peak is unknown.
double percent_of_peak(double tflops, const Ceiling& ceiling);

}  // namespace tessera::bench
