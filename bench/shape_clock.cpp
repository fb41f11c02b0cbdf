#include "bench/shape_clock.hpp"

#include <algorithm>

namespace tessera::bench {

void ShapeClock::add(const Task& task, double wall_s) {
  if (wall_s > 0) points_.push_back({task.flops(), wall_s});
}

std::optional<double> ShapeClock::seconds_for(const Task& task) const {
  if (points_.size() < kMinShapes) return std::nullopt;
  const double n = double(points_.size());
  double mx = 0, my = 0, lo = points_.front().wall_s;
  for (const auto& p : points_) mx += p.flops / n, my += p.wall_s / n, lo = std::min(lo, p.wall_s);
  double sxx = 0, sxy = 0;  // centred: no cancellation between FLOP counts of 1e6 and 1e15
  for (const auto& p : points_) sxx += (p.flops - mx) * (p.flops - mx), sxy += (p.flops - mx) * (p.wall_s - my);
  if (sxx <= 1e-12 * n * mx * mx) return std::nullopt;  // one size: no slope to read
  // A negative slope (noise over shapes of one cost) reads as none: every
  // shape then costs the mean. Never below the quickest shape recorded.
  const double slope = std::max(0.0, sxy / sxx);
  return std::max(lo, my + slope * (task.flops() - mx));
}

double ShapeClock::largest_flops() const {
  double most = 0;
  for (const auto& p : points_) most = std::max(most, p.flops);
  return most;
}

bool ShapeClock::beyond(const Task& task) const {
  return !points_.empty() && task.flops() > kBeyond * largest_flops();
}

}  // namespace tessera::bench
