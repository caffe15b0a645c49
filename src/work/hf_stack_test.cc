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

TEST(WorkHfStack, EagerBytesStreamAtTheCopyRate) {
  // The share: the H200's 512 MiB copy, 1,073,741,824 bytes in 264.4 us = 4,061 GB/s of 4,800:
  // 0.846. A Qwen3 0.6B layer at micro-batch 8 (16384 tokens) moves 6.738e9 bytes of element-wise
  // and cast work forward (hf_layer_work) in 65 kernels, 8 of them GEMMs (q, k, v, the attention,
  // o, gate, up, down): 6.738e9 / (0.846 · 4.8e12) + 57 · 3 us = 1.659 + 0.171 = 1.830 ms, against
  // 1.575 ms at the peak. With the layer's GEMMs long enough to hide the host, the forward grows by
  // exactly that (tolerance 1 ns: floating-point sums).
  EXPECT_NEAR(kHfEagerStreamShare, 0.846, 0.0005);
  EXPECT_NEAR(kHfEagerStreamShare * 4.8e12 * 264.4e-6, 1073741824.0, 0.001e9);
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
  const double ef = w.forward.bytes / (kHfEagerStreamShare * 4.8e12) + 57 * 3e-6;
  EXPECT_NEAR(ef, 1.830e-3, 0.001e-3);
  EXPECT_NEAR(c.mem_f, ef, 1e-9);
  EXPECT_NEAR(c.forward(), 2e-3 + ef, 1e-9);
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
