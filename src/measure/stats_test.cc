#include "linkwise/measure/stats.h"

#include <gtest/gtest.h>

namespace linkwise::measure {

TEST(MeasureStats, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);  // mean of the two middle values, as nvbandwidth
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(MeasureStats, Summary) {
  auto s = summarize({50, 55, 54, 1});
  EXPECT_EQ(s.n, 4);
  EXPECT_DOUBLE_EQ(s.median, 52);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 55);
  EXPECT_DOUBLE_EQ(s.mean, 40);
  EXPECT_NEAR(s.stddev, 22.5943, 1e-3);  // sqrt((10^2 + 15^2 + 14^2 + 39^2) / 4) = sqrt(510.5)
}

TEST(MeasureStats, GigabytesPerSecondAreDecimal) {
  EXPECT_DOUBLE_EQ(gbps(1e9, 1), 1);
  EXPECT_DOUBLE_EQ(gbps(64.0 * 1048576, 1e-3), 67.108864);
  EXPECT_DOUBLE_EQ(gbps(1, 0), 0);
}

}  // namespace linkwise::measure
