#include "core/ceiling.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/fs.hpp"
#include "core/wire.hpp"

namespace tessera {

double minimum_bytes(const Task& t) {
  constexpr double kHalf = 2.0;  // bytes per fp16 element
  double bytes = kHalf * (double(t.m) * t.k + double(t.n) * t.k + double(t.m) * t.n);
  if (t.epilogue != Epilogue::none) bytes += kHalf * double(t.n);
  return bytes;
}

Ceiling ceiling_for(const Task& task, const DeviceSummary& d) {
  Ceiling c;
  c.flops = task.flops();
  c.bytes = minimum_bytes(task);
  c.peak_tflops = d.peak_tflops;
  c.dram_gbps = d.dram_gbps;
  if (d.peak_tflops > 0) c.tensor_us = c.flops / (d.peak_tflops * 1e12) * 1e6;
  if (d.dram_gbps > 0) c.memory_us = c.bytes / (d.dram_gbps * 1e9) * 1e6;
  c.floor_us = d.floor_us;
  return c;
}

double Ceiling::limit_us() const {
  return std::max({tensor_us / kTensorPeakHeadroom, memory_us / kBandwidthHeadroom, floor_us / kFloorHeadroom});
}

std::string Ceiling::describe() const {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
  if (tensor_us > 0)
    add(fmt::format("{:.3g} GFLOP at the measured peak of {:.0f} TFLOP/s take {:.3f} us", flops / 1e9, peak_tflops,
                    tensor_us));
  if (memory_us > 0)
    add(fmt::format("{:.3g} MB at the measured {:.0f} GB/s take {:.3f} us", bytes / 1e6, dram_gbps, memory_us));
  if (floor_us > 0) add(fmt::format("an empty kernel takes {:.3f} us", floor_us));
  if (out.empty()) return "no measured ceiling";
  return out + fmt::format("; with headroom nothing runs under {:.3f} us", limit_us());
}

namespace {

bool safe_name(const std::string& s) {
  if (s.empty() || s.size() > 128) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) return false;
  return true;
}

}  // namespace

std::filesystem::path ceiling_path(const std::string& uuid) {
  return cache_dir() / "devices" / ((safe_name(uuid) ? uuid : std::string("unknown-device")) + ".json");
}

std::optional<nlohmann::json> load_ceiling(const std::string& uuid) {
  std::error_code ec;
  const auto path = ceiling_path(uuid);
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  try {
    auto j = nlohmann::json::parse(read_file(path));
    if (j.value("peak_tflops", 0.0) > 0 && j.value("dram_gbps", 0.0) > 0 && j.value("floor_us", 0.0) > 0) return j;
  } catch (const std::exception& e) {
    spdlog::warn("ignoring the stored ceiling {}: {}", path.string(), e.what());
  }
  return std::nullopt;
}

void store_ceiling(const DeviceSummary& device, const nlohmann::json& ceiling) {
  nlohmann::json j = ceiling;
  j["device"] = device.name;
  j["uuid"] = device.uuid;
  j["measured_at"] = utc_now_iso();
  const auto path = ceiling_path(device.uuid);
  std::filesystem::create_directories(path.parent_path());
  atomic_write_file(path, j.dump(2) + "\n");
}

bool raise_stored_peak(const DeviceSummary& device) {
  // Read again just before writing: another process on the same GPU may have
  // raised it further meanwhile, and the peak only goes up.
  auto stored = load_ceiling(device.uuid);
  if (!stored || device.peak_tflops <= stored->value("peak_tflops", 0.0)) return false;
  (*stored)["peak_tflops"] = device.peak_tflops;
  (*stored)["peak_source"] = device.peak_source;
  store_ceiling(device, *stored);
  return true;
}

bool raise_peak(DeviceSummary& device, double tflops, const std::string& source) {
  if (tflops <= device.peak_tflops) return false;
  device.peak_tflops = tflops;
  device.peak_source = source;
  try {
    if (raise_stored_peak(device))
      spdlog::info("stored peak of {} raised to {:.1f} TFLOP/s ({})", device.name, device.peak_tflops,
                   device.peak_source);
  } catch (const std::exception& e) {
    spdlog::warn("could not store the raised peak: {}", e.what());
  }
  return true;
}

void apply_ceiling(DeviceSummary& d, const nlohmann::json& c) { apply_ceiling(d, c.get<DeviceCeiling>()); }

}  // namespace tessera
