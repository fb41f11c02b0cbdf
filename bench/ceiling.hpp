#pragma once
// The ceilings a report measures against: the device's dense fp16 tensor
// peak and its DRAM bandwidth, as measured and stored with the results
// (DeviceSummary.peak_tflops / dram_gbps), or given on the command line.
// Figures are never clamped to them: a figure above the peak is shown as it
// is, and the report says which shapes exceeded it and by how much.
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

// Overrides (> 0) win; otherwise the highest peak and bandwidth stored in the
// records' device summaries, with their sources.
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
