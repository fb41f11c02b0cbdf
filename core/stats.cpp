#include "core/stats.hpp"

#include <algorithm>
#include <cmath>

namespace tessera::stats {

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * double(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}

double upper_median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

double relative_spread(double p10, double p90, double median) { return median > 0 ? (p90 - p10) / median : 0; }

void GeometricMean::add(double value) {
  log_sum_ += std::log(value);
  ++n_;
}

double GeometricMean::value() const { return n_ ? std::exp(log_sum_ / n_) : 0; }

}  // namespace tessera::stats
