#include "linkwise/work/step.h"

#include <gtest/gtest.h>

#include <map>

#include "linkwise/comm/predict.h"
#include "linkwise/comm/transport.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/topo/spec.h"
#include "linkwise/util/error.h"
#include "linkwise/work/checkpoint.h"
#include "linkwise/work/search.h"
#include "linkwise/work/validation.h"
#include "topo/testing/four_under_switch.h"
#include "work/step_impl.h"

namespace linkwise::work {
namespace {

constexpr double kTol = 1e-9;

TEST(WorkStep, BubbleFractionOf1F1B) {
  // p = 4 stages, m = 12 micro-batches, t_f = 1, t_b = 2, no transfers: bubble = 3·3 = 9 s, total =
  // 36 + 9; bubble / total = (p-1)/(m+p-1) = 3/15 = 0.2.
  auto r = pipeline_1f1b(4, 12, 1, 1.0, 2.0, 0.0);
  EXPECT_NEAR(r.bubble_s, 9.0, kTol);
  EXPECT_NEAR(r.bubble_s / r.total_s, 3.0 / 15.0, kTol);
  // Interleaving with v = 2 halves the bubble: 4.5 s.
  EXPECT_NEAR(pipeline_1f1b(4, 12, 2, 1.0, 2.0, 0.0).bubble_s, 4.5, kTol);
}

TEST(WorkStep, BubbleFractionOfAPlan) {
  // The same fraction holds for a whole step: the pipeline's work is m·(t_f + t_b) = compute (less
  // the optimizer) plus the per-layer collectives, and the bubble is (p-1)·(t_f + t_b).
  auto c = topo::load_chassis("dgx-h100");
  Job j;
  j.global_batch = 16, j.seq = 4096;
  StepModel sm(c, find_model("llama2-7b"), j);
  auto r = sm.estimate(parse_plan("pp=4,dp=2"));  // m = 16 / 2 = 8
  const auto& b = r.breakdown;
  double work = b.compute_s - b.optimizer_s + b.tp_s + b.ep_s + b.zero_s;
  EXPECT_EQ(r.micro_batches, 8);
  EXPECT_NEAR(b.bubble_s / (b.bubble_s + work), 3.0 / (8 + 3), 1e-6);
}

TEST(WorkStep, RecomputingOneBlockInNIsTheMeanBlock) {
  // Llama 2 13B, 64 A100 (8 dgx-a100 boxes), FSDP, micro-batch 2 at 4096. A step's compute is the
  // sum of its blocks' (compose): with one block in N recomputed in full and the others not, each
  // block's compute is the unrecomputed block's plus 1/N of a recomputed forward, so the step's
  // compute is (1/N)·full + (1 - 1/N)·none exactly; for N = 2 the mean of the two (1e-9). The
  // step time, exposed traffic included, lies between them.
  auto c = topo::load_chassis("dgx-a100", 8);
  Job j;
  j.seq = 4096, j.global_batch = 128, j.framework = Framework::kFsdp;
  StepModel sm(c, find_model("llama2-13b"), j);
  const Plan p = parse_plan("dp=64,zero=3,mb=2");
  auto at = [&](Recompute rc, int every) {
    Job k = j;
    k.recompute = rc, k.recompute_every = every;
    return sm.simulate(p, k);
  };
  const auto full = at(Recompute::kFull, 1), none = at(Recompute::kNone, 1);
  for (int n : {2, 4}) {
    const auto mixed = at(Recompute::kFull, n);
    const double w = 1.0 / n;
    const double want = w * full.breakdown.compute_s + (1 - w) * none.breakdown.compute_s;
    EXPECT_NEAR(mixed.breakdown.compute_s, want, want * 1e-9) << n;
    EXPECT_GT(mixed.step_time_s, none.step_time_s) << n;
    EXPECT_LT(mixed.step_time_s, full.step_time_s) << n;
  }
}

TEST(WorkStep, PerOpCheckpointingRecomputesTheEvenGemmsAndTheElementWiseWork) {
  // Llama 2 13B (40 heads, 40 KV heads, gated MLP) under --framework fsdp on an A100, seq 4096,
  // micro-batch 2. torchtitan's per-op policy runs again, in each block's backward, its
  // element-wise work and its even GEMMs (K, O, up: the 2nd, 4th and 6th aten.mm of Q, K, V, O,
  // gate, up, down), never the attention kernel: backward(op) - backward(none) = (attn_f - core_f
  // - QKV - proj) + (mlp_f - up - down) + QKV·40/120 + proj + up/2 (the fused gate-and-up GEMM's
  // half), less than full recomputation's whole forward. With TP (sequence parallel) the recomputed
  // GEMMs gather their inputs again: the backward has two more all-gathers a block (before QKV and
  // before up); the reduce-scatters' outputs are saved.
  auto c = topo::load_chassis("dgx-a100");
  Job j;
  j.seq = 4096, j.framework = Framework::kFsdp;
  const auto m = find_model("llama2-13b");
  const GpuSpec g = gpu_spec(c.node(c.gpus().front()), Precision::kBf16);
  const Plan p = parse_plan("dp=8,zero=3,mb=2");
  auto lc = [&](Recompute rc, const Plan& plan) {
    Job k = j;
    k.recompute = rc;
    return layer_compute(m, k, plan, g);
  };
  const auto none = lc(Recompute::kNone, p), op = lc(Recompute::kOp, p),
             full = lc(Recompute::kFull, p);
  // (The framework's copies around its weight gathers, framework_copy_s, are not part of the
  // block's forward that runs again: they sit in attn_f and are left out.)
  const double copies = framework_copy_s(m, j, p, g.memory_bytes_per_s).first +
                        attention_unpad_s(m, j, p, g.memory_bytes_per_s).first;
  const double want = (none.attn_f - copies - none.core_f - none.gemm_qkv - none.gemm_proj) +
                      (none.mlp_f - none.gemm_up - none.gemm_down) + none.gemm_qkv / 3 +
                      none.gemm_proj + none.gemm_up / 2;
  EXPECT_NEAR(op.backward() - none.backward(), want, want * 1e-9);
  EXPECT_LT(op.backward(), full.backward());
  EXPECT_DOUBLE_EQ(op.forward(), none.forward());
  const Plan tp = parse_plan("tp=2,dp=4,zero=3,mb=2");
  auto gathers = [&](Recompute rc) {
    Job k = j;
    k.recompute = rc;
    StepModel sm(c, m, k);
    auto t = step_traffic(m, k, tp, shape_of(m, k, tp), layer_compute(m, k, tp, g));
    int n = 0;
    for (const auto& it : t.backward)
      if (!it.is_compute() && it.coll.op == comm::Op::kAllGather) ++n;
    return n;
  };
  EXPECT_EQ(gathers(Recompute::kOp), gathers(Recompute::kNone) + 2);
}

TEST(WorkStep, Fp8GatherHalvesTheBlocksWeightGathers) {
  // Llama 3 8B under fsdp, fp8, dp=8 ZeRO-3 on an HGX H200: a block's gather moves its
  // 218,112,000 parameters (4·4096² less 2·4096·3072 for the 8 KV heads, plus 3·4096·14336, plus
  // two norms of 4096) at 2 bytes, 436,224,000; with FSDP's float8 all-gathers at 1 byte,
  // 218,112,000. The root unit's gather (embedding, output layer, final norm) stays 16-bit.
  auto c = topo::load_chassis("hgx-h200");
  Job j;
  j.seq = 4096, j.global_batch = 8, j.framework = Framework::kFsdp, j.precision = Precision::kFp8;
  const auto m = find_model("llama3-8b");
  const Plan p = parse_plan("dp=8,zero=3,mb=1");
  auto gathers = [&](bool fp8) {
    Job k = j;
    k.fp8_gather = fp8;
    StepModel sm(c, m, k);
    auto t = step_traffic(m, k, p, shape_of(m, k, p), layer_compute(m, k, p, sm.gpu()));
    std::vector<double> bytes;
    for (const auto& it : t.beside_f)
      if (it.op == comm::Op::kAllGather) bytes.push_back(it.bytes);
    double root = 0;
    for (const auto& it : t.fill_f)
      if (it.op == comm::Op::kAllGather) root = std::max(root, it.bytes);
    return std::pair{bytes, root};
  };
  const auto [bf16, root16] = gathers(false);
  const auto [fp8, root8] = gathers(true);
  ASSERT_EQ(bf16.size(), 1u);
  ASSERT_EQ(fp8.size(), 1u);
  EXPECT_DOUBLE_EQ(bf16[0], 436224000.0);
  EXPECT_DOUBLE_EQ(fp8[0], 218112000.0);
  EXPECT_DOUBLE_EQ(root8, root16);
}

TEST(WorkStep, NcclKernelsSlowTheComputeBesideThem) {
  // A100: 108 SMs, 2,039 GB/s. A ring at 235 GB/s bus bandwidth runs on ceil(235 / 10) = 24
  // channels (HGX A100's 24, nccl-tests issue #100): compute-bound work loses 24/108 = 0.222;
  // memory-bound work loses 2·235/2039 = 0.2305 of the HBM. Channels are clamped to [2, 32].
  auto c = topo::load_chassis("dgx-a100");
  GpuSpec g = gpu_spec(c.node(c.gpus().front()), Precision::kBf16);
  EXPECT_EQ(nccl_channels(235e9), 24);
  EXPECT_EQ(nccl_channels(12e9), 2);
  EXPECT_EQ(nccl_channels(1e12), 32);
  EXPECT_NEAR(comm_kernel_slowdown(g, 235e9, 0), 24.0 / 108, 1e-9);
  EXPECT_NEAR(comm_kernel_slowdown(g, 235e9, 1), 2 * 235e9 / g.memory_bytes_per_s, 1e-9);
  // Llama 2 7B, dp = 8, ZeRO-3 (fsdp: one unit per layer, fp32 gradients) on one dgx-a100 box, seq
  // 4096, global batch 1024 (128 micro-batches of 1): a layer's weights are 4·4096² + 3·4096·11008
  // + 2·4096 = 202.4M (404.8 MB bf16); a ring all-gather moves 7/8 of it, 354.2 MB, at 235 GB/s: a
  // = 1.507 ms, and takes σ·a = 0.222 · 1.507 = 0.335 ms from the compute beside it (memory-bound
  // kernels lose about the same share). The fp32 gradient reduce-scatter moves twice that: 0.670
  // ms. Per layer and micro-batch 0.335 (forward gather) + 0.335 (backward gather) + 0.670
  // (scatter) = 1.340 ms; 32 layers, 128 micro-batches: 5.49 s.
  Job j;
  j.seq = 4096, j.global_batch = 1024, j.framework = Framework::kFsdp;
  StepModel sm(c, find_model("llama2-7b"), j);
  for (auto r : {sm.estimate(parse_plan("dp=8,zero=3")), sm.simulate(parse_plan("dp=8,zero=3"))}) {
    const auto& b = r.breakdown;
    EXPECT_NEAR(b.contention_s, 5.49, 0.2);
    EXPECT_NEAR(r.step_time_s,
                b.compute_s + b.exposed_comm_s + b.contention_s + b.bubble_s + b.io_s, 1e-9);
  }
}

TEST(WorkStep, HopperGemmsRunInTwoWavesBesideTheGathers) {
  // Llama 2 7B, fsdp, dp=8 ZeRO-3 on one dgx-h100 box, seq 4096, micro-batch 1. The layer's QKV
  // GEMM, 4096 x 12288 x 4096, is 16·96 = 1536 tiles of 256 x 128: 12 waves of 132 SMs, q = 1536 /
  // (12·132) = 0.970, at η = 0.85·1455/1830 = 0.676 of 989 TFLOP/s: 2·4096·12288·4096 / (989e12 ·
  // 0.676 · 0.970) + 3 us = 0.639 ms. The forward's weight gather (404.8 MB over NVLink) takes
  // longer than that and less than twice it, so it ends inside the GEMM's second wave: the GEMM
  // ends at min(a, w) + w = 2w, and the forward loses w_qkv whole (overlap.h), where σ·a (32 of
  // 132 SMs) would charge a quarter of the gather.
  auto c = topo::load_chassis("dgx-h100");
  Job j;
  j.seq = 4096, j.global_batch = 64, j.framework = Framework::kFsdp;
  StepModel sm(c, find_model("llama2-7b"), j);
  Plan p = parse_plan("dp=8,zero=3,mb=1");
  Shape sh = shape_of(sm.model(), sm.job(), p);
  Periods r = estimate_periods(*sm.impl(), sm.model(), sm.job(), p, sm.gpu(), sh);
  EXPECT_NEAR(r.lc.gemm_qkv, 0.639e-3, 0.005e-3);
  auto [a, bw] = sm.impl()->timed(first_group(place(p, c), GroupKind::kDp), comm::Op::kAllGather,
                                  2 * 202383360.0);
  EXPECT_GT(a, r.lc.gemm_qkv);
  EXPECT_LT(a, 2 * r.lc.gemm_qkv);
  EXPECT_NEAR(r.slow_f, r.lc.gemm_qkv, 1e-12);
  EXPECT_GT(r.slow_f, 2 * comm_kernel_slowdown(sm.gpu(), bw, 0) * a);
}

TEST(WorkStep, ChassisNcclSettingsReachTheStepsCollectives) {
  // Four A100 PCIe cards behind one PCIe switch; the same box with NCCL_P2P_DISABLE=1 in its file's
  // `nccl:` list stages every hop through host memory (up the switch's one x16 uplink and back), as
  // `linkwise collective` predicts for it. Llama 3 8B LoRA, tp=4 (sequence parallel: an all-gather
  // and a reduce-scatter of the layer's activations, forward and backward): the step's exposed TP
  // time is the time of those collectives, so it grows with the file's setting, and each of them
  // is what the communicator with the file's options predicts.
  const char* box = topo::testing::kFourUnderSwitch;
  auto on = topo::build_chassis(topo::parse_chassis_spec(box, "box.yaml"));
  auto off = topo::build_chassis(
      topo::parse_chassis_spec(std::string(box) + "nccl:\n  NCCL_P2P_DISABLE: 1\n", "box.yaml"));
  Job j;
  j.mode = Mode::kLora, j.seq = 2048, j.global_batch = 4;
  Plan p = parse_plan("tp=4,mb=1");
  StepModel a(on, find_model("llama3-8b"), j), b(off, find_model("llama3-8b"), j);
  const double tp_on = a.estimate(p).breakdown.tp_s, tp_off = b.estimate(p).breakdown.tp_s;
  ASSERT_GT(tp_on, 0);
  EXPECT_GT(tp_off, 1.5 * tp_on);  // 4 host-staged hops share one uplink both ways
  // One of the layer's all-gathers (2 · 2048 · 4096 bytes of bf16 activations), as the step
  // times it and as the file's communicator predicts it.
  const double bytes = 2.0 * 2048 * 4096;
  comm::Communicator staged(off, off.gpus(), comm::nccl_options(off));
  EXPECT_NEAR(b.impl()->timed(off.gpus(), comm::Op::kAllGather, bytes).first,
              staged.predict(comm::Op::kAllGather, bytes).time_s, 1e-12);
}

TEST(WorkStep, Zero3TrafficAndItsExposedPartByHand) {
  // Llama 2 7B, --framework fsdp (one unit per layer, fp32 gradient reduce-scatter), dp=8 ZeRO-3 on
  // the PCIe server, seq 1024, global batch 16: m = 16 / 8 = 2 micro-batches of 1. A layer holds
  // 4·4096² + 3·4096·11008 + 2·4096 = 202,383,360 parameters. Per layer and micro-batch the DP
  // group all-gathers the bf16 weights before the forward and again before the backward
  // (404,766,720 bytes each, nccl-tests S) and reduce-scatters the fp32 gradients (809,533,440):
  // 1,619,066,880 bytes; x 32 layers x 2 = 103.6 GB of collectives per step.
  auto c = topo::load_chassis("pcie-8gpu-gen4");
  Job j;
  j.mode = Mode::kFullFinetune, j.seq = 1024, j.global_batch = 16, j.framework = Framework::kFsdp;
  StepModel sm(c, find_model("llama2-7b"), j);
  Plan p = parse_plan("dp=8,zero=3,mb=1");
  auto lc = layer_compute(sm.model(), sm.job(), p, sm.gpu());
  Shape sh = shape_of(sm.model(), sm.job(), p);
  StepTraffic t = step_traffic(sm.model(), sm.job(), p, sh, lc);
  const double layer = 202383360.0;
  ASSERT_EQ(t.beside_f.size(), 1u);
  ASSERT_EQ(t.beside_b.size(), 2u);
  EXPECT_DOUBLE_EQ(t.beside_f[0].bytes, 2 * layer);
  EXPECT_DOUBLE_EQ(t.beside_b[0].bytes, 2 * layer);
  EXPECT_DOUBLE_EQ(t.beside_b[1].bytes, 4 * layer);
  double per_step = 0;
  for (const auto* v : {&t.beside_f, &t.beside_b})
    for (const Coll& x : *v) per_step += x.bytes * 32 * 2;
  EXPECT_NEAR(per_step, 103.62e9, 0.01e9);
  // Exposed: the gathers run beside the layer's compute and show where they outlast it: forward
  // max(0, ag - f), backward max(0, ag + rs - b), times 32 layers and 2 micro-batches (comm's times
  // for the 8-GPU group alone; over this box's PCIe switches and socket link they outlast a
  // 1024-token layer).
  // Every micro-batch also starts with two gathers nothing hides, the parameters outside the
  // layers (untied embedding and output layer, final norm: 2·32,000·4096 + 4096 = 262,148,096) and
  // the first layer, and ends with two scatters nothing hides, the first layer's and the outside
  // parameters' fp32 gradients: + 2·(ag_out + ag + rs + rs_out).
  const double outside = 262148096.0;
  ASSERT_EQ(t.fill_f.size(), 2u);
  ASSERT_EQ(t.fill_b.size(), 2u);
  EXPECT_DOUBLE_EQ(t.fill_f[0].bytes, 2 * outside);
  EXPECT_DOUBLE_EQ(t.fill_b[1].bytes, 4 * outside);
  double ag = comm::predict(c, comm::Op::kAllGather, c.gpus(), 2 * layer).time_s;
  double rs = comm::predict(c, comm::Op::kReduceScatter, c.gpus(), 4 * layer).time_s;
  double fill = comm::predict(c, comm::Op::kAllGather, c.gpus(), 2 * outside).time_s + ag + rs +
                comm::predict(c, comm::Op::kReduceScatter, c.gpus(), 4 * outside).time_s;
  double exposed =
      2 * 32 * (std::max(0.0, ag - lc.forward()) + std::max(0.0, ag + rs - lc.backward())) +
      2 * fill;
  ASSERT_GT(ag, lc.forward());
  auto r = sm.estimate(p);
  EXPECT_NEAR(r.breakdown.zero_s, exposed, 1e-9 * r.step_time_s);
  // With gradient overlap off the scatter waits for the backward: + 2·32·rs, less what the backward
  // hid.
  Job off = sm.job();
  off.grad_overlap = Switch::kOff;
  double exposed_off =
      2 * 32 * (std::max(0.0, ag - lc.forward()) + std::max(0.0, ag - lc.backward()) + rs) +
      2 * fill;
  EXPECT_NEAR(sm.estimate(p, off).breakdown.zero_s, exposed_off, 1e-9 * r.step_time_s);
}

TEST(WorkStep, LoraUnderZero3GathersFrozenWeightsAndScattersOnlyAdapters) {
  // Llama 2 7B, LoRA rank 16 on q,k,v,o (the default targets), --framework fsdp, dp=8 ZeRO-3 on the
  // PCIe server, seq 1024, global batch 16: 2 micro-batches of 1. The frozen layer (202,383,360
  // parameters, as in Zero3TrafficAndItsExposedPartByHand) is still gathered before the forward
  // and again before the backward (404,766,720 bytes each), but only the adapters have gradients:
  // 4·16·(4096 + 4096) = 524,288 per layer, reduce-scattered in fp32 (2,097,152 bytes) beside the
  // backward. Per micro-batch the last scatter left with nothing beside it is the first layer's
  // adapters; the embedding and output layer are frozen, so nothing outside the layers is reduced.
  auto c = topo::load_chassis("pcie-8gpu-gen4");
  Job j;
  j.mode = Mode::kLora, j.seq = 1024, j.global_batch = 16, j.framework = Framework::kFsdp;
  StepModel sm(c, find_model("llama2-7b"), j);
  Plan p = parse_plan("dp=8,zero=3,mb=1");
  auto lc = layer_compute(sm.model(), sm.job(), p, sm.gpu());
  Shape sh = shape_of(sm.model(), sm.job(), p);
  StepTraffic t = step_traffic(sm.model(), sm.job(), p, sh, lc);
  const double layer = 202383360.0, adapters = 524288.0;
  ASSERT_EQ(t.beside_f.size(), 1u);
  ASSERT_EQ(t.beside_b.size(), 2u);
  EXPECT_DOUBLE_EQ(t.beside_f[0].bytes, 2 * layer);
  EXPECT_DOUBLE_EQ(t.beside_b[0].bytes, 2 * layer);
  EXPECT_EQ(t.beside_b[1].op, comm::Op::kReduceScatter);
  EXPECT_DOUBLE_EQ(t.beside_b[1].bytes, 4 * adapters);
  ASSERT_EQ(t.fill_b.size(), 1u);
  EXPECT_DOUBLE_EQ(t.fill_b[0].bytes, 4 * adapters);
  // FSDP2 copies the bf16 adapter gradients into the fp32 reduce-scatter input (6 bytes of HBM per
  // element), and copies every gathered byte out (2 per byte, forward and backward):
  // backward = (2·2·layer + 6·adapters) / HBM bandwidth.
  const double hbm = 1e12;
  auto [copy_f, copy_b] = framework_copy_s(sm.model(), sm.job(), p, hbm);
  EXPECT_DOUBLE_EQ(copy_f, 2 * 2 * layer / hbm);
  EXPECT_NEAR(copy_b, (2 * 2 * layer + 6 * adapters) / hbm, 1e-12);
}

// The reduce-scatters of a step's per-layer lists: count and bytes.
std::pair<int, double> scatters(const std::vector<Coll>& cs) {
  int n = 0;
  double bytes = 0;
  for (const Coll& c : cs)
    if (c.op == comm::Op::kReduceScatter) n += 1, bytes += c.bytes;
  return {n, bytes};
}

TEST(WorkStep, GradSyncLastReducesOnceAStep) {
  // Llama 2 7B, --framework fsdp, dp=8 ZeRO-3 on a DGX H100, global batch 32 of 4096: 4
  // micro-batches of 1. By default every micro-batch reduce-scatters each layer's gradients
  // (202,383,360 parameters, fp32: 809,533,440 bytes) beside its backward. --grad-sync last: no
  // reduce-scatter in a micro-batch's lists; the last one's are the step's 32 gradient buckets
  // beside its backward, each a layer's plus a 32nd of the root unit's (embedding, output layer
  // and final norm, 2 x 32000 x 4096 + 4096 = 262,148,096 parameters): 4 x (202,383,360 +
  // 8,192,128) bytes.
  auto c = topo::load_chassis("dgx-h100");
  Job j;
  j.seq = 4096, j.global_batch = 32, j.framework = Framework::kFsdp;
  Plan p = parse_plan("dp=8,zero=3,mb=1");
  auto traffic = [&] {
    StepModel sm(c, find_model("llama2-7b"), j);
    auto lc = layer_compute(sm.model(), sm.job(), p, sm.gpu());
    return step_traffic(sm.model(), sm.job(), p, shape_of(sm.model(), sm.job(), p), lc);
  };
  StepTraffic every = traffic();
  EXPECT_EQ(every.buckets, 0);
  EXPECT_EQ(scatters(every.beside_b).first, 1);
  EXPECT_DOUBLE_EQ(scatters(every.beside_b).second, 4 * 202383360.0);
  j.grad_sync_last = Switch::kOn;
  StepTraffic last = traffic();
  EXPECT_EQ(scatters(last.beside_b).first, 0);
  EXPECT_EQ(scatters(last.fill_b).first, 0);
  EXPECT_EQ(last.buckets, 32);
  EXPECT_EQ(last.bucket.op, comm::Op::kReduceScatter);
  EXPECT_DOUBLE_EQ(last.bucket.bytes, 4 * (202383360.0 + 262148096.0 / 32));
  EXPECT_TRUE(last.bucket_overlap);
  // One micro-batch a step: every micro-batch is the last; nothing changes.
  j.global_batch = 8;
  EXPECT_EQ(traffic().buckets, 0);
}

TEST(WorkStep, TpCollectivesPerProjection) {
  // Llama 2 7B (separate q, k, v; gated MLP: gate and up), tp=4 with sequence parallelism on a DGX
  // H100, no recomputation. Per block (the default): forward one all-gather before QKV and one
  // before the MLP, one reduce-scatter after the output projection and one after down: 2 + 2;
  // backward the same, mirrored. --tp-collectives per-projection: the forward gathers once per
  // projection, 3 (q, k, v) + 2 (gate, up) = 5 all-gathers, still 2 reduce-scatters; the backward
  // reduce-scatters one input gradient per projection, 5, and gathers 2. Each moves the
  // micro-batch's hidden states, 2 x 4096 x 4096 bytes.
  auto c = topo::load_chassis("dgx-h100");
  Job j;
  j.seq = 4096, j.global_batch = 8, j.recompute = Recompute::kNone;
  j.framework = Framework::kFsdp;
  Plan p = parse_plan("tp=4,dp=2,mb=1");
  auto count = [&](const std::vector<PathItem>& items, comm::Op op) {
    int n = 0;
    for (const PathItem& it : items)
      if (!it.is_compute() && it.coll.op == op) {
        EXPECT_DOUBLE_EQ(it.coll.bytes, 2.0 * 4096 * 4096);
        ++n;
      }
    return n;
  };
  auto traffic = [&] {
    StepModel sm(c, find_model("llama2-7b"), j);
    auto lc = layer_compute(sm.model(), sm.job(), p, sm.gpu());
    return step_traffic(sm.model(), sm.job(), p, shape_of(sm.model(), sm.job(), p), lc);
  };
  StepTraffic block = traffic();
  EXPECT_EQ(count(block.forward, comm::Op::kAllGather), 2);
  EXPECT_EQ(count(block.forward, comm::Op::kReduceScatter), 2);
  EXPECT_EQ(count(block.backward, comm::Op::kAllGather), 2);
  EXPECT_EQ(count(block.backward, comm::Op::kReduceScatter), 2);
  j.tp_per_projection = Switch::kOn;
  StepTraffic proj = traffic();
  EXPECT_EQ(count(proj.forward, comm::Op::kAllGather), 5);
  EXPECT_EQ(count(proj.forward, comm::Op::kReduceScatter), 2);
  EXPECT_EQ(count(proj.backward, comm::Op::kAllGather), 2);
  EXPECT_EQ(count(proj.backward, comm::Op::kReduceScatter), 5);
}

TEST(WorkStep, LoraUnderFsdp1ReduceScattersEachAdapterUnit) {
  // As LoraUnderZero3GathersFrozenWeightsAndScattersOnlyAdapters (Llama 2 7B, rank 16 on q,k,v,o,
  // dp=8 ZeRO-3 on the PCIe server), but --framework fsdp1. llm-foundry wraps every adapter matrix
  // as an FSDP unit of its own, so per layer: the frozen block unit (202,383,360 parameters) is
  // gathered forward and backward and has no gradient; each of the 8 adapter matrices (A 16·4096,
  // B 16·4096 for q, o and, with 32 KV heads of 128, k and v: 65,536 elements each) is gathered
  // forward and backward (131,072 bytes) and reduce-scattered alone in fp32 (262,144 bytes).
  // The scattered bytes per layer equal FSDP2's one collective of the layer's adapters
  // (4·524,288 = 2,097,152), in 8 collectives instead of 1; a flat parameter mixing the frozen
  // weights and the adapters would instead scatter 4·(202,383,360 + 524,288) = 811,630,592.
  auto c = topo::load_chassis("pcie-8gpu-gen4");
  Job j;
  j.mode = Mode::kLora, j.seq = 1024, j.global_batch = 16;
  Plan p = parse_plan("dp=8,zero=3,mb=1");
  const double layer = 202383360.0, adapters = 524288.0, matrix = 65536.0;
  auto traffic = [&](Framework f) {
    j.framework = f;
    StepModel sm(c, find_model("llama2-7b"), j);
    auto lc = layer_compute(sm.model(), sm.job(), p, sm.gpu());
    return step_traffic(sm.model(), sm.job(), p, shape_of(sm.model(), sm.job(), p), lc);
  };
  StepTraffic f2 = traffic(Framework::kFsdp), f1 = traffic(Framework::kFsdp1);
  EXPECT_EQ(scatters(f2.beside_b), std::make_pair(1, 4 * adapters));
  EXPECT_EQ(scatters(f1.beside_b), std::make_pair(8, 4 * adapters));
  ASSERT_EQ(f1.beside_f.size(), 9u);  // the block, then the 8 adapter units
  EXPECT_DOUBLE_EQ(f1.beside_f[0].bytes, 2 * layer);
  for (int i = 1; i < 9; ++i) EXPECT_DOUBLE_EQ(f1.beside_f[i].bytes, 2 * matrix);
  EXPECT_EQ(f1.beside_b.size(), 9u + 8u);  // the same gathers again, and the 8 scatters
  for (const Coll& s : f1.beside_b)
    if (s.op == comm::Op::kReduceScatter) EXPECT_DOUBLE_EQ(s.bytes, 4 * matrix);
  // Left over per micro-batch: the first layer's first adapter unit's scatter, nothing outside.
  EXPECT_EQ(scatters(f1.fill_b), std::make_pair(1, 4 * matrix));
  // FSDP1's copies around a scatter (cast and pre-divide: 18 bytes per element from 4 ranks up)
  // apply to the adapters' elements only: backward copy = 18·524,288 / HBM bandwidth.
  const double hbm = 1e12;
  j.framework = Framework::kFsdp1;
  auto [copy_f, copy_b] = framework_copy_s(find_model("llama2-7b"), j, p, hbm);
  EXPECT_DOUBLE_EQ(copy_f, 0);
  EXPECT_NEAR(copy_b, 18 * adapters / hbm, 1e-15);
}

TEST(WorkStep, LoraUnderShardGradOpReducesAdaptersEveryMicroBatch) {
  // The same job under zero=2 (FSDP SHARD_GRAD_OP): the frozen layer is gathered before every
  // micro-batch's forward (2·202,383,360 bytes) and not again for the backward; the adapters'
  // gradients are reduce-scattered every micro-batch beside the backward, 4·524,288 bytes per layer
  // with fsdp, in 8 unit collectives of 4·65,536 with fsdp1; nothing is gathered after the
  // optimizer (the next forward gathers anyway).
  auto c = topo::load_chassis("pcie-8gpu-gen4");
  Job j;
  j.mode = Mode::kLora, j.seq = 1024, j.global_batch = 16;
  Plan p = parse_plan("dp=8,zero=2,mb=1");
  const double layer = 202383360.0, adapters = 524288.0;
  for (Framework f : {Framework::kFsdp, Framework::kFsdp1}) {
    j.framework = f;
    StepModel sm(c, find_model("llama2-7b"), j);
    auto lc = layer_compute(sm.model(), sm.job(), p, sm.gpu());
    StepTraffic t = step_traffic(sm.model(), sm.job(), p, shape_of(sm.model(), sm.job(), p), lc);
    const bool units = f == Framework::kFsdp1;
    ASSERT_EQ(t.beside_f.size(), units ? 9u : 1u);
    EXPECT_DOUBLE_EQ(t.beside_f[0].bytes, 2 * layer);
    EXPECT_EQ(t.beside_b.size(), units ? 8u : 1u);  // scatters only
    EXPECT_EQ(scatters(t.beside_b), std::make_pair(units ? 8 : 1, 4 * adapters));
    EXPECT_TRUE(t.fill_b.empty());
    EXPECT_DOUBLE_EQ(t.param_gather.bytes, 0);
  }
}

TEST(WorkStep, LoraUnderDeepSpeedScattersPerParameterOrOncePerMicroBatch) {
  // Llama 2 7B LoRA rank 16 on q,k,v,o, dp=8 on the PCIe server. deepspeed-0.3 ZeRO-3 reduces one
  // parameter at a time: per layer the 8 adapter matrices (65,536 elements each, 2 bytes on the
  // wire: 131,072 bytes) after the backward, each with the host time of any of its collectives.
  // Bucketed deepspeed fills its 5e8-element reduce bucket across layers: the 32 layers' 524,288
  // adapter elements (16,777,216) fit in one bucket, reduce-scattered once per micro-batch after
  // the backward (2·16,777,216 bytes), nothing per layer; zero=2 the same.
  auto c = topo::load_chassis("pcie-8gpu-gen4");
  Job j;
  j.mode = Mode::kLora, j.seq = 1024, j.global_batch = 16;
  auto traffic = [&](Framework f, const char* plan) {
    j.framework = f;
    Plan p = parse_plan(plan);
    StepModel sm(c, find_model("llama2-7b"), j);
    auto lc = layer_compute(sm.model(), sm.job(), p, sm.gpu());
    return step_traffic(sm.model(), sm.job(), p, shape_of(sm.model(), sm.job(), p), lc);
  };
  StepTraffic old = traffic(Framework::kDeepSpeed03, "dp=8,zero=3,mb=1");
  EXPECT_EQ(scatters(old.after_b), std::make_pair(8, 8 * 2 * 65536.0));
  for (const Coll& s : old.after_b)
    if (s.op == comm::Op::kReduceScatter) EXPECT_GT(s.host_s, 0);
  for (const char* plan : {"dp=8,zero=3,mb=1", "dp=8,zero=2,mb=1"}) {
    StepTraffic t = traffic(Framework::kDeepSpeed, plan);
    EXPECT_EQ(scatters(t.beside_b).first + scatters(t.after_b).first, 0) << plan;
    EXPECT_EQ(scatters(t.fill_b), std::make_pair(1, 2 * 16777216.0)) << plan;
  }
}

TEST(WorkStep, DeepSpeed03GathersBlockAndPayPerRankHostTime) {
  // GPT-3 1.3B-style layer (h 2048, 4h MLP) under --framework deepspeed-0.3, dp=8 ZeRO-3, full
  // recompute, on the PCIe server. DeepSpeed 0.3 gathers each weight matrix (fused qkv 3h², dense
  // h², h_to_4h 4h², 4h_to_h 4h²): 4 gathers before the forward, and in the backward 4 for the
  // recomputed forward and 4 for the backward itself; gradients reduce-scattered after the backward
  // one parameter tensor at a time: 4 weight matrices, their 4 biases and the 2 LayerNorms' weight
  // and bias = 12 collectives. Every all-gather synchronizes the device, so all of them wait:
  // nothing runs beside the compute. Host time per collective: 0.38 ms (issue #1069) - 8·9 us (its
  // 8 ranks' copies) + 8·9 us for this group = 0.38 ms.
  // The 8 tensors under 1e5 elements per layer (biases 3h, h, 4h, h; LayerNorms 4·h: 26,624
  // elements) are gathered once per step after the optimizer: 24 layers · 26,624 · 2 bytes =
  // 1,277,952 bytes in one all-gather, copied out per tensor and rank: 0.38 ms + 192 · 8 · 9 us =
  // 14.204 ms of host time.
  auto c = topo::load_chassis("pcie-8gpu-gen4");
  Model m = find_model("gpt3-175b");
  m.hidden = 2048, m.heads = 16, m.ffn = 8192, m.layers = 24, m.kv_heads = 16, m.head_dim = 128;
  Job j;
  j.seq = 2048, j.global_batch = 8, j.recompute = Recompute::kFull,
  j.framework = Framework::kDeepSpeed03;
  StepModel sm(c, m, j);
  Plan p = parse_plan("dp=8,zero=3,mb=1");
  auto lc = layer_compute(sm.model(), sm.job(), p, sm.gpu());
  Shape sh = shape_of(sm.model(), sm.job(), p);
  StepTraffic t = step_traffic(sm.model(), sm.job(), p, sh, lc);
  const double h2 = 2048.0 * 2048.0;
  EXPECT_TRUE(t.beside_f.empty());
  EXPECT_TRUE(t.beside_b.empty());
  ASSERT_EQ(t.after_f.size(), 4u);
  ASSERT_EQ(t.after_b.size(), 20u);  // 8 gathers, 12 scatters
  EXPECT_DOUBLE_EQ(t.after_f[0].bytes, 2 * 3 * h2);
  EXPECT_DOUBLE_EQ(t.after_f[2].bytes, 2 * 4 * h2);
  EXPECT_NEAR(t.after_f[0].host_s, 0.38e-3, 1e-12);
  EXPECT_DOUBLE_EQ(t.after_b[8].bytes, 2 * 3 * h2);    // query_key_value's gradient
  EXPECT_DOUBLE_EQ(t.after_b[9].bytes, 2 * 3 * 2048);  // and its bias's
  EXPECT_DOUBLE_EQ(t.param_gather.bytes, 1277952);
  EXPECT_NEAR(t.param_gather.host_s, 14.204e-3, 1e-12);
  // Exposed per layer: forward 4 gathers, backward 8 gathers + 12 scatters, each its NCCL time plus
  // host; once per step the persistent parameters' gather.
  double exposed = 0;
  for (const auto* v : {&t.after_f, &t.after_b})
    for (const Coll& x : *v) exposed += 0.38e-3 + comm::predict(c, x.op, c.gpus(), x.bytes).time_s;
  double persistent = 14.204e-3 + comm::predict(c, comm::Op::kAllGather, c.gpus(), 1277952).time_s;
  auto r = sm.estimate(p);
  EXPECT_NEAR(r.breakdown.zero_s, 24 * exposed + persistent, 1e-6 * r.step_time_s);
  // The same job under today's deepspeed overlaps the gathers with the compute: less exposed.
  Job now = sm.job();
  now.framework = Framework::kDeepSpeed;
  EXPECT_LT(sm.estimate(p, now).breakdown.zero_s, r.breakdown.zero_s);
}

TEST(WorkStep, FrameworkCopiesAroundZero3Collectives) {
  // Llama 2 13B layer: q, k, v, o = 4·5120² = 104,857,600; MLP 3·5120·13,824 = 212,336,640; norms
  // 2·5120 = 10,240: P = 317,204,480 parameters, gathered as 2·P = 634,408,960 bytes.
  Model m = find_model("llama2-13b");
  Job j;
  j.seq = 4096, j.global_batch = 64, j.recompute = Recompute::kNone, j.framework = Framework::kFsdp;
  Plan p = parse_plan("dp=8,zero=3,mb=1");
  const double P = 317204480.0, bw = 2e12;
  // FSDP2: copy-out reads and writes the gathered bytes (2 per byte gathered), forward and again in
  // the backward; the fp32 reduce-scatter's copy-in reads 2 and writes 4 bytes per element:
  // forward 2·2P / bw = 0.6344 ms; backward (2·2P + 6P) / bw = 1.5860 ms.
  auto [f2, b2] = framework_copy_s(m, j, p, bw);
  EXPECT_NEAR(f2, 4 * P / bw, 1e-12);
  EXPECT_NEAR(b2, (4 * P + 6 * P) / bw, 1e-12);
  // FSDP1 gathers in place; autograd's concatenation of the parameters' gradients into the flat
  // gradient (split_with_sizes_backward: read 2, write 2), the cast and the in-place pre-divide
  // (8 ranks) move 4 + 6 + 8 bytes per element of the backward's reduce-scatter: 18·P / bw =
  // 2.8548 ms.
  j.framework = Framework::kFsdp1;
  auto [f1, b1] = framework_copy_s(m, j, p, bw);
  EXPECT_DOUBLE_EQ(f1, 0.0);
  EXPECT_NEAR(b1, 18 * P / bw, 1e-12);
  // DeepSpeed 0.3 under full recomputation: each of 3 gathers zero-fills and copies out (3 bytes
  // per byte gathered: 6Q), the fp16 gradients are divided in place and the scatter's list input
  // flattened (2 + 2 per byte: 8Q); DeepSpeed gathers the weight matrices only (the norms stay
  // whole): Q = P - 10,240.
  j.framework = Framework::kDeepSpeed03, j.recompute = Recompute::kFull;
  const double Q = P - 10240;
  auto [f3, b3] = framework_copy_s(m, j, p, bw);
  EXPECT_NEAR(f3, 6 * Q / bw, 1e-12);
  EXPECT_NEAR(b3, (2 * 6 * Q + 8 * Q) / bw, 1e-12);
  // Megatron (one layer gathered into its buffer in place) and plans without ZeRO-3 copy nothing.
  j.framework = Framework::kMegatron;
  EXPECT_DOUBLE_EQ(framework_copy_s(m, j, p, bw).second, 0.0);
  j.framework = Framework::kFsdp;
  EXPECT_DOUBLE_EQ(framework_copy_s(m, j, parse_plan("dp=8,zero=0,mb=1"), bw).second, 0.0);
}

TEST(WorkStep, EagerOptimizerOfThePyTorchFrameworks) {
  // AdamW in eager PyTorch (Composer's DecoupledAdamW, torch.optim.AdamW foreach): 80 bytes of HBM
  // per fp32 parameter, plus 12 for clipping by norm: 92, against a fused AdamW's 28. Llama 2 7B,
  // dp=8, ZeRO-3: each GPU steps 1/8 of every parameter: the 32 layers' 202,383,360 each, the
  // embedding and the untied LM head (32,000 x 4,096 each) and the final norm (4,096):
  // 6,738,415,616 / 8 = 842,301,952; on an A100 80GB (2.039 TB/s) PyTorch's optimizer kernels
  // stream at the element-wise share, 3,478 / 4,800 = 0.7246 of the peak: 92 · 842,301,952 /
  // (0.7246 · 2.039e12) = 52.4 ms under fsdp1; fsdp takes torchtitan's fused AdamW, 28 + 12 = 40
  // at the same share (22.8 ms); Megatron's fused Adam at the peak, 28 · 842,301,952 / 2.039e12 =
  // 11.6 ms (each + one 3 us launch).
  auto c = topo::load_chassis("dgx-a100");
  Job j;
  j.seq = 2048, j.global_batch = 16, j.recompute = Recompute::kNone;
  Plan p = parse_plan("dp=8,zero=3,mb=1");
  const double local = (32 * 202383360.0 + 2 * 32000.0 * 4096 + 4096) / 8;
  auto optimizer_s = [&](Framework f) {
    j.framework = f;
    StepModel sm(c, find_model("llama2-7b"), j);
    return sm.estimate(p).breakdown.optimizer_s;
  };
  StepModel sm(c, find_model("llama2-7b"), j);
  const double bw = sm.gpu().memory_bytes_per_s;
  const double share = 3478.0 / 4800;
  EXPECT_NEAR(optimizer_s(Framework::kFsdp1), 92 * local / (share * bw) + 3e-6, 1e-9);
  EXPECT_NEAR(optimizer_s(Framework::kFsdp), 40 * local / (share * bw) + 3e-6, 1e-9);
  EXPECT_NEAR(optimizer_s(Framework::kMegatron), 28 * local / bw + 3e-6, 1e-9);
  EXPECT_NEAR(optimizer_s(Framework::kFsdp1), 0.0524, 0.0005);
  EXPECT_NEAR(optimizer_s(Framework::kMegatron), 0.0116, 0.0002);
}

TEST(WorkStep, GradientsReducedInHalfPrecisionSkipTheCast) {
  // --grad-reduce half: the gradients cross the wire in bf16 (2 bytes), and the frameworks copy
  // less around them. Same Llama 2 13B layer, P = 317,204,480, 8 ranks, HBM 2 TB/s.
  Model m = find_model("llama2-13b");
  Job j;
  j.seq = 4096, j.global_batch = 64, j.recompute = Recompute::kNone;
  Plan p = parse_plan("dp=8,zero=3,mb=1");
  const double P = 317204480.0, bw = 2e12;
  // FSDP1 (Composer's DEFAULT of 2023: reduce_dtype left unset, so param_dtype): the concatenation
  // (read 2, write 2) and the pre-divide in bf16 (read 2, write 2), no fp32 cast: 8·P / bw = 1.2688
  // ms in the backward instead of 18·P / bw = 2.8548 ms; 2 bytes per element on the wire.
  j.framework = Framework::kFsdp1, j.grad_fp32 = Switch::kOff;
  EXPECT_NEAR(framework_copy_s(m, j, p, bw).second, 8 * P / bw, 1e-12);
  EXPECT_DOUBLE_EQ(framework_traits(j, p).grad_bytes, 2.0);
  // FSDP2 with reduce_dtype bf16: _chunk_cat copies bf16 into bf16 (read 2, write 2): backward
  // (2·2P + 4P) / bw = 1.2688 ms instead of (4P + 6P) / bw.
  j.framework = Framework::kFsdp;
  EXPECT_NEAR(framework_copy_s(m, j, p, bw).second, (4 * P + 4 * P) / bw, 1e-12);
  EXPECT_DOUBLE_EQ(framework_traits(j, p).grad_bytes, 2.0);
  // Megatron keeps fp32 for bf16 unless told otherwise; --grad-reduce fp32 on an fp16 job widens
  // it.
  j.framework = Framework::kMegatron, j.grad_fp32 = Switch::kDefault;
  EXPECT_DOUBLE_EQ(framework_traits(j, p).grad_bytes, 4.0);
  j.grad_fp32 = Switch::kOff;
  EXPECT_DOUBLE_EQ(framework_traits(j, p).grad_bytes, 2.0);
  j.precision = Precision::kFp16, j.grad_fp32 = Switch::kOn;
  EXPECT_DOUBLE_EQ(framework_traits(j, p).grad_bytes, 4.0);
  // The traffic list carries it: FSDP1's per-layer reduce-scatter moves 2·P bytes, half of fp32's.
  j.framework = Framework::kFsdp1, j.precision = Precision::kBf16;
  auto chassis = topo::load_chassis("dgx-a100");
  auto bytes_of_scatter = [&](Switch s) {
    j.grad_fp32 = s;
    StepModel sm(chassis, m, j);
    auto lc = layer_compute(sm.model(), sm.job(), p, sm.gpu());
    for (const auto& c :
         step_traffic(sm.model(), sm.job(), p, shape_of(sm.model(), sm.job(), p), lc).beside_b)
      if (c.op == comm::Op::kReduceScatter) return c.bytes;
    return 0.0;
  };
  EXPECT_NEAR(bytes_of_scatter(Switch::kOff), 2 * P, 1);
  EXPECT_NEAR(bytes_of_scatter(Switch::kDefault), 4 * P, 1);
}

TEST(WorkStep, LlmFoundryUnpadsAroundFlashAttention) {
  // MPT-7B shape (32 heads of 128, no GQA), seq 2048, micro-batch 6: 12,288 tokens. llm-foundry's
  // flash_attn_fn gathers q, k, v (4 bytes per element each) and pads the output into a zero-filled
  // buffer (6): forward 4·3·4096 + 6·4096 = 73,728 bytes per token; backward scatters three
  // gradients into zeroed buffers (6 each) and gathers one (4): 6·3·4096 + 4·4096 = 90,112.
  // On 3.35 TB/s: 12,288 · 73,728 / 3.35e12 = 0.2704 ms forward, 0.3305 ms backward per layer.
  Model m = find_model("llama2-7b");
  m.gated_ffn = false, m.ffn = 4 * m.hidden, m.vocab = 50368;
  Job j;
  j.seq = 2048, j.global_batch = 48, j.recompute = Recompute::kNone, j.flash_attention = true;
  j.framework = Framework::kFsdp1;
  Plan p = parse_plan("dp=8,zero=3,mb=6");
  const double bw = 3.35e12, tokens = 12288;
  auto [f, b] = attention_unpad_s(m, j, p, bw);
  EXPECT_NEAR(f, tokens * 73728 / bw, 1e-12);
  EXPECT_NEAR(b, tokens * 90112 / bw, 1e-12);
  // TP=2 halves the heads each GPU holds, and so the bytes.
  EXPECT_NEAR(attention_unpad_s(m, j, parse_plan("tp=2,dp=4,zero=3,mb=6"), bw).first, f / 2, 1e-12);
  // It is llm-foundry's wrapper: FSDP2 (torchtitan's SDPA), Megatron and unfused attention copy
  // nothing.
  j.framework = Framework::kFsdp;
  EXPECT_DOUBLE_EQ(attention_unpad_s(m, j, p, bw).first, 0.0);
  j.framework = Framework::kFsdp1, j.flash_attention = false;
  EXPECT_DOUBLE_EQ(attention_unpad_s(m, j, p, bw).second, 0.0);
  // In the layer: forward + f; backward + b, and with full recomputation the forward's copies
  // again.
  j.flash_attention = true;
  auto c = topo::load_chassis("dgx-h100");
  GpuSpec g = gpu_spec(c.node(c.gpus().front()), Precision::kBf16);
  Job none = j;
  none.framework = Framework::kFsdp;  // same eager element-wise (GeLU, LayerNorm), no unpad
  Plan solo = parse_plan("mb=6");     // no ZeRO copies either way
  auto with = layer_compute(m, j, solo, g), without = layer_compute(m, none, solo, g);
  auto [fg, bg] = attention_unpad_s(m, j, solo, g.memory_bytes_per_s);
  EXPECT_NEAR(with.attn_f - without.attn_f, fg, 1e-12);
  EXPECT_NEAR(with.attn_b - without.attn_b, bg, 1e-12);
  j.recompute = none.recompute = Recompute::kFull;
  with = layer_compute(m, j, solo, g), without = layer_compute(m, none, solo, g);
  EXPECT_NEAR(with.attn_b - without.attn_b, bg + fg, 1e-12);
}

TEST(WorkStep, HsdpShardsInsideTheBoxAndReplicatesAcross) {
  // Llama 2 13B, fsdp, dp=16 on two dgx-a100 boxes, shard=8 (HYBRID_SHARD): the gathers and the
  // scatter run over the 8 GPUs of a box; each rank's 1/8 of the fp32 gradients is then all-reduced
  // with its peer in the other box (a 2-rank group across the NICs): 4·G/8 bytes. Model states
  // divide by 8, not 16.
  auto c = topo::load_chassis("dgx-a100", 2);
  Job j;
  j.seq = 4096, j.global_batch = 32, j.framework = Framework::kFsdp, j.recompute = Recompute::kFull;
  StepModel sm(c, find_model("llama2-13b"), j);
  Plan p = parse_plan("dp=16,zero=3,shard=8,mb=1");
  EXPECT_EQ(p.str(), "tp=1,pp=1,dp=16,zero=3,mb=1,shard=8");
  Shape sh = shape_of(sm.model(), sm.job(), p);
  auto t =
      step_traffic(sm.model(), sm.job(), p, sh, layer_compute(sm.model(), sm.job(), p, sm.gpu()));
  ASSERT_EQ(t.beside_b.size(), 3u);
  EXPECT_EQ(t.beside_f[0].group, GroupKind::kShard);
  EXPECT_EQ(t.beside_b[1].group, GroupKind::kShard);
  EXPECT_EQ(t.beside_b[2].group, GroupKind::kReplica);
  EXPECT_DOUBLE_EQ(t.beside_b[2].bytes, 4 * sh.layer_trainable / 8);
  auto full = memory_per_gpu(sm.model(), sm.job(), parse_plan("dp=16,zero=3,mb=1"), 80e9);
  auto hsdp = memory_per_gpu(sm.model(), sm.job(), p, 80e9);
  EXPECT_NEAR(hsdp.optimizer, 2 * full.optimizer, 1e-6 * full.optimizer);
  EXPECT_NEAR(hsdp.weights, 2 * full.weights, 1e-6 * full.weights);
  auto place_ = place(p, c);
  EXPECT_EQ(place_.replica_group(0, 3, 0), (std::vector<int>{c.gpus()[3], c.gpus()[11]}));
  EXPECT_GT(sm.simulate(p).step_time_s, 0);
  EXPECT_FALSE(plan_problem(parse_plan("dp=16,zero=2,shard=8"), sm.model(), sm.job(), 16).empty());
}

TEST(WorkStep, CheckpointHostTrafficAndShareOfWallTime) {
  // Llama 2 7B full fine-tune, dp=8 on one dgx-a100: a checkpoint is 14 bytes per parameter (bf16
  // weights, fp32 master, Adam m and v): 14 · 6,738,415,616 = 94.34 GB, all in the one box. Its 8
  // PM1733 drives write 8 · 3.8 = 30.4 GB/s: 3.103 s. Sharded, each GPU copies 1/8 to host memory
  // over its own PCIe path (the engine's d2h). Every 100 steps the step waits d2h + write: share =
  // that / (100 · step + that); with
  // --checkpoint-async only d2h.
  auto c = topo::load_chassis("dgx-a100");
  Job j;
  j.mode = Mode::kFullFinetune, j.seq = 4096, j.global_batch = 64;
  StepModel sm(c, find_model("llama2-7b"), j);
  auto step = sm.simulate(parse_plan("dp=8,zero=1"));
  auto ck = checkpoint_cost(sm, step, 100, true, false);
  const double bytes = 14 * sm.model().total_params();
  EXPECT_NEAR(bytes, 94.34e9, 0.01e9);
  EXPECT_NEAR(ck.bytes, bytes, 1);
  EXPECT_NEAR(ck.write_s, bytes / 30.4e9, 1e-9);
  EXPECT_GT(ck.d2h_s, 0);
  EXPECT_NEAR(ck.share, (ck.d2h_s + ck.write_s) / (100 * step.step_time_s + ck.d2h_s + ck.write_s),
              1e-12);
  auto async = checkpoint_cost(sm, step, 100, true, true);
  EXPECT_NEAR(async.exposed_s, ck.d2h_s, 1e-12);
  // Unsharded, one GPU's path carries everything: slower to host memory.
  EXPECT_GT(checkpoint_cost(sm, step, 100, false, false).d2h_s, 2 * ck.d2h_s);
}

TEST(WorkStep, DataParallelTailWhenAllReduceOutlastsBackward) {
  // 4 buckets of c = 1 s, one ready every t_l = 0.5 s of backward (at 0.5, 1, 1.5, 2). They reduce
  // one after another from 0.5 s: ends 1.5, 2.5, 3.5, 4.5. Backward ends at 2 s: 2.5 s exposed =
  // n·c - (n-1)·t_l = 4 - 1.5.
  EXPECT_NEAR(dp_tail_s(4, 1.0, 0.5), 2.5, kTol);
  // Backward longer than the reduction: only the last bucket shows.
  EXPECT_NEAR(dp_tail_s(4, 0.2, 0.5), 0.2, kTol);
}

TEST(WorkStep, DataParallelExposureOnAPcieBox) {
  // Llama 2 7B, pure data parallel over 8 GPUs of the PCIe server, one micro-batch per GPU,
  // Megatron-LM defaults: bf16 training reduces fp32 gradients, and without --overlap-grad-reduce
  // all 32 layers' gradients (4 bytes x 32 x 202,383,360 parameters) are all-reduced in one bucket
  // after the backward: exposed = c(4·32·202,383,360 bytes), the all-reduce time comm predicts.
  auto c = topo::load_chassis("pcie-8gpu-gen4");
  Job j;
  j.mode = Mode::kFullFinetune, j.global_batch = 8, j.seq = 1024;
  const double layer = 202383360.0, grads = 32 * layer;
  {
    StepModel sm(c, find_model("llama2-7b"), j);
    auto r = sm.estimate(parse_plan("dp=8,zero=0"));
    EXPECT_NEAR(r.breakdown.dp_s,
                comm::predict(c, comm::Op::kAllReduce, c.gpus(), 4 * grads).time_s,
                1e-9 * r.step_time_s);
  }
  // With the overlap on: buckets of max(40M, 1M·8) = 40M parameters, n = ceil(6,476,267,520 / 40M)
  // = 162 of 4·grads/162 bytes each, one ready every t_b/162; they take longer than that, so
  // exposed = n·c - (n-1)·t_b/n (dp_tail_s).
  j.grad_overlap = Switch::kOn;
  StepModel sm(c, find_model("llama2-7b"), j);
  Plan p = parse_plan("dp=8,zero=0");
  auto r = sm.estimate(p);
  double bucket = comm::predict(c, comm::Op::kAllReduce, c.gpus(), 4 * grads / 162).time_s;
  auto lc = layer_compute(sm.model(), sm.job(), p, sm.gpu());
  double t_b = 32 * lc.backward() + 2.0 / 3 * head_compute(sm.model(), sm.job(), p, sm.gpu());
  ASSERT_GT(bucket, t_b / 162);
  EXPECT_NEAR(r.breakdown.dp_s, 162 * bucket - 161 * t_b / 162, 1e-9 * r.step_time_s);
}

TEST(WorkStep, NvswitchBoxBeatsPcieBox) {
  // Same job and plan; the PCIe box's TP groups cross switches and host bridges, the DGX's stay on
  // NVLink.
  Job j;
  j.mode = Mode::kFullFinetune, j.global_batch = 32, j.seq = 4096;
  Plan p = parse_plan("tp=4,dp=2,zero=1");
  auto dgx = topo::load_chassis("dgx-a100");
  auto pcie = topo::load_chassis("pcie-8gpu-gen4");
  StepModel a(dgx, find_model("llama2-13b"), j), b(pcie, find_model("llama2-13b"), j);
  auto ra = a.simulate(p), rb = b.simulate(p);
  EXPECT_GT(rb.step_time_s, 1.5 * ra.step_time_s);
  EXPECT_GT(rb.breakdown.tp_s, 5 * ra.breakdown.tp_s);
  ASSERT_FALSE(ra.links.empty());
  ASSERT_FALSE(rb.links.empty());
  EXPECT_EQ(ra.links.front().tech, "NVLink 3.0");
  EXPECT_NE(rb.links.front().tech.find_first_of("PCIeho"),
            std::string::npos);  // PCIe or host memory
  EXPECT_GT(rb.links.front().busy_fraction, ra.links.front().busy_fraction);
}

TEST(WorkStep, TpAcrossTheSocketLinkIsSlower) {
  // TP=2 on GPUs 0,1 (one PCIe switch) against GPUs 0,4 (across the UPI link between the sockets).
  auto c = topo::load_chassis("pcie-8gpu-gen4");
  Job j;
  j.mode = Mode::kFullFinetune, j.global_batch = 32, j.seq = 4096;
  StepModel sm(c, find_model("llama2-7b"), j);
  auto inside = sm.simulate(parse_plan("tp=2,dp=4,zero=1"));
  auto across = sm.simulate(parse_plan("tp=2,dp=4,zero=1,order=dp,tp,pp"));
  EXPECT_GT(across.breakdown.tp_s, 1.5 * inside.breakdown.tp_s);
  EXPECT_GT(across.step_time_s, inside.step_time_s);
}

TEST(WorkStep, PlansThatCannotRun) {
  auto c = topo::load_chassis("dgx-h100");
  Job j;
  StepModel sm(c, find_model("llama3-70b"), j);
  EXPECT_THROW(sm.simulate(parse_plan("tp=3")), InputError);
  EXPECT_THROW(sm.simulate(parse_plan("tp=8,dp=2")), InputError);
  auto w = topo::load_chassis("workstation-4gpu-nvlink");
  StepModel big(w, find_model("llama3-405b"), j);
  try {
    search_plans(big);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("llama3-405b fits on no plan of 4 GPUs"),
              std::string::npos)
        << e.what();
  }
}

TEST(WorkStep, AutoPicksAFittingPlanAndSimulatesIt) {
  auto c = topo::load_chassis("training-appliance");
  Job j;
  j.mode = Mode::kLora;
  StepModel sm(c, find_model("llama3-70b"), j);
  auto r = search_plans(sm);
  ASSERT_FALSE(r.best.empty());
  EXPECT_TRUE(r.best.front().simulated);
  EXPECT_TRUE(r.best.front().memory.fits);
  for (std::size_t i = 1; i < r.best.size() && r.best[i].simulated; ++i)
    EXPECT_LE(r.best[i - 1].step_time_s, r.best[i].step_time_s);
}

TEST(WorkStep, ScalingFromOneGpu) {
  auto c = topo::load_chassis("dgx-h100");
  Job j;
  j.mode = Mode::kLora, j.seq = 2048;
  StepModel sm(c, find_model("llama2-7b"), j);
  auto pts = scaling(sm);
  ASSERT_EQ(pts.size(), 4u);  // 1, 2, 4, 8
  ASSERT_TRUE(pts[0].fits);
  EXPECT_DOUBLE_EQ(pts[0].efficiency, 1.0);
  EXPECT_GT(pts[3].best.tokens_per_s, 4 * pts[0].best.tokens_per_s);
  EXPECT_LE(pts[3].efficiency, 1.05);
}

TEST(WorkSearch, WhyFirstBeatsSecondAndCommunicationBound) {
  // #1: 10 s = 8 compute + 1 bubble + 1 DP; #2: 13 s = 8 compute + 0.5 bubble + 4.5 DP. #1 is 3 s
  // faster: 3.5 s less DP sync, 0.5 s more bubble. #2 is communication-bound: 4.5 s exposed > half
  // of 8 s compute.
  StepResult a, b;
  a.step_time_s = 10, a.breakdown.compute_s = 8, a.breakdown.bubble_s = 1, a.breakdown.dp_s = 1,
  a.breakdown.exposed_comm_s = 1;
  b.step_time_s = 13, b.breakdown.compute_s = 8, b.breakdown.bubble_s = 0.5, b.breakdown.dp_s = 4.5;
  b.breakdown.exposed_comm_s = 4.5;
  EXPECT_EQ(why_first_beats_second(a, b),
            "#1 is 3 s faster than #2: 3.5 s less exposed data-parallel gradient sync, 0.5 s more "
            "pipeline bubble");
  EXPECT_FALSE(communication_bound(a));
  EXPECT_TRUE(communication_bound(b));
  // When the two differ in what the search chose beside the plan, the line names it.
  a.job.framework = Framework::kFsdp1, b.job.framework = Framework::kMegatron;
  a.job.recompute = Recompute::kFull;
  EXPECT_EQ(why_first_beats_second(a, b),
            "#1 is 3 s faster than #2: 3.5 s less exposed data-parallel gradient sync, 0.5 s more "
            "pipeline bubble (#1 fsdp1, recompute full; #2 megatron, recompute selective)");
  // Two plans of the same step time (ZeRO-1 and ZeRO-2 where nothing of the gathers shows): the
  // line does not call #1 "0 s faster".
  StepResult c = a, e = a;
  EXPECT_EQ(why_first_beats_second(c, e), "#1 is as fast as #2: the same terms within 0.1 %");
  // #1 the slower (a communication-bound plan within 5 % ranked below it): "slower", not "-2 s
  // faster".
  EXPECT_EQ(why_first_beats_second(b, a).rfind("#1 is 3 s slower than #2: ", 0), 0u)
      << why_first_beats_second(b, a);
}

TEST(WorkSearch, WideSpaceTriesWhatUsersChoose) {
  // Llama 2 7B on one dgx-h100 box: the wide space crosses plans with recompute (3), offload (2),
  // framework (4: megatron, fsdp, fsdp1, deepspeed), gradient overlap (2) and element-wise fusion
  // (2): 96 job variants per plan, and torchtitan's per-op recomputation under fsdp: 2·2·2 = 8
  // more, 104; plans with sequence-parallel TP add TP overlap on under the three frameworks that
  // have it: 3·2·3·2·2 + 8 = 80 more. Context-parallel plans (cp 2, 4, 8 at micro-batch 1) run
  // under megatron only: 3·2·2·2 = 24 variants, and 24 more with TP overlap.
  auto c = topo::load_chassis("dgx-h100");
  Job j;
  j.seq = 4096, j.global_batch = 64;
  StepModel sm(c, find_model("llama2-7b"), j);
  auto narrow = search_plans(sm);
  auto wide = search_plans(sm, SearchOptions::everything());
  const auto all = candidate_plans(sm.model(), sm.job(), 8, 8, true);
  // Offload needs ZeRO stage 1 or more: a zero=0 plan gets the half of the variants without it.
  long long plans = 0, sp_tp = 0, cp_plans = 0, cp_sp_tp = 0;
  for (const Plan& p : all) {
    const int halve = p.zero == 0 ? 2 : 1;  // counted twice, each count halved below
    (p.cp > 1 ? cp_plans : plans) += 2 / halve;
    (p.cp > 1 ? cp_sp_tp : sp_tp) += (p.tp > 1 && p.sp) ? 2 / halve : 0;
  }
  EXPECT_GT(cp_plans, 0);
  EXPECT_EQ(2 * wide.candidates, 104 * plans + 80 * sp_tp + 24 * cp_plans + 24 * cp_sp_tp);
  EXPECT_GT(wide.candidates, 100 * narrow.candidates);
  EXPECT_LE(wide.best.front().step_time_s, narrow.best.front().step_time_s * 1.0001);
}

// The optimizer's HBM bytes per parameter by how PyTorch's AdamW runs (--optimizer-impl). Fused
// (torch.optim.AdamW(fused=True)): read weight, gradient and two moments, write weight and two
// moments, 7 x 4 = 28; foreach: one pass per tensor operation, 80; the FSDP stacks clip by norm
// (read 4, scale in place 8: 12). fsdp (torchtitan: fused by default) 28 + 12 = 40; fsdp1
// (Composer, fms-fsdp: foreach or per parameter) 80 + 12 = 92; hf (the measured script: fused, no
// clipping) 28. Megatron-LM's own fused Adam keeps its figure whatever the flag.
TEST(WorkFramework, OptimizerBytesFollowTheAdamImplementation) {
  Job j;
  Plan p = parse_plan("dp=8,zero=3,mb=1");
  auto bytes = [&](Framework f, Switch s) {
    j.framework = f, j.fused_optimizer = s;
    return framework_traits(j, p).optimizer_bytes_per_param;
  };
  EXPECT_DOUBLE_EQ(bytes(Framework::kFsdp, Switch::kDefault), 40.0);
  EXPECT_DOUBLE_EQ(bytes(Framework::kFsdp, Switch::kOff), 92.0);
  EXPECT_DOUBLE_EQ(bytes(Framework::kFsdp1, Switch::kDefault), 92.0);
  EXPECT_DOUBLE_EQ(bytes(Framework::kFsdp1, Switch::kOn), 40.0);
  EXPECT_DOUBLE_EQ(bytes(Framework::kHf, Switch::kDefault), 28.0);
  EXPECT_DOUBLE_EQ(bytes(Framework::kHf, Switch::kOff), 80.0);
  const double megatron = bytes(Framework::kMegatron, Switch::kDefault);
  EXPECT_DOUBLE_EQ(bytes(Framework::kMegatron, Switch::kOff), megatron);
}

// Which frameworks reduce ZeRO-3 gradients at the last micro-batch only: hf by default (the
// Trainer's accelerate no_sync), the others when told (--grad-sync last); never below ZeRO-3.
TEST(WorkFramework, GradSyncLastByFramework) {
  Job j;
  Plan z3 = parse_plan("dp=8,zero=3,mb=1"), z1 = parse_plan("dp=8,zero=1,mb=1");
  auto last = [&](Framework f, Switch s, const Plan& p) {
    j.framework = f, j.grad_sync_last = s;
    return framework_traits(j, p).zero3_sync_last;
  };
  EXPECT_TRUE(last(Framework::kHf, Switch::kDefault, z3));
  EXPECT_FALSE(last(Framework::kHf, Switch::kOff, z3));
  EXPECT_FALSE(last(Framework::kFsdp, Switch::kDefault, z3));
  EXPECT_TRUE(last(Framework::kFsdp, Switch::kOn, z3));
  EXPECT_FALSE(last(Framework::kFsdp, Switch::kOn, z1));
}

TEST(WorkValidation, PublishedMeasurementsWithin15Percent) {
  int held = 0;
  for (const auto& r : run_validation()) {
    if (r.c.open) continue;
    EXPECT_LE(std::abs(r.error), kValidationBound) << r.c.name << " " << r.predicted;
    ++held;
  }
  // 15 Megatron-LM rows, 6 rows of Table 2, 6 LoRA rows, 14 FSDP rows, 9 NeMo long-sequence rows
  // (4K-16K without CP, 32K-1024K with cp=2-32: Megatron's causal kernels per ring step, and
  // FlashAttention-2 as that container's launcher set it), 5 Hugging Face rows on one H200 less
  // the open Qwen3 0.6B micro-batch 2 row: 54; then 17 more llm-foundry FSDP rows (two A100 MPT-70B
  // rows at 32 and 64 GPUs, 15 H100 sequence-2048 rows at 8-64 GPUs) less the open MPT-760M 8-GPU
  // row, and the NeMo 24.07 pre-training table's 12 rows less the three open ones without TP
  // (Llama 2 7B, Llama 3 8B, GPT-3 5B): 54 + 16 + 9 = 79 of 84; then the 78 rows of llm-foundry's
  // A100 40GB table (125M-70B, 8-128 GPUs) less its 26 open ones (MPT-70B on 64 GPUs, the five
  // MPT-13B rows on 8 GPUs, MPT-1B on 32, eight small-model rows at 32-128 GPUs, the 11 MPT-125M
  // rows): 79 + 52 = 131 of 162; then the A100 80GB table's 41 small-model rows (MPT-125M to 3B,
  // 8 GPUs, sequences 512-65,536) less their 10 open ones (MPT-125M at 512-8,192, MPT-350M and
  // 760M at 512 and 1,024): 131 + 31 = 162 of 203; then the A100 80GB table's 14 other 7B-30B rows
  // and the H100 table's 30 rows at other sequence lengths less the two open MPT-30B rows at
  // sequence 8,192: 162 + 42 = 204 of 247; then the H100 FP8 table's 10 rows less the open MPT-350M
  // row at sequence 512: 204 + 9 = 213 of 257. Since Composer's train metrics are charged
  // (fsdp1's metric_loss_passes), 28 of those open rows are within 15 % and held: the eight
  // MPT-125M and 350M rows of the A100 80GB table, 17 small-model rows of the A100 40GB table (all
  // 11 MPT-125M rows, 350M, 760M at 32-128 GPUs, 3B at 64 and 1B at 128), MPT-760M on 8 H100s and
  // MPT-350M fp8 at sequence 512: 213 + 28 = 241 of 257. Since PyTorch's early-stopping
  // recomputation is charged (torch >= 2.1 rows), the two A100 80GB MPT-70B rows read +20.5 and
  // +18.1 % and are open: 239 of 257; then the PyTorch/IBM FSDP blog's six rows (7B, 34B, 70B on
  // 128 A100 and 96 H100), all within 15 %: 245 of 263; then KempnerForge's nine H200 rows less
  // the open 7B TP=4 + FSDP=8 (+16.2 %): 253 of 272 (the one-GPU 7B, -16.6 % with fsdp's AdamW
  // taken as foreach, is -13.8 % with torchtitan's fused default). Since KempnerForge's gradients
  // are reduced at the last micro-batch only (--grad-sync last, as its training loop does), its
  // 7B TP=4 on 8 GPUs (+19.1 %) and 70B TP=4 rows on 32 and 160 (+15.4, +24.8 %) are open too:
  // 250 of 272. With its TP collectives one per projection (--tp-collectives per-projection, as
  // its TP plan runs them) three of those are back within 15 % (7B TP=4 on 8 and 32 GPUs, 70B TP=4
  // on 32), and six more of its MFU sweep's rows (TP=2, TP=4, TP=2 x FSDP=2, 7B TP=4 x FSDP=4, 13B
  // TP=4 x FSDP=2 and x FSDP=4) are all within it: 259 of 278, the 70B on 160 GPUs open; then
  // the rest of its weak-scaling report (13B on 8, 64 and 128 GPUs, 70B on 8, 64, 96 and 128) and
  // its 175B on 360 GPUs, with three open (70B on 8 GPUs at 0.99 of the GPU's memory, 70B on 96 at
  // +15.4 %, the 175B at -24.3 %): 264 of 286; then its config-validation report's four pure-FSDP
  // and TP x FSDP runs (7B on 4, 12 and 32 GPUs, 70B on 32), all within 15 %: 268 of 290; then
  // Megatron-Bridge's Llama 3 70B fp8 on 64 H100 at GBS 128 (25.11) and 256 (26.02), -2.4 % both:
  // 270 of 292; then its Llama 3 8B fp8 on 8 B200, open (+23.8 %): 270 of 293; then torchtitan's
  // two "selective layer" rows on 64 A100 (one block in two recomputed: +1.5 %, +8.5 %): 272 of
  // 295; then its three "selective op" rows (per-op checkpointing: +0.6, +9.1, +14.1 %): 275 of
  // 298; then Trainy's Llama 3.1 8B fp8 runs on 32 and 64 H200 (-14.0, -12.7 %): 277 of 300
  EXPECT_EQ(held, 277);
}

TEST(WorkValidation, Zero3OfTable2FallsWithScaleUnderDeepSpeed03) {
  // Narayanan et al. 2021, Table 2: ZeRO-3 per-GPU TFLOP/s falls 144 -> 88 -> 44 from 384 to 1536
  // GPUs at a fixed global batch while PTD-P stays ~150. Under deepspeed-0.3 every ZeRO-3
  // collective is on the critical path and costs host time per rank, so the prediction must fall
  // with each doubling and rank ZeRO-3 below PTD-P at every scale, as measured (144 < 153 at
  // 384).
  auto rows = run_validation("Narayanan T2");
  std::map<int, double> zero3, ptdp;
  for (const auto& r : rows) (r.c.plan.zero == 3 ? zero3 : ptdp)[r.c.plan.gpus()] = r.predicted;
  ASSERT_EQ(zero3.size(), 3u);
  ASSERT_EQ(ptdp.size(), 3u);
  EXPECT_GT(zero3[384], 1.3 * zero3[768]);
  EXPECT_GT(zero3[768], 1.6 * zero3[1536]);
  EXPECT_LT(zero3[384], ptdp[384]);
  EXPECT_LT(zero3[768], ptdp[768]);
  EXPECT_LT(zero3[1536], 0.5 * ptdp[1536]);
}

TEST(WorkValidation, FusedAttentionRowsAreTheirPapersJobs) {
  // MPT 7B, seq 4096, llm-foundry: 8 GPUs, micro-batch 16, accumulation 2 -> global 256, FSDP,
  // fused.
  for (const auto& c : validation_cases()) {
    if (c.name != "MPT 7B seq 4096 full recompute") continue;
    EXPECT_EQ(c.plan.str(), "tp=1,pp=1,dp=8,zero=3,mb=16");
    EXPECT_EQ(c.job.global_batch, 256);
    EXPECT_TRUE(c.job.flash_attention);
    EXPECT_EQ(c.job.recompute, Recompute::kFull);
    return;
  }
  FAIL() << "case missing";
}

TEST(WorkStep, TpOverlapHidesCollectivesBehindGemmsByHand) {
  // Llama 2 7B pre-training on one DGX H100 (132 SMs), tp=8 with sequence parallelism, micro-batch
  // 1 of 4096 tokens, 8 micro-batches, Megatron with --tp-comm-overlap (TE userbuffers). Each TP
  // collective moves the micro-batch's hidden states, 2·4096·4096 bytes (nccl-tests S); ag and rs
  // its all-gather and reduce-scatter alone, q, o, u, d the QKV, proj, up and down GEMMs' seconds.
  // Without overlap a layer's forward and backward each wait for 2·ag + 2·rs. With it (t = 8
  // chunks for the ring exchange, n = 4 for the pipelined reduce-scatter, k = 132/(132-16) the
  // GEMM's stretch on the SMs the userbuffers kernels leave it):
  //   ring(g)  = max(ag, 7/8·g) - 7/8·g                   all-gather beside 7/8 of its GEMM
  //   pipe(g)  = max(0, rs(3/4 S) - 3/4·g·k) + g·(k-1) + rs(S/4)   the last chunk stays exposed
  //   bulk(g)  = max(0, rs - g·k) + g·(k-1)                beside the wgrad GEMM
  //   forward  = ring(q) + pipe(o) + ring(u) + pipe(d)
  //   backward = ring(d) + bulk(u) + ring(o) + bulk(q)
  auto c = topo::load_chassis("dgx-h100");
  Job j;
  j.seq = 4096, j.global_batch = 8;
  StepModel sm(c, find_model("llama2-7b"), j);
  Plan p = parse_plan("tp=8,mb=1");
  auto lc = layer_compute(sm.model(), sm.job(), p, sm.gpu());
  const double S = 2.0 * 4096 * 4096;
  auto t_of = [&](comm::Op op, double bytes) {
    return comm::predict(c, op, c.gpus(), bytes).time_s;
  };
  const double ag = t_of(comm::Op::kAllGather, S), rs = t_of(comm::Op::kReduceScatter, S);
  const double rs3 = t_of(comm::Op::kReduceScatter, 0.75 * S),
               rs1 = t_of(comm::Op::kReduceScatter, 0.25 * S);
  const double k = 132.0 / (132 - 16);
  ASSERT_EQ(lc.sms, 132);
  auto ring = [&](double g) { return std::max(ag, 7.0 / 8 * g) - 7.0 / 8 * g; };
  auto pipe = [&](double g) { return std::max(0.0, rs3 - 0.75 * g * k) + g * (k - 1) + rs1; };
  auto bulk = [&](double g) { return std::max(0.0, rs - g * k) + g * (k - 1); };
  const double fwd = ring(lc.gemm_qkv) + pipe(lc.gemm_proj) + ring(lc.gemm_up) + pipe(lc.gemm_down);
  const double bwd = ring(lc.gemm_down) + bulk(lc.gemm_up) + ring(lc.gemm_proj) + bulk(lc.gemm_qkv);
  const double per_layer_off = 2 * (2 * ag + 2 * rs);
  Job on = sm.job();
  on.tp_overlap = Switch::kOn;
  auto off_r = sm.estimate(p), on_r = sm.estimate(p, on);
  // 8 micro-batches x 32 layers
  EXPECT_NEAR(off_r.breakdown.tp_s, 8 * 32 * per_layer_off, 1e-9 * off_r.step_time_s);
  EXPECT_NEAR(on_r.breakdown.tp_s, 8 * 32 * (fwd + bwd), 1e-9 * on_r.step_time_s);
  // The overlap hides most of it here: these GEMMs outlast the NVLink collectives.
  EXPECT_LT(on_r.breakdown.tp_s, 0.5 * off_r.breakdown.tp_s);
  EXPECT_LT(on_r.step_time_s, off_r.step_time_s);
  EXPECT_EQ(on_r.breakdown.compute_s, off_r.breakdown.compute_s);
  // The engine composes the same path: exposed TP time within 5 % of the closed form.
  auto sim = sm.simulate(p, on);
  EXPECT_NEAR(sim.breakdown.tp_s, on_r.breakdown.tp_s, 0.05 * on_r.breakdown.tp_s);
  // PyTorch async TP (fsdp): SM-free; the forward's reduce-scatters pipelined with their GEMM in 8
  // chunks, rs(S/8) left; the backward's stay whole (Llama's separate q, k, v and gate, up dgrads
  // are summed before them, so no single matmul produces them):
  //   forward = ring(q) + async(o) + ring(u) + async(d), backward = ring(d) + rs + ring(o) + rs.
  Job async = on;
  async.framework = Framework::kFsdp;
  async.fused_elementwise = Switch::kOn;
  Job async_off = async;
  async_off.tp_overlap = Switch::kOff;
  auto lc_a = layer_compute(sm.model(), async, p, sm.gpu());
  auto ring_a = [&](double g) { return std::max(ag, 7.0 / 8 * g) - 7.0 / 8 * g; };
  const double rs7 = t_of(comm::Op::kReduceScatter, 7.0 / 8 * S),
               rs_8 = t_of(comm::Op::kReduceScatter, S / 8);
  auto pipe_a = [&](double g) { return std::max(0.0, rs7 - 7.0 / 8 * g) + rs_8; };
  const double fwd_a = ring_a(lc_a.gemm_qkv) + pipe_a(lc_a.gemm_proj) + ring_a(lc_a.gemm_up) +
                       pipe_a(lc_a.gemm_down);
  const double bwd_a = ring_a(lc_a.gemm_down) + rs + ring_a(lc_a.gemm_proj) + rs;
  auto async_r = sm.estimate(p, async);
  EXPECT_NEAR(async_r.breakdown.tp_s, 8 * 32 * (fwd_a + bwd_a), 1e-9 * async_r.step_time_s);
  EXPECT_LT(async_r.breakdown.tp_s, sm.estimate(p, async_off).breakdown.tp_s);
  // What cannot run: DeepSpeed has no TP overlap; the overlap needs sequence parallelism.
  Job ds = on;
  ds.framework = Framework::kDeepSpeed;
  EXPECT_NE(plan_problem(p, sm.model(), ds, 8).find("deepspeed has no TP"), std::string::npos);
  EXPECT_NE(plan_problem(parse_plan("tp=8,mb=1,sp=off"), sm.model(), on, 8).find("sp=on"),
            std::string::npos);
}

TEST(WorkStep, TpOverlapUnderLoraLeavesTheBackwardScattersExposed) {
  // Userbuffers hides the backward's dgrad reduce-scatters behind the wgrad GEMMs (bulk); LoRA's
  // frozen weights have no wgrad, so those two stay whole: backward = ring(d) + rs + ring(o) + rs.
  auto c = topo::load_chassis("dgx-h100");
  Job j;
  j.mode = Mode::kLora, j.seq = 4096, j.global_batch = 8, j.tp_overlap = Switch::kOn;
  StepModel sm(c, find_model("llama2-7b"), j);
  Plan p = parse_plan("tp=8,mb=1");
  auto lc = layer_compute(sm.model(), sm.job(), p, sm.gpu());
  Shape sh = shape_of(sm.model(), sm.job(), p);
  StepTraffic t = step_traffic(sm.model(), sm.job(), p, sh, lc);
  int plain_rs = 0, beside = 0;
  for (const PathItem& it : t.backward) {
    if (it.is_compute()) continue;
    if (it.beside_s > 0) ++beside;
    if (it.coll.op == comm::Op::kReduceScatter && it.beside_s == 0 && it.coll.bytes == sh.act_bytes)
      ++plain_rs;
  }
  EXPECT_EQ(plain_rs, 2);  // QKV's and up's dgrad reduce-scatters
  EXPECT_EQ(beside, 2);    // the all-gathers before the proj and down dgrad GEMMs
}

TEST(StepTest, CpuAdamRateFromTheZeroOffloadPaper) {
  // The per-core rate is derived from the 1e10 row (not an independent check): ZeRO-Offload paper,
  // Table 4, CPU-Adam 2.57 s for 1e10 parameters on one DGX-2 (2x Xeon Platinum 8168, 24 cores at
  // 2.7 GHz each, AVX-512 = 16 fp32 lanes). Each socket updates half: 5e9 / (24 cores x 8.11e7 /s)
  // = 2.57 s; its memory (6 x DDR4-2666 x 8 B = 128 GB/s) would take 28 x 5e9 / 128e9 = 1.09 s, so
  // the cores bound it. Within 1%.
  const double socket_memory = 6 * 2666e6 * 8;
  EXPECT_NEAR(cpu_adam_time(5e9, 24, 16, 2.7e9, socket_memory), 2.57, 0.01 * 2.57);
  // The same table's 4e9 row, 1.03 s: 2e9 / (24 x 8.11e7 /s) = 1.028 s, within 1%.
  EXPECT_NEAR(cpu_adam_time(2e9, 24, 16, 2.7e9, socket_memory), 1.03, 0.01 * 1.03);
  // Its 1e9 row measured 0.22 s, 14% under the rate's 0.257 s: the rate is the large shards' one.
  EXPECT_NEAR(cpu_adam_time(0.5e9, 24, 16, 2.7e9, socket_memory), 0.257, 0.01 * 0.257);
  // AVX2 (8 lanes) at the same clock: twice the time.
  EXPECT_NEAR(cpu_adam_time(5e9, 24, 8, 2.7e9, socket_memory), 5.14, 0.01 * 5.14);
  // 480 cores of the same kind: 0.129 s of compute, under the memory's 1.09 s.
  EXPECT_NEAR(cpu_adam_time(5e9, 480, 16, 2.7e9, socket_memory), 28 * 5e9 / socket_memory, 1e-9);
  EXPECT_EQ(cpu_adam_time(0, 24, 16, 2.7e9, socket_memory), 0);
}

TEST(WorkStep, OffloadCpuAdamOnTheDgxA100Epyc) {
  // DGX A100: 8 GPUs, 4 on each EPYC 7742 (catalog: 64 cores, AVX2 = 8 fp32 lanes, 2.25 GHz,
  // 204.8 GB/s). With 1e9 parameters held per GPU (ZeRO off), each CPU updates 4e9: its cores do
  // 64 x 2.25e9 x 8 / 532.9 lane-cycles = 2.162e9 parameters/s -> 1.850 s; its memory would take
  // 28 x 4e9 / 204.8e9 = 0.547 s. The slower, the cores: 1.850 s, within 1%.
  auto c = topo::load_chassis("dgx-a100");
  StepModel sm(c, find_model("llama2-7b"), Job{});
  Plan p = parse_plan("dp=8,zero=0");
  Shape sh;
  sh.layers_per_stage = 1, sh.stage_trainable = 1e9;
  Periods r;
  offload_periods(*sm.impl(), p, place(p, c), sh, r, nullptr);
  const double cores_s = 4e9 / (64 * 2.25e9 * 8 / (2.7e9 * 16 / (1e10 / 2.57 / 48)));
  EXPECT_NEAR(cores_s, 1.850, 0.001);
  EXPECT_NEAR(r.cpu_optimizer, cores_s, 0.01 * cores_s);
}

TEST(WorkStep, OffloadSaysWhenACpuLacksClockOrLanes) {
  // A CPU part a file defines without clock_hz or simd_fp32_lanes runs CPU-Adam as the paper's
  // host core: the step model says so in its notes; a catalog CPU (all carry both) adds no note.
  auto c = topo::build_chassis(topo::parse_chassis_spec(R"(parts:
  - {id: bare-cpu, kind: cpu, pcie: pcie4, cores: 32}
nodes:
  - {id: cpu0, kind: cpu, part: bare-cpu}
  - {id: "gpu{0..1}", kind: gpu, part: a100-pcie}
links:
  - {a: "gpu{0..1}", b: cpu0, tech: pcie4, width: 16}
)",
                                                        "box.yaml"));
  Job j;
  j.mode = Mode::kFullFinetune, j.offload_optimizer = true;
  StepModel sm(c, find_model("llama2-7b"), j);
  ASSERT_EQ(sm.notes().size(), 1u);
  EXPECT_NE(sm.notes()[0].find("CPU part bare-cpu gives no clock_hz or simd_fp32_lanes"),
            std::string::npos)
      << sm.notes()[0];
  auto h100 = topo::load_chassis("dgx-h100");
  StepModel dgx(h100, find_model("llama2-7b"), j);
  EXPECT_TRUE(dgx.notes().empty());
}

