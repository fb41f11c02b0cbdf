#include "bench/shape_clock.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace tessera::bench {

void ShapeClock::add(const Task& task, double wall_s, const DeviceSummary& device) {
  if (wall_s > 0) points_.push_back({task.flops(), task.min_bytes(), wall_s});
  if (device.peak_tflops > 0 && device.dram_gbps > 0) {
    peak_flops_ = device.peak_tflops * 1e12;
    bytes_per_s_ = device.dram_gbps * 1e9;
  }
}

double ShapeClock::x(double flops, double bytes) const {
  if (peak_flops_ <= 0) return flops;
  return std::max(flops / peak_flops_, bytes / bytes_per_s_);
}

std::optional<double> ShapeClock::seconds_for(const Task& task) const {
  if (points_.size() < kMinShapes) return std::nullopt;
  const double n = double(points_.size());
  double mx = 0, my = 0, lo = points_.front().wall_s;
  for (const auto& p : points_) mx += x(p.flops, p.bytes) / n, my += p.wall_s / n, lo = std::min(lo, p.wall_s);
  double sxx = 0, sxy = 0;  // centred: no cancellation between sizes six orders apart
  for (const auto& p : points_) {
    const double dx = x(p.flops, p.bytes) - mx;
    sxx += dx * dx, sxy += dx * (p.wall_s - my);
  }
  if (sxx <= 1e-12 * n * mx * mx) return std::nullopt;  // one size: no slope to read
  // A negative slope (noise over shapes of one cost) reads as none: every
  // shape then costs the mean. Never below the quickest shape recorded.
  const double slope = std::max(0.0, sxy / sxx);
  return std::max(lo, my + slope * (x(task.flops(), task.min_bytes()) - mx));
}

double ShapeClock::largest_x() const {
  double most = 0;
  for (const auto& p : points_) most = std::max(most, x(p.flops, p.bytes));
  return most;
}

std::string ShapeClock::largest() const {
  if (peak_flops_ <= 0) return fmt::format("{:.2g} TFLOP", largest_x() / 1e12);
  return fmt::format("{:.2g} ms of roofline time", largest_x() * 1e3);
}

bool ShapeClock::beyond(const Task& task) const {
  return !points_.empty() && x(task.flops(), task.min_bytes()) > kBeyond * largest_x();
}

}  // namespace tessera::bench
