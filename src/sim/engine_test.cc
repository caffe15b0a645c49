#include "linkwise/sim/engine.h"

#include <gtest/gtest.h>

#include "linkwise/util/error.h"

namespace linkwise::sim {
namespace {

constexpr double kTol = 1e-9;  // relative

TEST(Engine, ComputeThenTransfer) {
  // 1 ms compute, then 5 us latency + 1 GB over 100 GB/s = 10 ms: ends at 11.005 ms.
  TaskGraph g;
  int c = g.add_compute(0, 0, 1e-3, "fwd");
  int x = g.add_transfer({{.bytes = 1e9, .route = {0}}}, 5e-6, "send", {c});
  auto r = Engine({100e9}).run(g);
  EXPECT_NEAR(r.tasks[x].start_s, 1e-3, kTol);
  EXPECT_NEAR(r.tasks[x].end_s, 1e-3 + 5e-6 + 1e-2, 1e-2 * kTol);
  EXPECT_NEAR(r.makespan_s, r.tasks[x].end_s, 1e-15);
  EXPECT_NEAR(r.resources[0].bytes, 1e9, 1);
  EXPECT_NEAR(r.resources[0].busy_s, 1e-2, 1e-2 * kTol);
}

TEST(Engine, StreamsSerialiseInOrder) {
  // Two 1 ms tasks on one stream run back to back; a third on another stream runs alongside.
  TaskGraph g;
  g.add_compute(0, 0, 1e-3);
  int b = g.add_compute(0, 0, 1e-3);
  int c = g.add_compute(0, 1, 1e-3);
  auto r = Engine({}).run(g);
  EXPECT_NEAR(r.tasks[b].end_s, 2e-3, kTol);
  EXPECT_NEAR(r.tasks[c].end_s, 1e-3, kTol);
}

TEST(Engine, SharingThenSpeedUpWhenOneEnds) {
  // Link of 10 B/s. Flow A 10 B, flow B 30 B, both start at 0 in separate tasks.
  // Shared at 5 B/s each until A ends at t = 2 (B has 20 left); B then alone at 10 B/s: ends at 4.
  TaskGraph g;
  int a = g.add_transfer({{.bytes = 10, .route = {0}}}, 0);
  int b = g.add_transfer({{.bytes = 30, .route = {0}}}, 0);
  auto r = Engine({10}).run(g);
  EXPECT_NEAR(r.tasks[a].end_s, 2, kTol);
  EXPECT_NEAR(r.tasks[b].end_s, 4, kTol);
  EXPECT_NEAR(r.resources[0].busy_s, 4, kTol);
}

TEST(Engine, FullestRanksByUtilisationNotBusyTime) {
  // Resource 0: 100 B/s, carries a 10 B flow capped at 1 B/s -> busy 0..10 s.
  // Resource 1: 10 B/s, carries a 50 B flow at its full 10 B/s -> busy 0..5 s.
  // Makespan 10 s. Busy time ranks resource 0 first (10 s against 5 s); utilisation
  // bytes / (capacity x makespan) gives 10 / (100 x 10) = 0.01 for resource 0 and
  // 50 / (10 x 10) = 0.5 for resource 1, so resource 1 is the fullest.
  TaskGraph g;
  g.add_transfer({{.bytes = 10, .route = {0}, .rate_cap = 1}}, 0);
  g.add_transfer({{.bytes = 50, .route = {1}}}, 0);
  const std::vector<double> cap = {100, 10};
  auto r = Engine(cap).run(g);
  EXPECT_NEAR(r.makespan_s, 10, kTol);
  EXPECT_NEAR(r.resources[0].busy_s, 10, kTol);
  EXPECT_NEAR(r.resources[1].busy_s, 5, kTol);
  EXPECT_NEAR(r.utilisation(0, cap), 0.01, kTol);
  EXPECT_NEAR(r.utilisation(1, cap), 0.5, kTol);
  auto top = r.fullest(2, cap);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0], 1);
  EXPECT_EQ(top[1], 0);
  EXPECT_EQ(r.fullest(1, cap), std::vector<int>{1});
}

TEST(Engine, BadRouteIsAnInputError) {
  TaskGraph g;
  g.add_transfer({{.bytes = 1, .route = {3}}}, 0);
  EXPECT_THROW(Engine({1}).run(g), InputError);
  EXPECT_THROW(g.depend(0, 0), InputError);
}

}  // namespace
}  // namespace linkwise::sim
