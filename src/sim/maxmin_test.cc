#include "linkwise/sim/maxmin.h"

#include <gtest/gtest.h>

namespace linkwise::sim {
namespace {

constexpr double kTol = 1e-6;  // relative; the answers below are exact in real arithmetic

TEST(MaxMin, TwoFlowsShareOneLink) {
  // One 10 GB/s resource, two flows: 5 GB/s each.
  auto x = max_min_rates({10e9}, {{{0}}, {{0}}});
  EXPECT_NEAR(x[0], 5e9, 5e9 * kTol);
  EXPECT_NEAR(x[1], 5e9, 5e9 * kTol);
}

TEST(MaxMin, ClassicParkingLot) {
  // Resources 0 (10) and 1 (4). f0 on {0}, f1 on {0,1}, f2 on {1}.
  // Fill: r1 fills first at level 2 (two flows share 4): f1 = f2 = 2; then f0 takes 10 - 2 = 8.
  auto x = max_min_rates({10, 4}, {{{0}}, {{0, 1}}, {{1}}});
  EXPECT_NEAR(x[0], 8, 8 * kTol);
  EXPECT_NEAR(x[1], 2, 2 * kTol);
  EXPECT_NEAR(x[2], 2, 2 * kTol);
}

TEST(MaxMin, CapsFreezeEarly) {
  // One resource of 10, f0 capped at 1: f0 = 1, f1 = 9.
  auto x = max_min_rates({10}, {{{0}, 1.0}, {{0}}});
  EXPECT_NEAR(x[0], 1, kTol);
  EXPECT_NEAR(x[1], 9, 9 * kTol);
}

TEST(MaxMin, RepeatedResourceCountsTwice) {
  // A flow that crosses resource 0 twice (staged through memory: written, then read) on 10: rate 5.
  auto x = max_min_rates({10}, {{{0, 0}}});
  EXPECT_NEAR(x[0], 5, 5 * kTol);
}

TEST(MaxMin, FractionalCoefficientsSplitAFlow) {
  // A flow split 3/4 over resource 0 (30) and 1/4 over resource 1 (10): each limits it to 40.
  auto x = max_min_rates({30, 10}, {{{0, 1}, kUnlimited, {0.75, 0.25}}});
  EXPECT_NEAR(x[0], 40, 40 * kTol);
}

TEST(MaxMin, SolverReuseAndLoad) {
  MaxMinSolver s({10e9, 10e9});
  s.add_flow({0});
  s.add_flow({0, 1});
  auto x = s.solve();
  EXPECT_NEAR(x[0], 5e9, 5e9 * kTol);
  EXPECT_NEAR(x[1], 5e9, 5e9 * kTol);
  EXPECT_TRUE(s.saturated(0));
  EXPECT_FALSE(s.saturated(1));
  EXPECT_NEAR(s.load()[1], 5e9, 5e9 * kTol);
  s.clear();
  s.add_flow({1});
  EXPECT_NEAR(s.solve()[0], 10e9, 10e9 * kTol);
}

TEST(MaxMin, ASolveTouchesOnlyItsResourcesAndForgetsThePrevious) {
  // Resources 0..4 at 10, 20, 30, 40, 50 GB/s. Solve 1: flows over {0, 3} and {3}: resource 0
  // holds the first at 10, resource 3 gives the second 40 - 10 = 30. Solve 2: one flow over {4}:
  // 50 GB/s; the loads of 0 and 3 fall back to 0 and used() is {4}.
  MaxMinSolver s({10e9, 20e9, 30e9, 40e9, 50e9});
  s.add_flow({0, 3});
  s.add_flow({3});
  auto x = s.solve();
  EXPECT_NEAR(x[0], 10e9, 10e9 * kTol);
  EXPECT_NEAR(x[1], 30e9, 30e9 * kTol);
  EXPECT_EQ(s.used(), (std::vector<int>{0, 3}));
  EXPECT_NEAR(s.load()[3], 40e9, 40e9 * kTol);
  s.clear();
  s.add_flow({4});
  EXPECT_NEAR(s.solve()[0], 50e9, 50e9 * kTol);
  EXPECT_EQ(s.used(), (std::vector<int>{4}));
  EXPECT_EQ(s.load()[0], 0.0);
  EXPECT_EQ(s.load()[3], 0.0);
  EXPECT_TRUE(s.saturated(4));
}

TEST(MaxMin, EmptyRouteGetsItsCap) {
  auto x = max_min_rates({1}, {{{}, 3.0}, {{}}});
  EXPECT_EQ(x[0], 3.0);
  EXPECT_EQ(x[1], kUnlimited);
}

}  // namespace
}  // namespace linkwise::sim
