#include <cmath>

#include <gtest/gtest.h>

#include "core/stats.hpp"

namespace tessera::stats {
namespace {

TEST(Stats, QuantileInterpolatesBetweenRanks) {
  const std::vector<double> xs = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(quantile(xs, 0.0), 1);
  EXPECT_DOUBLE_EQ(quantile(xs, 1.0), 4);
  EXPECT_DOUBLE_EQ(quantile(xs, 0.5), 2.5);  // halfway between the middle two
  EXPECT_DOUBLE_EQ(quantile(xs, 0.1), 1.3);  // rank 0.3
  EXPECT_DOUBLE_EQ(quantile({7}, 0.9), 7);
  EXPECT_EQ(quantile({}, 0.5), 0);
}

TEST(Stats, MedianAveragesTheMiddleTwo) {
  EXPECT_DOUBLE_EQ(median({4, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), quantile({1, 2, 3, 4}, 0.5));
  EXPECT_EQ(median({}), 0);
}

TEST(Stats, UpperMedianIsAMeasuredSample) {
  EXPECT_DOUBLE_EQ(upper_median({4, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(upper_median({4, 1, 3, 2}), 3);  // the upper middle one, not 2.5
  EXPECT_EQ(upper_median({}), 0);
}

TEST(Stats, RelativeSpreadIsZeroWithoutAMedian) {
  EXPECT_DOUBLE_EQ(relative_spread(9, 11, 10), 0.2);
  EXPECT_EQ(relative_spread(9, 11, 0), 0);
}

TEST(Stats, SpearmanRanksTiesByTheirMeanRank) {
  EXPECT_NEAR(spearman({1, 2, 3, 4, 5}, {2, 4, 6, 8, 100}), 1.0, 1e-12);  // monotone, not linear
  EXPECT_NEAR(spearman({1, 2, 3, 4, 5}, {5, 4, 3, 2, 1}), -1.0, 1e-12);
  // Ranks 1, 2.5, 2.5, 4 against 1, 3, 2, 4: 4.5 / sqrt(4.5 * 5).
  EXPECT_NEAR(spearman({1, 2, 2, 3}, {1, 3, 2, 4}), 4.5 / std::sqrt(22.5), 1e-12);
  EXPECT_EQ(spearman({3, 3, 3}, {1, 2, 3}), 0);  // a constant series ranks nothing
  EXPECT_EQ(spearman({1, 2}, {1, 2, 3}), 0);     // unequal lengths
  EXPECT_EQ(spearman({1}, {1}), 0);
}

TEST(Stats, GeometricMeanOfRatios) {
  GeometricMean g;
  EXPECT_EQ(g.count(), 0);
  EXPECT_EQ(g.value(), 0);
  for (double x : {2.0, 0.5, 1.0, 4.0}) g.add(x);
  EXPECT_EQ(g.count(), 4);
  EXPECT_NEAR(g.value(), std::pow(4.0, 0.25), 1e-12);
  GeometricMean symmetric;  // twice as fast and twice as slow cancel
  symmetric.add(2.0);
  symmetric.add(0.5);
  EXPECT_NEAR(symmetric.value(), 1.0, 1e-12);
}

}  // namespace
}  // namespace tessera::stats
