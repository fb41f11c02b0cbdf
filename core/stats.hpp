#pragma once
// The statistics tessera computes over measurements, in one place (as
// google/benchmark's statistics.h): quantiles of timing samples, the median
// the bench protocol prints, the relative spread that decides noise, and the
// geometric mean every summary of speedups reports, and the rank correlation
// by which a cost model's ranking (or a second timing) is judged.
#include <vector>

namespace tessera::stats {

// The q-quantile (0 <= q <= 1) of samples sorted ascending, interpolated
// linearly between the two nearest ranks (numpy's default); 0 for none.
double quantile(const std::vector<double>& sorted, double q);

// The median, the mean of the two middle samples when the count is even
// (quantile(sorted, 0.5)); 0 for none. Sorts its own copy.
double median(std::vector<double> samples);

// The median as the upper of the two middle samples when the count is even,
// so it is always a sample that was measured (quantile(sorted, 0.5) averages
// the two instead); 0 for none. Sorts its own copy.
double upper_median(std::vector<double> samples);

// (p90 - p10) / median: the spread of a timing relative to its size; 0 when
// the median is not positive (nothing was timed).
double relative_spread(double p10, double p90, double median);

// The geometric mean of ratios, accumulated one value at a time:
// exp(mean of the logs). Every value must be positive; callers decide what a
// missing or zero ratio means (left out, or clamped) before adding it.
class GeometricMean {
public:
  void add(double value);
  int count() const { return n_; }
  double value() const;  // 0 when nothing was added

private:
  double log_sum_ = 0;
  int n_ = 0;
};

// Spearman's rank correlation of two equally long series: Pearson's over
// their ranks, ties sharing their mean rank; 0 when either is constant or
// they are shorter than two.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace tessera::stats
