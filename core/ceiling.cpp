#include "core/ceiling.hpp"

#include <algorithm>

#include <fmt/format.h>

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

}  // namespace tessera
