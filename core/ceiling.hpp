#pragma once
// How fast the device could possibly run a task: its FLOPs at the measured
// tensor peak, its minimum bytes at the measured DRAM bandwidth, and the
// cold time of an empty kernel. A result faster than that is implausible and
// is never paid (harness/sandbox.cpp); reports draw it as the roofline.
#include <string>

#include "core/result.hpp"
#include "core/task.hpp"

namespace tessera {

// Headroom over the measured figures before a time counts as implausible:
// the tensor peak is the best cuBLAS ever measured here, not the hardware's,
// so a kernel may beat it by some margin; bandwidth and the floor are
// physical and get less.
inline constexpr double kTensorPeakHeadroom = 1.25;
inline constexpr double kBandwidthHeadroom = 1.10;
inline constexpr double kFloorHeadroom = 1.10;

struct Ceiling {
  double tensor_us = 0;  // flops / peak; 0 when the peak is unknown
  double memory_us = 0;  // minimum bytes / bandwidth; 0 when unknown
  double floor_us = 0;   // an empty kernel's cold time; 0 when unknown
  double peak_tflops = 0, dram_gbps = 0;
  double flops = 0, bytes = 0;

  // The fastest time the device could plausibly reach.
  double limit_us() const;
  bool implausible(double kernel_us) const { return kernel_us > 0 && kernel_us < limit_us(); }
  std::string describe() const;
};

// Bytes a kernel must move at least: A, B and C once (and the bias).
double minimum_bytes(const Task& task);

Ceiling ceiling_for(const Task& task, const DeviceSummary& device);

}  // namespace tessera
