#pragma once
// How fast the device could possibly run a task: its FLOPs at the measured
// tensor peak, its minimum bytes at the measured DRAM bandwidth, and the
// cold time of an empty kernel. A result faster than that is implausible and
// is never paid (harness/sandbox.cpp); reports draw it as the roofline.
//
// The figures are measured once per GPU (worker/ceiling_probe.hpp) and
// stored under the cache folder (devices/<uuid>.json), so every evaluation
// and report on that GPU uses the same ones; `tessera doctor --measure-peak`
// measures them again.
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

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


// The store, one file per GPU.
std::filesystem::path ceiling_path(const std::string& uuid);
// The stored figures, or nullopt when none (or the file is unreadable: it is
// then measured again rather than trusted).
std::optional<nlohmann::json> load_ceiling(const std::string& uuid);
void store_ceiling(const DeviceSummary& device, const nlohmann::json& ceiling);
// Raises the stored peak to the device's when that is higher (a baseline
// measured above the stored peak during an evaluation), so that the next
// process starts from it; bandwidth and floor stay. Nothing is written when no
// ceiling is stored (it is then measured in full first). Returns whether it wrote.
bool raise_stored_peak(const DeviceSummary& device);
// What an evaluation and a baselines-only sweep both do with a baseline
// measured at `tflops`: when it is above the device's peak, it becomes the
// peak in `device` and in the store (a failure to
// store is logged, never thrown: the measurement stands). Returns whether the
// device's peak rose.
bool raise_peak(DeviceSummary& device, double tflops, const std::string& source);
// Copies a stored ceiling's peak_tflops, peak_source, dram_gbps, floor_us
// (read as a DeviceCeiling, core/wire.hpp, leniently: the file also names the
// device and when it was measured) into the summary.
void apply_ceiling(DeviceSummary& device, const nlohmann::json& ceiling);

}  // namespace tessera
