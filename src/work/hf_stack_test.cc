#include "linkwise/work/hf_stack.h"

#include <gtest/gtest.h>

#include "linkwise/topo/chassis.h"
#include "linkwise/work/compute.h"
#include "linkwise/work/framework.h"
#include "linkwise/work/step.h"

namespace linkwise::work {
namespace {

Job hf_job(Mode mode, int seq, int mb) {
  Job j;
  j.mode = mode, j.precision = Precision::kBf16, j.seq = seq, j.micro_batch = mb;
  j.global_batch = mb, j.recompute = Recompute::kNone, j.framework = Framework::kHf;
  if (mode == Mode::kLora)
    j.lora.rank = 16, j.lora.targets = {"q", "k", "v", "o", "gate", "up", "down"};
  return j;
}

Plan one_gpu(int mb) {
  Plan p;
  p.micro_batch = mb;
  return p;
}

TEST(WorkHfStack, EagerRmsNormBytes) {
  // bf16 input and weight: to(fp32) 2 + 4, pow 4 + 4, mean 4, product 4 + 4, to(bf16) 4 + 2,
  // weight * x 2 + 2 = 36 bytes per element (the eager figure of the fused/eager switch). fp32
  // residual and weight (autocast training): no casts, 8 + 4 + 8 + weight * x 4 + 4 = 28.
  // bf16 head input with an fp32 weight (Qwen3's q_norm under autocast): 6 + 8 + 4 + 8 + 6 + 2 + 4
  // = 38 (the product promotes to fp32).
  EXPECT_DOUBLE_EQ(hf_rms_norm_bytes(2, 2), 36);
  EXPECT_DOUBLE_EQ(hf_rms_norm_bytes(4, 4), 28);
  EXPECT_DOUBLE_EQ(hf_rms_norm_bytes(2, 4), 38);
}

TEST(WorkHfStack, FullVocabularyLossInFp32) {
  // Qwen3 0.6B, micro-batch 8 x 2048 = 16384 tokens, vocabulary 151936, hidden 1024, fp32 weights.
  // Forward: embedding rows (read 4, write 4: 8·S·h), final RMSNorm (28·S·h), lm_head's input cast
  // (6·S·h) and weight cast (6·V·h), logits.float() (6·S·V) and log_softmax (3 reads and a write
  // of 4: 16·S·V): 42·S·h + 6·V·h + 22·S·V = 704.6e6 + 933.5e6 + 54.765e9 = 56.403e9 bytes.
  // Backward's loss part alone: nll_loss's zero-filled gradient 4, log_softmax's backward 16, the
  // cast back to bf16 6: 26·S·V = 64.72e9 bytes.
  const Model m = find_model("qwen3-0.6b");
  const double S = 16384, h = 1024, V = 151936;
  const HfHeadWork w = hf_head_work(m, hf_job(Mode::kFullFinetune, 2048, 8), one_gpu(8));
  EXPECT_NEAR(w.forward.bytes, 42 * S * h + 6 * V * h + 22 * S * V, 1);
  EXPECT_NEAR(w.forward.bytes, 56.403e9, 0.001e9);
  EXPECT_GE(w.backward.bytes, 26 * S * V);
  EXPECT_NEAR(kHfLossBackwardBytes * S * V, 64.72e9, 0.01e9);
}

TEST(WorkHfStack, SmallLayersWaitForTheHost) {
  // Qwen3 0.6B layer in full training (fp32 weights, autocast). Operations issued from Python: 2
  // RMSNorms x 6, 7 linears, q_norm and k_norm x 8 (bf16 input: two casts more), rotary 10 (5 per
  // q and k), SDPA 1, the output's contiguous 1, SiLU and product 2, 2 residual adds: 51, at 10 us.
  // Kernels launched from C++: 5 casts of the fp32 norm outputs (q, k, v, gate, up), q and k cast
  // for SDPA (fp32 after the norms' fp32 weights), 7 weight casts: 14, at 4 us. Host: 510 + 56 =
  // 566 us. At 64 tokens the GPU needs less (~7 us of weight-bound GEMMs, 20 us of weight casts,
  // ~65 kernels of a few us), so the forward is the host's 566 us; at 16384 tokens the GPU's work
  // is longer and hides the host.
  const Model m = find_model("qwen3-0.6b");
  auto c = topo::load_chassis("hgx-h200", 1);
  const GpuSpec g = gpu_spec(c.node(c.gpus().front()), Precision::kBf16);
  const Job small = hf_job(Mode::kFullFinetune, 64, 1);
  EXPECT_NEAR(hf_layer_work(m, small, one_gpu(1)).forward.host_s, 566e-6, 1e-9);
  EXPECT_NEAR(layer_compute(m, small, one_gpu(1), g).forward(), 566e-6, 1e-9);
  const Job big = hf_job(Mode::kFullFinetune, 2048, 8);
  EXPECT_GT(layer_compute(m, big, one_gpu(8), g).forward(), 2 * 566e-6);
}

TEST(WorkHfStack, FusedAdamWStreamsAtTheElementWiseShare) {
  // torch.optim.AdamW(fused=True) over Qwen3 0.6B's 596,049,920 fp32 parameters (tied embedding
  // counted once): 28 bytes each (read weight, gradient, two moments; write three) at PyTorch's
  // element-wise share of the H200's 4.8 TB/s, 3,478 / 4,800: 28 · 596,049,920 / 3.478e12 =
  // 4.799 ms, plus one 3 us launch: 4.80 ms. (The measured step's optimizer phase was 4.8 ms,
  // data/measured/h200-train-steps-2026-12-01; at the peak it would be 3.48 ms.)
  auto c = topo::load_chassis("hgx-h200", 1);
  const Job j = hf_job(Mode::kFullFinetune, 2048, 8);
  EXPECT_NEAR(framework_traits(j, one_gpu(8)).optimizer_share, 3478.0 / 4800, 1e-12);
  StepModel sm(c, find_model("qwen3-0.6b"), j);
  EXPECT_NEAR(sm.estimate(one_gpu(8)).breakdown.optimizer_s, 28 * 596049920.0 / 3.478e12 + 3e-6,
              1e-6);
}

TEST(WorkHfStack, EachEagerKernelAtItsKindsShare) {
  // The shares (H200, compute-shapes.json "eager", of 4,800 GB/s): add 3,478 GB/s (element-wise:
  // 0.7246), GeLU 2,395 (activation: 0.4990).
  EXPECT_NEAR(eager_kernel_share(EagerKernel::kElementwise), 0.7246, 0.0001);
  EXPECT_NEAR(eager_kernel_share(EagerKernel::kActivation), 0.4990, 0.0001);
  // One Qwen3 0.6B layer (h 1024, q 16 x 128 = 2048, kv 8 x 128 = 1024, f 3072) in full training
  // (fp32 residual and weights under autocast) at micro-batch 8: S = 16384 tokens. Forward bytes
  // per token by kind. Element-wise: two fp32 RMSNorms (28 each: pow 8, mean 4, product 8, weight
  // 8), the casts of the norm output for q, k, v, gate and up (5 x 6), two residual adds (10
  // each): 106·h = 108,544; q_norm and k_norm (bf16 in, fp32 weight: 38), rotary (40) and SDPA's
  // casts (6) over q + kv = 3072: 258,048; the output's contiguous copy (4·q) 8,192; SwiGLU's
  // product (6·f) 18,432: 393,216 x 16384 = 6.4425e9, plus the weight casts (6 bytes x 15.73e6
  // parameters) 0.0944e9: 6.537e9. Activation: silu (4·f) x S = 0.2013e9. In all 6.738e9 bytes, in
  // 65 kernels, 8 of them GEMMs (q, k, v, the attention, o, gate, up, down). GPU time at 4.8 TB/s:
  // 6.537e9 / 3.478e12 + 0.2013e9 / 2.395e12 + 57 x 3 us = 1.8795 + 0.0841 + 0.171 = 2.134 ms
  // (the copy rate for all of it gave 1.830 ms). With the layer's GEMMs long enough to hide the
  // host, the forward grows by exactly that (tolerance 1 us on the hand sum's rounding).
  const Model m = find_model("qwen3-0.6b");
  const Job job = hf_job(Mode::kFullFinetune, 2048, 8);
  const HfLayerWork w = hf_layer_work(m, job, one_gpu(8));
  EXPECT_NEAR(w.forward.bytes, 6.738e9, 0.001e9);
  EXPECT_DOUBLE_EQ(w.forward.kernels, 65);
  EXPECT_DOUBLE_EQ(w.gemm_kernels_f, 8);
  LayerCompute c;
  c.attn_f = c.mlp_f = 1e-3;  // GEMMs and attention: 2 ms, longer than the host's 0.57 ms
  c.attn_b = c.mlp_b = 1e-3;
  hf_eager_layer(c, m, job, one_gpu(8), 4.8e12, 3e-6);
  EXPECT_NEAR(c.mem_f, 2.134e-3, 1e-6);
  EXPECT_NEAR(c.forward(), 2e-3 + c.mem_f, 1e-9);
}

TEST(WorkHfStack, TorchtitanLayerChargesTheSameKernels) {
  // torchtitan's Llama layer (FSDP2, bf16 activations): the same eight-kernel RMSNorm as Hugging
  // Face's on bf16 (36 bytes per element of h: cast 6, pow 8, mean 4, product 8, cast back 6,
  // weight 4, all element-wise), a residual add (6) per block, and SwiGLU as silu(w1 x) * w3 x
  // (separate tensors: silu 4 bytes per element of f as an activation, the product 6 element-wise).
  // Llama 3 8B (h 4096, f 14336) at 2 x 8192 = 16384 tokens on one H100 SXM (W = 3.35 TB/s), no
  // dropout: element-wise (2 x 42·h + 6·f)·S = (344,064 + 86,016) x 16384 = 7.0464e9 bytes at
  // 0.7246·W, activation 4·f·S = 0.9395e9 at 0.4990·W; 20 launches of 3 us (the norm's 8 and the
  // add per block, silu and the product). 7.0464e9 / 2.4274e12 + 0.9395e9 / 1.6717e12 + 60 us =
  // 2.9029 + 0.5620 + 0.060 = 3.525 ms of the layer's forward memory-bound time (flash attention:
  // no softmax pass of its own). Fused, the same layer moves 2 x (4 + 6)·h + 6·f per token at the
  // peak in 3 launches: 2.7515e9 / 3.35e12 + 9 us = 0.830 ms.
  const Model m = find_model("llama3-8b");
  auto c = topo::load_chassis("dgx-h100", 1);
  const GpuSpec g = gpu_spec(c.node(c.gpus().front()), Precision::kBf16);
  ASSERT_NEAR(g.memory_bytes_per_s, 3.35e12, 0.01e12);
  Job j;
  j.mode = Mode::kFullFinetune, j.precision = Precision::kBf16, j.seq = 8192, j.micro_batch = 2;
  j.global_batch = 2, j.recompute = Recompute::kNone, j.framework = Framework::kFsdp;
  j.flash_attention = true;
  EXPECT_NEAR(layer_compute(m, j, one_gpu(2), g).mem_f, 3.525e-3, 0.002e-3);
  j.fused_elementwise = Switch::kOn;
  EXPECT_NEAR(layer_compute(m, j, one_gpu(2), g).mem_f, 0.830e-3, 0.002e-3);
}

TEST(WorkHfStack, LoraActivationsPerLayer) {
  // Llama 3 8B, LoRA, bf16 base, micro-batch 4 x 2048 = 8192 tokens. Per token: two RMSNorms each
  // keep the fp32 cast and the bf16 output (6h each: 12h); SDPA keeps bf16 q, k, v and the output
  // (4q + 4kv) and o_proj's adapter its contiguous input (2q); the MLP gate, SiLU, up and product
  // (8f): 12·4096 + 6·4096 + 4·1024 + 8·14336 = 192,512 bytes; x 8192 = 1.577e9 bytes per layer.
  const Model m = find_model("llama3-8b");
  EXPECT_NEAR(hf_layer_activation_bytes(m, hf_job(Mode::kLora, 2048, 4), one_gpu(4)),
              192512.0 * 8192, 1);
}

TEST(WorkHfStack, FrameworkParsesAndRunsCudnnAttentionOnHopper) {
  EXPECT_EQ(parse_framework("hf"), Framework::kHf);
  EXPECT_STREQ(to_string(Framework::kHf), "hf");
  // PyTorch 2.11's SDPA puts cuDNN attention first on sm90 (bundled cuDNN > 9.15).
  EXPECT_TRUE(framework_traits(hf_job(Mode::kFullFinetune, 2048, 1), Plan{}).hopper_attention);
}

}  // namespace
}  // namespace linkwise::work
