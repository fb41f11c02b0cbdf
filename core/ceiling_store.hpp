#pragma once
// The measured ceiling of each device (peak, bandwidth, floor), stored once
// per GPU under the cache folder (devices/<uuid>.json) so every evaluation
// and report on that GPU uses the same figures; `tessera doctor
// --measure-peak` measures it again.
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/result.hpp"

namespace tessera {

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
