#include "linkwise/measure/copy_bench.h"

#include <gtest/gtest.h>

#include "linkwise/measure/fake_gpu.h"
#include "linkwise/util/error.h"

namespace linkwise::measure {

namespace {
constexpr double kTol = 1e-9;
FakeGpuSpec spec(const std::string& s) { return parse_fake_spec(s); }
const CopyResult& find(const std::vector<CopyResult>& v, const std::string& kind, CopyEngine e) {
  for (const auto& r : v)
    if (r.kind == kind && r.engine == e) return r;
  throw std::runtime_error("no " + kind);
}
}  // namespace

TEST(MeasureCopy, HostDeviceFiguresMatchTheSimulatedRates) {
  // With no per-copy latency every copy of B bytes takes B / rate: each sample is the rate exactly.
  FakeCuda cuda(spec("gpus=1,h2d=50,d2h=40,sm=0.5,latency=0"));
  CopyOptions o;
  o.sizes = {1 << 20};
  o.warmup = 0;  // warm-up copies shift the two streams' starts apart (as on a real GPU)
  auto r = bench_host_device(cuda, {0}, o);
  ASSERT_EQ(r.size(), 6u);  // h2d, d2h, bidir for ce and sm
  EXPECT_NEAR(find(r, "h2d", CopyEngine::kCe).GBps.median, 50, kTol);
  EXPECT_NEAR(find(r, "d2h", CopyEngine::kCe).GBps.median, 40, kTol);
  EXPECT_NEAR(find(r, "h2d", CopyEngine::kSm).GBps.median, 25, kTol);
  // Both directions at once on separate streams: 16 copies each, 50 and 40 GB/s; the total span is
  // the slower direction's 16 × B / 40e9, so total = 2 × 16 × B / (16 × B / 40e9) = 80 GB/s.
  const auto& bi = find(r, "bidir", CopyEngine::kCe);
  EXPECT_NEAR(bi.GBps.median, 80, kTol);
  ASSERT_EQ(bi.direction_GBps.size(), 2u);
  EXPECT_NEAR(bi.direction_GBps[0], 50, kTol);
  EXPECT_NEAR(bi.direction_GBps[1], 40, kTol);
  EXPECT_EQ(cuda.live_handles(), 0);
}

TEST(MeasureCopy, MedianOfSamplesDropsAnOutlier) {
  // One copy per sample and no warm-up: the samples see the jitter factors 1, 0.5, 1.1 in turn.
  FakeCuda cuda(spec("gpus=1,h2d=50,latency=0,jitter=1:0.5:1.1"));
  CopyOptions o;
  o.sizes = {1 << 20};
  o.loops = 1;
  o.warmup = 0;
  o.samples = 3;
  o.engines = {CopyEngine::kCe};
  // Per sample the h2d job runs one copy: factors 1, 0.5, 1.1 -> 50, 25, 55 GB/s; median 50.
  auto r = bench_host_device(cuda, {0}, o);
  const auto& h = find(r, "h2d", CopyEngine::kCe);
  EXPECT_NEAR(h.GBps.median, 50, kTol);
  EXPECT_NEAR(h.GBps.min, 25, kTol);
  EXPECT_NEAR(h.GBps.max, 55, kTol);
}

TEST(MeasureCopy, PeerMatrixWithAccessOnAndOff) {
  FakeCuda cuda(spec("gpus=2,p2p=300,staged=20,latency=0"));
  CopyOptions o;
  o.sizes = {1 << 20};
  auto on = bench_peer(cuda, {0, 1}, true, o);
  auto off = bench_peer(cuda, {0, 1}, false, o);
  // On: 2 ordered pairs × (ce, sm) p2p, plus one bidir per pair and engine.
  EXPECT_EQ(on.size(), 6u);
  EXPECT_NEAR(find(on, "p2p", CopyEngine::kCe).GBps.median, 300, kTol);
  EXPECT_NEAR(find(on, "p2p_bidir", CopyEngine::kCe).GBps.median, 600, kTol);
  // Off: the copy kernel cannot reach the peer, so only ce, staged through the host.
  EXPECT_EQ(off.size(), 3u);
  EXPECT_NEAR(find(off, "p2p", CopyEngine::kCe).GBps.median, 20, kTol);
  EXPECT_FALSE(off[0].peer_access);
  EXPECT_EQ(cuda.live_handles(), 0);
}

TEST(MeasureCopy, PairsWithoutPeerAccessAreSkippedWhenAccessIsAsked) {
  FakeCuda cuda(spec("gpus=2,p2p=0"));
  CopyOptions o;
  o.sizes = {4096};
  EXPECT_TRUE(bench_peer(cuda, {0, 1}, true, o).empty());
  EXPECT_FALSE(bench_peer(cuda, {0, 1}, false, o).empty());
}

TEST(MeasureCopy, LatencyIsTheTimePerSmallCopy) {
  // A 4-byte copy takes latency + 4 / rate: 3 us + 4 / 300e9 s = 3.0000133 us.
  FakeCuda cuda(spec("gpus=2,p2p=300,latency=3"));
  auto l = bench_latency(cuda, {0, 1}, true, 10, 3);
  ASSERT_EQ(l.size(), 4u);
  for (const auto& x : l) EXPECT_NEAR(x.us, 3.0, 1e-3);
}

TEST(MeasureCopy, LocalCopies) {
  FakeCuda cuda(spec("gpus=1,local=2000,latency=0"));
  CopyOptions o;
  o.sizes = {1 << 20};
  auto r = bench_local(cuda, {0}, o);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_NEAR(r[0].GBps.median, 2000, 1e-6);
}

TEST(MeasureCopy, FakeSpecErrors) {
  EXPECT_THROW(parse_fake_spec("gpus=two"), InputError);
  try {
    parse_fake_spec("h2e=5");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "fake GPU spec: unknown key 'h2e'; did you mean 'h2d'?");
  }
}

}  // namespace linkwise::measure