TEST(WorkStep, OffloadUpdatesEveryTrainableParameter) {
  // Llama 3 8B (32 layers of 218,112,000 parameters: 6.980e9; embedding and LM head of 128,256 x
  // 4,096 = 525,336,576 each, untied; final norm 4,096: 8.030e9 in all) on one DGX H100, dp=8,
  // ZeRO-1: each GPU's optimizer shard is 8.030e9 / 8 = 1.004e9 parameters, the layers' 6.980e9
  // and the two tables alike. Each Xeon 8480C serves 4 GPUs: 4.015e9 parameters; its 56 cores at
  // 2.0 GHz x 16 lanes / 533 lane-cycles do 3.36e9 parameters/s -> 1.195 s (its memory alone:
  // 28 x 4.015e9 / 307.2e9 = 0.366 s). Without the tables it would be 0.87 x that. Within 1%.
  auto c = topo::load_chassis("dgx-h100");
  Job j;
  j.mode = Mode::kFullFinetune, j.offload_optimizer = true;
  StepModel sm(c, find_model("llama3-8b"), j);
  Plan p = parse_plan("dp=8,zero=1");
  const Shape sh = shape_of(sm.model(), sm.job(), p);
  const double all = 32 * 218112000.0 + 2 * 128256.0 * 4096 + 4096;
  EXPECT_NEAR(all, 8.030e9, 0.001e9);
  EXPECT_NEAR(sh.stage_trainable, all, 1);
  Periods r;
  offload_periods(*sm.impl(), p, place(p, c), sh, r, nullptr);
  const double lane_cycles = 2.7e9 * 16 / (1e10 / 2.57 / 48);
  const double cores_s = 4 * all / 8 / (56 * 2.0e9 * 16 / lane_cycles);
  EXPECT_NEAR(cores_s, 1.195, 0.001);
  EXPECT_NEAR(r.cpu_optimizer, cores_s, 0.01 * cores_s);
  // The host memory counts the same parameters: 12 bytes (fp32 master, m, v) x all / 8.
  auto e = sm.estimate(p);
  EXPECT_NEAR(e.memory.host_bytes, 12 * all / 8, 1e-6 * e.memory.host_bytes);
  // Offload needs a ZeRO stage: zero=0 is refused, naming the plan.
  try {
    sm.estimate(parse_plan("dp=8,zero=0"));
    ADD_FAILURE() << "zero=0 with offload accepted";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("plan tp=1,pp=1,dp=8,zero=0 has zero=0"),
              std::string::npos)
        << err.what();
  }
}

}  // namespace
}  // namespace linkwise::work
