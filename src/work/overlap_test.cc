#include "linkwise/work/overlap.h"

#include <gtest/gtest.h>

#include "linkwise/topo/chassis.h"
#include "linkwise/work/model.h"

namespace linkwise::work {
namespace {

GpuSpec gpu_of(const char* chassis) {
  auto c = topo::load_chassis(chassis);
  return gpu_spec(c.node(c.gpus().front()), Precision::kBf16);
}

TEST(WorkOverlap, PersistentGemmsOnHopperOnly) {
  EXPECT_TRUE(persistent_gemms(gpu_of("dgx-h100")));
  EXPECT_FALSE(persistent_gemms(gpu_of("dgx-a100")));
}

TEST(WorkOverlap, PersistentGemmSplitsIntoTwoWavesBesideACollective) {
  // H100, a collective of a = 3 ms at 360 GB/s (32 channels) beside one persistent GEMM of w = 1
  // ms: 132 - 32 CTAs run 0..1 ms, the other 32 start when the first finish (1 ms, before the
  // collective's 3 ms) and end at 2 ms: min(3, 0 + 1) + 1 = 2, 1 ms lost (twice its time).
  const GpuSpec h = gpu_of("dgx-h100");
  const OverlapCollective a3{3e-3, 360e9};
  EXPECT_NEAR(compute_lost_beside_s(h, {{1e-3, true, 0}}, {a3}), 1e-3, 1e-12);
  // Two such GEMMs: the second starts at 2 ms with the collective still running until 3: its late
  // CTAs start at 3, it ends at 3 + 1 = 4 ms: 2 ms lost of the collective's 3 (2/3 of it).
  EXPECT_NEAR(compute_lost_beside_s(h, {{1e-3, true, 0}, {1e-3, true, 0}}, {a3}), 2e-3, 1e-12);
  // A GEMM longer than the collective loses the collective's whole time: w = 2, a = 0.5: the late
  // CTAs start at 0.5 and end at 2.5; 0.5 ms lost.
  EXPECT_NEAR(compute_lost_beside_s(h, {{2e-3, true, 0}}, {{0.5e-3, 360e9}}), 0.5e-3, 1e-12);
  // No collective, nothing lost.
  EXPECT_NEAR(compute_lost_beside_s(h, {{2e-3, true, 0}}, {}), 0, 1e-15);
}

TEST(WorkOverlap, CollectiveWaitsForTheFirstWaveOfAPersistentGemm) {
  // Collectives of 0.5 and 1 ms beside two persistent GEMMs of 2 ms. GEMM 1: the first collective
  // ends at 0.5, its late CTAs run 0.5..2.5; the second collective finds every SM held until the
  // first CTAs finish at 2 and runs 2..3. GEMM 2 starts at 2.5 beside it: late CTAs from 3, end
  // 5. Lost: 0.5 + 0.5 = 1 ms (had the second collective started at 0.5, inside GEMM 1, only the
  // first 0.5 would be lost).
  const GpuSpec h = gpu_of("dgx-h100");
  EXPECT_NEAR(compute_lost_beside_s(h, {{2e-3, true, 0}, {2e-3, true, 0}},
                                    {{0.5e-3, 360e9}, {1e-3, 360e9}}),
              1e-3, 1e-12);
}

TEST(WorkOverlap, ACollectiveLongerThanALayerLosesBesideEachLayerItSpans) {
  // H100, a layer of one persistent GEMM of 1 ms beside a gradient bucket of 3 ms. The bucket spans
  // three layers: GEMM 1 runs 0..2 (late CTAs from 1), GEMM 2 starts at 2 and its late CTAs wait
  // for the bucket's end at 3: it ends at 4; GEMM 3 runs alone 4..5. Lost 1 + 1 = 2 ms of the
  // bucket's 3: 2/3 of it, where the first layer's loss alone over the bucket gives 1/3.
  const GpuSpec h = gpu_of("dgx-h100");
  const std::vector<OverlapKernel> layer{{1e-3, true, 0}};
  EXPECT_NEAR(share_lost_beside(h, layer, {3e-3, 360e9}), 2.0 / 3, 1e-9);
  EXPECT_NEAR(compute_lost_beside_s(h, layer, {{3e-3, 360e9}}) / 3e-3, 1.0 / 3, 1e-9);
  // A bucket shorter than the layer: lost / a as before (0.5 ms lost of 0.5: the GEMM of 2 ms
  // loses the bucket's whole time).
  EXPECT_NEAR(share_lost_beside(h, {{2e-3, true, 0}}, {0.5e-3, 360e9}), 1.0, 1e-9);
  // A bucket of 1 s beside 1 ms layers: 64 layers beside it, each GEMM twice its time (ending at
  // 128 ms, the bucket still running): the steady share, 64 / 128 = 0.5.
  EXPECT_NEAR(share_lost_beside(h, layer, {1.0, 360e9}), 0.5, 1e-9);
  // Nothing beside it, or no collective: nothing lost.
  EXPECT_DOUBLE_EQ(share_lost_beside(h, {}, {1e-3, 360e9}), 0);
  EXPECT_DOUBLE_EQ(share_lost_beside(h, layer, {0, 360e9}), 0);
}

TEST(WorkOverlap, OneCtaPerTileKernelsLoseTheirShare) {
  // A100 (108 SMs): a 235 GB/s collective holds 24 channels, σ = 24/108 for compute-bound work.
  // A 10 ms kernel beside a 1 ms collective progresses 1 - σ in the first ms: it ends at 1 + (10 -
  // (1 - σ)) = 10 + σ: σ·a = 0.222 ms lost, the closed form of comm_kernel_slowdown.
  const GpuSpec a = gpu_of("dgx-a100");
  const double sigma = comm_kernel_slowdown(a, 235e9, 0);
  EXPECT_NEAR(sigma, 24.0 / 108, 1e-12);
  EXPECT_NEAR(compute_lost_beside_s(a, {{10e-3, false, 0}}, {{1e-3, 235e9}}), sigma * 1e-3, 1e-12);
}

TEST(WorkOverlap, LayerKernelsInIssueOrder) {
  // A layer of GEMMs 1, 2, 3, 4 (qkv, proj, up, down) and 10 / 5 of other work per block.
  LayerCompute lc;
  lc.gemm_qkv = 1, lc.gemm_proj = 2, lc.gemm_up = 3, lc.gemm_down = 4;
  lc.attn_f = 1 + 2 + 10, lc.mlp_f = 3 + 4 + 5, lc.mem_f = 7.5;
  lc.attn_b = 2 * 3 + 20 + lc.attn_f, lc.mlp_b = 2 * 7 + 10 + lc.mlp_f;  // full recompute
  lc.mem_b = 15 + lc.mem_f;
  const GpuSpec h = gpu_of("dgx-h100");
  Job job;
  job.recompute = Recompute::kFull;
  auto f = layer_kernels(lc, h, job, false);
  ASSERT_EQ(f.size(), 6u);
  EXPECT_TRUE(f[0].persistent);
  EXPECT_DOUBLE_EQ(f[1].seconds, 10);
  EXPECT_DOUBLE_EQ(f[1].mem_fraction, 7.5 / 15);  // memory-bound share of the non-GEMM work
  auto b = layer_kernels(lc, h, job, true);       // the recomputed forward, then each GEMM twice
  ASSERT_EQ(b.size(), 6u + 10u);
  double sum = 0;
  for (const auto& k : b) sum += k.seconds;
  EXPECT_DOUBLE_EQ(sum, lc.backward());
  EXPECT_DOUBLE_EQ(b[6].seconds, 4);   // down: input gradient
  EXPECT_DOUBLE_EQ(b[8].seconds, 10);  // the MLP's other work
  EXPECT_DOUBLE_EQ(b[8].mem_fraction, 0.5);
  EXPECT_FALSE(layer_kernels(lc, gpu_of("dgx-a100"), job, false)[0].persistent);
}

}  // namespace
}  // namespace linkwise::work
