#include "linkwise/work/model.h"

#include <gtest/gtest.h>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"
#include "linkwise/work/compute.h"
#include "linkwise/work/memory.h"
#include "linkwise/work/plan.h"
#include "linkwise/work/step.h"

namespace linkwise::work {
namespace {

constexpr double kExact = 1e-9;  // relative: integer arithmetic done in doubles

TEST(WorkModel, PresetsLoad) {
  auto all = model_presets();
  std::vector<std::string> ids;
  for (const auto& m : all) ids.push_back(m.id);
  for (const char* id : {"llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b",
                         "llama3-405b", "mixtral-8x7b", "gpt3-175b"})
    EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
}

TEST(WorkModel, Llama2_7bParameters) {
  // Hand derivation (h = 4096, f = 11008, 32 layers, V = 32000, MHA, SwiGLU, untied):
  //   attention 4·h² = 67,108,864; MLP 3·h·f = 135,266,304; two norms 2h = 8,192
  //   layer 202,383,360; x 32 = 6,476,267,520; embedding + output 2·V·h = 262,144,000; final norm
  //   4,096 total 6,738,415,616 (the 6.74B Touvron et al. report).
  auto m = find_model("llama2-7b");
  EXPECT_NEAR(m.layer_params(), 202383360.0, 202383360.0 * kExact);
  EXPECT_NEAR(m.total_params(), 6738415616.0, 6738415616.0 * kExact);
}

TEST(WorkModel, Llama3_70bGqaParameters) {
  // h = 8192, 64 heads of 128, 8 KV heads: Q,O 2·h² = 134,217,728; K,V 2·h·1024 = 16,777,216;
  // MLP 3·8192·28672 = 704,643,072; norms 16,384: layer 855,654,400; x80 = 68,452,352,000;
  // embeddings 2·128256·8192 = 2,101,346,304 (+8192): 70,553,706,496 (the 70.6B of the model card).
  auto m = find_model("llama3-70b");
  EXPECT_NEAR(m.total_params(), 70553706496.0, 70553706496.0 * kExact);
}

TEST(WorkModel, Qwen3_8bParameters) {
  // h = 4096, 32 query heads and 8 KV heads of 128, f = 12288, 36 layers, V = 151936, untied:
  // Q,O 2·4096·4096 = 33,554,432; K,V 2·4096·1024 = 8,388,608; MLP 3·4096·12288 = 150,994,944;
  // norms 8,192: layer 192,946,176; x36 = 6,946,062,336 (the model card's 6.95B non-embedding);
  // embeddings 2·151936·4096 = 1,244,659,712, final norm 4,096: 8,190,726,144 (8.2B).
  auto m = find_model("qwen3-8b");
  EXPECT_NEAR(m.layer_params(), 192946176.0, 192946176.0 * kExact);
  EXPECT_NEAR(m.total_params(), 8190726144.0, 8190726144.0 * kExact);
}

TEST(WorkModel, Gpt3ForwardFlopsIncludeAttention) {
  // Per layer and token 24h² + 4sh = 24·12288² + 4·2048·12288 = 3,623,878,656 + 100,663,296;
  // x96 layers = 357,556,027,392; output projection 2·h·V = 2·12288·51200 = 1,258,291,200.
  auto m = find_model("gpt3-175b");
  EXPECT_NEAR(m.attention_core_flops_per_token(2048), 100663296.0, 1);
  EXPECT_NEAR(m.forward_flops_per_token(2048), 358814318592.0, 358814318592.0 * kExact);
}

TEST(WorkModel, ModelFlopsCountTheWholeScoreMatrix) {
  // Model FLOPs per token (the long-sequence rows' metric): forward, and backward twice the
  // forward, 3 x 2 FLOPs a weight of each layer's 4h² + 3hf (h = 4096, f = 11008): 6 ·
  // 202,375,168 = 1,214,251,008; the score matrix and its product with V counted whole, 3 · 4·s·h
  // = 12 · 131072 · 4096 = 6,442,450,944, though the causal kernels run half of it; x32 layers =
  // 245,014,462,464; the output layer 6·h·V = 6 · 4096 · 32000 = 786,432,000: 245,800,894,464.
  auto m = find_model("llama2-7b");
  Job j;
  j.seq = 131072, j.framework = Framework::kMegatron, j.recompute = Recompute::kNone;
  EXPECT_NEAR(model_flops_per_token(m, j), 245800894464.0, 245800894464.0 * kExact);
  // The step reports those FLOPs per GPU-second, whatever the kernels run (Megatron's causal ring
  // steps here: cp 4 on 16 H100s).
  j.precision = Precision::kBf16, j.global_batch = 4, j.micro_batch = 1;
  auto c = topo::load_chassis("dgx-h100", 2);
  StepModel sm(c, m, j);
  StepResult r = sm.simulate(parse_plan("tp=4,dp=1,cp=4,zero=1,mb=1"));
  EXPECT_NEAR(r.model_tflops_per_gpu * 1e12 * r.step_time_s * 16, 245800894464.0 * 4 * 131072,
              245800894464.0 * 4 * 131072 * 1e-9);
}

TEST(WorkModel, MixtralActiveParameters) {
  // 2 of 8 experts active: 32·(attention 41,943,040 + 2·176,160,768 + router 32,768) + V·h
  // 131,072,000 = 12,748,587,008: about 13B active of 47B in all, as Jiang et al. 2024 say.
  auto m = find_model("mixtral-8x7b");
  EXPECT_NEAR(m.active_params() / 1e9, 12.75, 0.01);
  EXPECT_NEAR(m.total_params() / 1e9, 46.70, 0.01);
}

TEST(WorkModel, BadYamlNamesTheField) {
  try {
    parse_model("id: x\nlayers: 2\nhidden: 64\nheads: 3\nffn: 128\nvocab: 100\n", "m.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "m.yaml:4:8: model 'x': 'heads' (3) must divide 'hidden' (64) unless 'head_dim' is given");
  }
  EXPECT_THROW(find_model("llama3-7b"), InputError);
}

TEST(WorkMemory, ActivationsFollowKorthikanti) {
  // GPT-3 175B, s = 2048, b = 1, h = 12288, a = 96, t = 8, unfused attention (as in the paper):
  //   SP + selective: 34·s·b·h/t = 106,954,752 bytes
  //   SP, no recompute: + 5·a·s²·b/t = 251,658,240 -> 358,612,992
  //   SP + full: 2·s·b·h/t = 6,291,456
  auto m = find_model("gpt3-175b");
  Job j;
  j.seq = 2048, j.flash_attention = false, j.recompute = Recompute::kSelective;
  Plan p = parse_plan("tp=8");
  EXPECT_NEAR(layer_activation_bytes(m, j, p), 106954752.0, 1);
  j.recompute = Recompute::kNone;
  EXPECT_NEAR(layer_activation_bytes(m, j, p), 358612992.0, 1);
  j.recompute = Recompute::kFull;
  EXPECT_NEAR(layer_activation_bytes(m, j, p), 6291456.0, 1);
  // Without SP the 10·s·b·h outer part is not divided: (10 + 24/8)·sbh = 13·2048·12288 =
  // 327,155,712.
  j.recompute = Recompute::kSelective;
  p.sp = false;
  EXPECT_NEAR(layer_activation_bytes(m, j, p), 327155712.0, 1);
}

TEST(WorkMemory, RecomputingOneBlockInTwoHalvesTheStore) {
  // GPT-3 175B as above (tp 8, SP, unfused): a checkpointed block keeps its input, 2·s·b·h/t =
  // 6,291,456 bytes; an unrecomputed one everything, 358,612,992. One block in two checkpointed
  // (torchtitan's selective_ac_option 2): the mean block keeps (6,291,456 + 358,612,992) / 2 =
  // 182,452,224; one in four: (6,291,456 + 3 · 358,612,992) / 4 = 270,532,608.
  auto m = find_model("gpt3-175b");
  Job j;
  j.seq = 2048, j.flash_attention = false, j.recompute = Recompute::kFull;
  Plan p = parse_plan("tp=8");
  EXPECT_NEAR(mean_layer_activation_bytes(m, j, p), 6291456.0, 1);
  j.recompute_every = 2;
  EXPECT_NEAR(mean_layer_activation_bytes(m, j, p), 182452224.0, 1);
  j.recompute_every = 4;
  EXPECT_NEAR(mean_layer_activation_bytes(m, j, p), 270532608.0, 1);
  // Only full recomputation is taken one block in N: selective keeps its own store.
  j.recompute = Recompute::kSelective;
  EXPECT_NEAR(mean_layer_activation_bytes(m, j, p), 106954752.0, 1);
}

TEST(WorkMemory, PerOpCheckpointingKeepsTheOddGemmOutputs) {
  // torchtitan's per-op policy on Llama 2 7B (h 4096, 32 heads of 128, 32 KV heads, FFN 11008,
  // gated), seq 4096, micro-batch 1, no TP: per token the block's input (2·h bytes), the attention
  // kernel's output (2·a·d) and its fp32 log-sum-exp (4·a), and the odd GEMMs' outputs at 2
  // bytes: Q 4096 + V 4096 + gate (w1) 11008 + down (w2) 4096 = 23,296 elements, 46,592 bytes.
  // Per token 8,192 + 8,192 + 128 + 46,592 = 63,104 bytes; S = 4096: 258,473,984 bytes a block.
  auto m = find_model("llama2-7b");
  Job j;
  j.seq = 4096, j.recompute = Recompute::kOp;
  Plan p = parse_plan("dp=8");
  EXPECT_NEAR(layer_activation_bytes(m, j, p), 258473984.0, 1);
  Job none = j;
  none.recompute = Recompute::kNone;
  EXPECT_LT(layer_activation_bytes(m, j, p), layer_activation_bytes(m, none, p));
}

TEST(WorkMemory, ModelStatesByZeroStage) {
  // Llama 2 7B, dp = 8 (Rajbhandari et al. 2020, Figure 1): P = 6,738,415,616.
  //   ZeRO-0: 2P + 2P + 12P = 16P;  ZeRO-1: 2P + 2P + 12P/8 = 5.5P;  ZeRO-3: 16P/8 = 2P.
  auto m = find_model("llama2-7b");
  Job j;
  j.seq = 4096, j.global_batch = 8;
  double P = m.total_params();
  auto states = [&](int zero) {
    Plan p;
    p.dp = 8, p.zero = zero;
    auto r = memory_per_gpu(m, j, p, 80e9);
    return r.weights + r.gradients + r.optimizer;
  };
  EXPECT_NEAR(states(0), 16 * P, 16 * P * kExact);
  EXPECT_NEAR(states(1), 5.5 * P, 5.5 * P * kExact);
  EXPECT_NEAR(states(3), 2 * P, 2 * P * kExact);
}

TEST(WorkMemory, PureBf16AndUnshardedGradientsByHand) {
  // Llama 2 7B (P parameters), dp=8 ZeRO-3, global batch 32 of 4096: 4 micro-batches of 1.
  // Mixed precision: 2 + 2 + 12 bytes a parameter over 8 GPUs, 2P. --master-weights bf16: no fp32
  // master, Adam's moments in bf16 (4 bytes): (2 + 2 + 4) / 8 = P. --grad-sync last under fsdp
  // (gradients reduced in fp32): each GPU also holds the whole unsharded gradient, 4P more.
  auto m = find_model("llama2-7b");
  Job j;
  j.seq = 4096, j.global_batch = 32, j.framework = Framework::kFsdp;
  const double P = m.total_params();
  Plan p;
  p.dp = 8, p.zero = 3;
  auto states = [&] {
    auto r = memory_per_gpu(m, j, p, 80e9);
    return r.weights + r.gradients + r.optimizer;
  };
  EXPECT_NEAR(states(), 2 * P, 2 * P * kExact);
  j.fp32_master = Switch::kOff;
  EXPECT_NEAR(states(), P, P * kExact);
  j.grad_sync_last = Switch::kOn;
  EXPECT_NEAR(states(), P + 4 * P, 5 * P * kExact);
  j.global_batch = 8;  // one micro-batch: nothing to hold across micro-batches
  EXPECT_NEAR(states(), P, P * kExact);
}

TEST(WorkMemory, HfHoldsFp32GradientsAcrossMicroBatches) {
  // --framework hf, Llama 2 7B full fine-tune, dp=8 ZeRO-3, 4 micro-batches: the Trainer's no_sync
  // keeps each GPU's whole fp32 gradient (4P) until the last micro-batch, beside its fp32 shard
  // (4P / 8). One micro-batch: the shard alone.
  auto m = find_model("llama2-7b");
  Job j;
  j.mode = Mode::kFullFinetune, j.seq = 4096, j.global_batch = 32, j.framework = Framework::kHf;
  const double P = m.total_params();
  Plan p;
  p.dp = 8, p.zero = 3;
  auto r = memory_per_gpu(m, j, p, 80e9);
  EXPECT_NEAR(r.gradients, 4 * P / 8 + 4 * P, 4.5 * P * kExact);
  EXPECT_NEAR(r.gradients_held, 4 * P, 4 * P * kExact);
  j.global_batch = 8;
  EXPECT_NEAR(memory_per_gpu(m, j, p, 80e9).gradients, 4 * P / 8, 0.5 * P * kExact);
}

TEST(WorkMemory, LoraFreezesTheBase) {
  // LoRA rank 16 on q,k,v,o of Llama 2 7B: per layer 4·16·(4096 + 4096) = 524,288; x32 =
  // 16,777,216.
  auto m = find_model("llama2-7b");
  Job j;
  j.mode = Mode::kLora, j.seq = 4096, j.global_batch = 1;
  EXPECT_DOUBLE_EQ(lora_params(m, j.lora), 16777216.0);
  auto r = memory_per_gpu(m, j, Plan{}, 80e9);
  EXPECT_DOUBLE_EQ(r.gradients, 0);
  EXPECT_DOUBLE_EQ(r.optimizer, 0);
  EXPECT_NEAR(r.weights, 2 * m.total_params(), 1);
  EXPECT_NEAR(r.lora, 16 * 16777216.0, 1);
}

TEST(WorkMemory, LoraAdaptersPerLayerFollowTpAndEp) {
  // Mixtral 8x7B (h 4096, f 14336, 32 heads of 128, 8 KV heads, 8 experts), rank 16 on q, gate, up,
  // down. One layer: q A 16·4096 + B 16·4096 = 131,072; each expert's gate or up A 16·4096 + B
  // 16·14336 = 294,912, down the same transposed: 8·3·294,912 = 7,077,888; together 7,208,960.
  // Under ep = 2 a GPU holds 4 experts and their adapters: 131,072 + 4·3·294,912 = 3,670,016;
  // under tp = 2 every matrix is halved: 3,604,480. Tensors: q's A and B, then A and B of each
  // local expert's gate, up and down: 2 + 2·3·4 = 26 under ep = 2.
  auto m = find_model("mixtral-8x7b");
  Job j;
  j.mode = Mode::kLora, j.lora.rank = 16, j.lora.targets = {"q", "gate", "up", "down"};
  EXPECT_NEAR(layer_trainable_params(m, j, Plan{}), 7208960.0, kExact * 7208960.0);
  EXPECT_NEAR(lora_params(m, j.lora), 32 * 7208960.0, kExact * 32 * 7208960.0);
  Plan ep2 = parse_plan("ep=2"), tp2 = parse_plan("tp=2");
  EXPECT_NEAR(layer_trainable_params(m, j, ep2), 3670016.0, kExact * 3670016.0);
  EXPECT_NEAR(layer_trainable_params(m, j, tp2), 3604480.0, kExact * 3604480.0);
  auto t = lora_parameter_tensors(m, j.lora, ep2);
  ASSERT_EQ(t.size(), 26u);
  EXPECT_DOUBLE_EQ(t[0], 16 * 4096.0);   // q's A
  EXPECT_DOUBLE_EQ(t[3], 16 * 14336.0);  // the first expert's gate B
  // The memory of the adapters follows: 16 bytes each (bf16 weight and gradient, fp32 master and
  // Adam m, v) for 32 layers, 3,670,016·32·16 under ep = 2.
  j.seq = 4096, j.global_batch = 1;
  EXPECT_NEAR(memory_per_gpu(m, j, ep2, 80e9).lora, 16 * 32 * 3670016.0, 1);
}

TEST(WorkCompute, GemmEfficiencyAtTwoShapes) {
  // A100 (312 TFLOP/s bf16, 2,039 GB/s, 108 SMs, η 0.85), efficiency = 2mnk / (t · peak), launch
  // excluded.
  auto c = topo::load_chassis("dgx-a100");
  GpuSpec g = gpu_spec(c.node(c.gpus().front()), Precision::kBf16);
  auto eff = [&](double m, double n, double k) {
    return 2 * m * n * k / ((gemm_time(g, m, n, k) - 3e-6) * g.peak_flops);
  };
  // Llama 2 7B MLP up-projection, 8 sequences of 4096 tokens: 32768 x 11008 x 4096: 128 · 86 =
  // 11,008 tiles in ceil(11008/108) = 102 waves: q = 11008/11016 = 0.99927, efficiency 0.85 ·
  // 0.99927 = 0.8494.
  EXPECT_NEAR(eff(32768, 11008, 4096), 0.85 * 11008 / 11016, 1e-9);
  // A thin one, one 2048-token sequence through a TP=8 shard of the attention output (2048 x 512 x
  // 4096): 8 · 4 = 32 tiles on 108 SMs, fewer than the SMs: split-K s = min(floor(108/32),
  // floor(4096/256)) = 3 ways, 96 CTAs in one wave: q = 96/108, efficiency 0.85 · 0.8889 = 0.7556
  // (its memory side, 2·(2048·4096 + 4096·512 + 2048·512) + 8·2048·512·3 = 48.2 MB at 0.85 of
  // 2,039 GB/s = 27.8 us, stays below the 36.4 us of compute).
  EXPECT_NEAR(eff(2048, 512, 4096), 0.85 * 96 / 108, 1e-9);
}

TEST(WorkCompute, BackwardPerFlopAsForwardAgainstKorthikantiTable4) {
  // The backward is timed at the forward's efficiency: every kernel of a layer twice (input and
  // weight gradients of each GEMM, the unfused attention core's two batched GEMMs and its softmax
  // and dropout, the element-wise work), so with no recomputation backward = 2 x forward.
  // Korthikanti et al. 2022, Table 4, measured one layer of their 22B GPT (h 6144, 64 heads,
  // s 2048, micro-batch 4, t 8, fp16, unfused attention) on DGX A100: forward 7.7 ms, backward
  // 11.9 ms without recomputation, each pass with two TP all-reduces of 4·2048·6144·2 bytes =
  // 100.7 MB (0.79 ms each on the dgx-a100 NVSwitch ring: `linkwise collective dgx-a100
  // --collective all_reduce -b 96M -e 96M`), the backward's overlapped with the weight-gradient
  // GEMMs (section 6.2). The measured compute ratio is then at most 11.9 / (7.7 - 2·0.79) = 1.94,
  // and at least (11.9 - 2·0.79) / (7.7 - 2·0.79) = 1.69: the backward ran no slower per FLOP than
  // the forward, so the model's 2.0 is not optimistic for the backward.
  Model m;
  m.id = m.name = "gpt-22b";
  m.layers = 48, m.hidden = 6144, m.heads = m.kv_heads = 64, m.ffn = 4 * 6144, m.vocab = 51200;
  m.seq = 2048, m.dropout = true;
  Job j;
  j.seq = 2048, j.global_batch = 4, j.precision = Precision::kFp16;
  j.recompute = Recompute::kNone, j.flash_attention = false, j.framework = Framework::kMegatron;
  Plan p = parse_plan("tp=8,sp=off,mb=4");
  auto c = topo::load_chassis("dgx-a100");
  LayerCompute l = layer_compute(m, j, p, gpu_spec(c.node(c.gpus().front()), j.precision));
  EXPECT_NEAR(l.backward() / l.forward(), 2.0, 1e-12);
  const double all_reduce_s = 0.79e-3, fwd_s = 7.7e-3, bwd_s = 11.9e-3;
  EXPECT_GE(l.backward() / l.forward(), bwd_s / (fwd_s - 2 * all_reduce_s));
  // Each pass of the model is 7-8 % faster than measured: forward 5.54 ms of compute + 1.58 ms of
  // all-reduces = 7.12 ms against 7.7; backward 11.07 ms against 11.9 (its all-reduces hidden).
  EXPECT_NEAR(l.forward() + 2 * all_reduce_s, fwd_s, 0.1 * fwd_s);
  EXPECT_NEAR(l.backward(), bwd_s, 0.1 * bwd_s);
}

TEST(WorkMemory, Fp8LoraBaseOf70bModel) {
  // Llama 2 70B, LoRA, tp=8 (pp=1: the one stage holds both embedding tables). Per layer on one
  // GPU: attention 8192·(64·128 + 2·8·128) + 64·128·8192 = 150,994,944 / 8 = 18,874,368; MLP
  // 3·8192·28672 = 704,643,072 / 8 = 88,080,384; norms 2·8192 = 16,384: 106,971,136; 80 layers
  // 8,557,690,880; embedding and output tables 2·32000·8192 / 8 = 65,536,000, final norm 8192:
  // 8,623,235,072 parameters. fp8 base: 1 byte each (8.03 GiB); bf16: 2 (16.06 GiB); NF4 with
  // double quantization: 4.127 bits.
  Model m = find_model("llama2-70b");
  Plan p = parse_plan("tp=8");
  Job j;
  j.mode = Mode::kLora, j.seq = 4096, j.global_batch = 8, j.precision = Precision::kFp8;
  const double params = 8623235072.0;
  EXPECT_NEAR(memory_per_gpu(m, j, p, 80e9).weights, params, 1);
  j.precision = Precision::kBf16;
  EXPECT_NEAR(memory_per_gpu(m, j, p, 80e9).weights, 2 * params, 1);
  j.base_weights = BaseWeights::kNf4;
  EXPECT_NEAR(memory_per_gpu(m, j, p, 80e9).weights, 4.127 / 8 * params, 1);
  // Adapters (rank 16 on q, k, v, o) keep 16 bytes per parameter whatever the base: per layer
  // 16·(8192 + 8192) + 2·16·(8192 + 1024) + 16·(8192 + 8192) = 819,200, / 8 per GPU, x 80 layers =
  // 8,192,000.
  EXPECT_NEAR(memory_per_gpu(m, j, p, 80e9).lora, 16 * 8192000.0, 1);
}

TEST(WorkPlan, ParseAndProblems) {
  auto p = parse_plan("tp=2,dp=4,zero=1,order=dp,tp,pp,mb=2");
  EXPECT_EQ(p.tp, 2);
  EXPECT_EQ(p.dp, 4);
  EXPECT_EQ(p.order, "dp,tp,pp");
  EXPECT_EQ(p.micro_batch, 2);
  EXPECT_EQ(p.str(), "tp=2,pp=1,dp=4,zero=1,mb=2,order=dp,tp,pp");
  EXPECT_THROW(parse_plan("tq=2"), InputError);
  EXPECT_THROW(parse_plan("zero=4"), InputError);
  auto m = find_model("llama2-7b");
  Job j;
  j.global_batch = 8;
  EXPECT_EQ(plan_problem(parse_plan("tp=3"), m, j, 8),
            "tp=3 does not divide the 32 attention heads of llama2-7b");
  EXPECT_EQ(plan_problem(parse_plan("tp=8,dp=2"), m, j, 8),
            "plan tp=8,pp=1,dp=2,zero=0 needs tp·pp·dp = 16 GPUs but the chassis has 8");
  EXPECT_EQ(plan_problem(parse_plan("pp=3"), m, j, 8),
            "pp=3 does not divide the 32 layers of llama2-7b");
  EXPECT_EQ(plan_problem(parse_plan("tp=8"), m, j, 8), "");
}

TEST(WorkCompute, GemmRoofline) {
  GpuSpec g;
  g.peak_flops = 312e12, g.memory_bytes_per_s = 2e12, g.sms = 108, g.gemm_efficiency = 0.85;
  // 8192^3: 32·64 = 2048 tiles of 256x128 in ceil(2048/108) = 19 waves: q = 2048/2052 = 0.99805;
  // t = 2·8192³ / (312e12 · 0.85 · 0.99805) + 3 us = 4.1544 ms.
  EXPECT_NEAR(gemm_time(g, 8192, 8192, 8192),
              2 * 549755813888.0 / (312e12 * 0.85 * 2048 / 2052) + 3e-6, 1e-9);
  // A skinny GEMM is memory-bound: m = 1: bytes 2·(k + k·n + n) for n = k = 8192 = 134,250,496
  // at 0.85 of 2 TB/s -> 79.0 us (64 tiles: split-K ways floor(108/64) = 1, no partial sums).
  EXPECT_NEAR(gemm_time(g, 1, 8192, 8192),
              2 * (8192.0 + 8192.0 * 8192 + 8192) / (2e12 * 0.85) + 3e-6, 1e-9);
  // Its weight in fp8 (1 byte per element of the k x n operand): 2·(k + n) + k·n = 67,141,632
  // bytes -> 39.5 us.
  EXPECT_NEAR(gemm_time(g, 1, 8192, 8192, 1, 1),
              (2 * (8192.0 + 8192) + 8192.0 * 8192) / (2e12 * 0.85) + 3e-6, 1e-9);
  GemmTime p = gemm_parts(g, 1, 8192, 8192);
  EXPECT_TRUE(p.memory_bound());
  EXPECT_NEAR(p.total(), gemm_time(g, 1, 8192, 8192), 1e-15);
}

}  // namespace
}  // namespace linkwise::work
