#include "linkwise/work/validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "linkwise/topo/chassis.h"
#include "linkwise/work/model.h"

namespace linkwise::work {

namespace {

// GPT models as Megatron-LM trains them: FFN 4h, vocabulary 51200, sequence 2048, dropout, no
// gating.
Model gpt(const std::string& id, int layers, int hidden, int heads) {
  Model m;
  m.id = m.name = id;
  m.layers = layers, m.hidden = hidden, m.heads = heads, m.kv_heads = heads, m.ffn = 4 * hidden;
  m.vocab = 51200, m.seq = 2048, m.dropout = true;
  return m;
}

// Narayanan et al. 2021 (SC21, arXiv:2104.04473), Table 1: weak scaling on Selene (DGX A100 80GB, 8
// HDR InfiniBand NICs per node), fp16, full activation recomputation, no sequence parallelism.
ValidationCase narayanan(const std::string& size, int heads, int hidden, int layers, int tp, int pp,
                         int gpus, int batch, double tflops) {
  ValidationCase c;
  c.name = "Narayanan " + size;
  c.source = fmt::format("Narayanan et al. 2021, Table 1, {} row ({} GPUs, t={}, p={})", size, gpus,
                         tp, pp);
  c.metric = "TFLOP/s per GPU";
  c.model = gpt("gpt-" + size, layers, hidden, heads);
  c.chassis = "dgx-a100";
  c.boxes = gpus / 8;
  c.plan.tp = tp, c.plan.pp = pp, c.plan.dp = gpus / (tp * pp), c.plan.sp = false,
  c.plan.micro_batch = 1;
  c.job.seq = 2048, c.job.global_batch = batch, c.job.recompute = Recompute::kFull;
  c.job.flash_attention = false;
  c.job.precision = Precision::kFp16;  // section 5: "mixed precision" fp16 on A100
  c.job.framework = Framework::kMegatron;
  c.measured = tflops;
  return c;
}

// Korthikanti et al. 2022 (arXiv:2205.05198), Table 3 (configurations) and Table 5 (end-to-end
// iteration time): sequence parallelism with selective recomputation ("present work"), and the
// baseline of tensor parallelism with full recomputation.
ValidationCase korthikanti(const std::string& size, int heads, int hidden, int layers, int pp,
                           int gpus, bool present_work, double seconds) {
  ValidationCase c;
  c.name = fmt::format("Korthikanti {} {}", size, present_work ? "SP+selective" : "full recompute");
  c.source = fmt::format("Korthikanti et al. 2022, Tables 3 and 5, {} {}", size,
                         present_work ? "present work" : "full recompute");
  c.metric = "step time s";
  c.model = gpt("gpt-" + size, layers, hidden, heads);
  c.chassis = "dgx-a100";
  c.boxes = gpus / 8;
  c.plan.tp = 8, c.plan.pp = pp, c.plan.dp = gpus / (8 * pp), c.plan.sp = present_work,
  c.plan.micro_batch = size == "22B" ? 4 : 1;  // Table 3: micro-batch 4 for 22B, else 1
  c.job.seq = 2048,
  c.job.global_batch = size == "22B" ? 4 : gpus;  // Table 3: 4 for 22B, else one per GPU
  c.job.recompute = present_work ? Recompute::kSelective : Recompute::kFull;
  c.job.flash_attention = false;
  c.measured = seconds;
  return c;
}

// MPT models as llm-foundry trains them (scripts/train/yamls/pretrain/mpt-*.yaml): FFN 4h,
// vocabulary 50368, tied embeddings, no dropout, no gating.
Model mpt(const std::string& id, int layers, int hidden, int heads) {
  Model m = gpt(id, layers, hidden, heads);
  m.vocab = 50368, m.tied_embeddings = true, m.dropout = false;
  return m;
}

// MPT shapes by llm-foundry size label (scripts/train/yamls/pretrain/mpt-{size}.yaml; mpt-70b.yaml:
// 80 layers, d_model 8192, 64 heads; mpt-3b.yaml 32, 2560, 20; mpt-1b.yaml 24, 2048, 16;
// mpt-760m.yaml 24, 1536, 12; mpt-350m.yaml 24, 1024, 16; mpt-125m.yaml 12, 768, 12), expansion
// ratio 4, vocabulary 50368.
Model mpt_size(const std::string& size) {
  if (size == "70B") return mpt("mpt-70b", 80, 8192, 64);
  if (size == "30B") return mpt("mpt-30b", 48, 7168, 64);
  if (size == "13B") return mpt("mpt-13b", 40, 5120, 40);
  if (size == "7B") return mpt("mpt-7b", 32, 4096, 32);
  if (size == "3B") return mpt("mpt-3b", 32, 2560, 20);
  if (size == "1B") return mpt("mpt-1b", 24, 2048, 16);
  if (size == "760M") return mpt("mpt-760m", 24, 1536, 12);
  if (size == "350M") return mpt("mpt-350m", 24, 1024, 16);
  return mpt("mpt-125m", 12, 768, 12);
}

// Fused attention, FSDP (ZeRO-3 over every GPU, one replica per GPU), bf16, on DGX A100 80GB boxes.
// The measured figure is tokens/s per GPU. recompute: none, or full for "activation checkpointing:
// True" (llm-foundry's FSDP checkpointing is whole blocks; it has no selective mode).
ValidationCase fsdp_case(const std::string& name, const std::string& source, const Model& m,
                         int gpus, int seq, int micro_batch, int global_batch, Recompute rc,
                         double tokens_per_gpu) {
  ValidationCase c;
  c.name = name;
  c.source = source;
  c.metric = "tokens/s per GPU";
  c.model = m;
  c.chassis = "dgx-a100";
  c.boxes = gpus / 8;
  c.plan.dp = gpus, c.plan.zero = 3, c.plan.micro_batch = micro_batch;
  c.job.seq = seq, c.job.global_batch = global_batch, c.job.recompute = rc,
  c.job.flash_attention = true;
  c.job.framework = Framework::kFsdp;
  c.measured = tokens_per_gpu;
  return c;
}

// The tables' runs (MP Mode DEFAULT; image mosaicml/pytorch:2.1.0_cu121-nightly20230827,
// llm-foundry main of the time, Composer 0.16) reduced gradients in bf16: Composer's "DEFAULT" set
// MixedPrecision(param_dtype=bf16, buffer_dtype=bf16) and no reduce_dtype from PR #2047 (March
// 2023) until PR #2628 ("Fixes default precision to use fp32 reduce dtype", October 10 2023,
// composer/trainer/mosaic_fsdp_utils.py), and FSDP reads a missing reduce_dtype as param_dtype
// (pytorch/pytorch PR #90631).
Switch composer_2023_reduce() { return Switch::kOff; }

// MosaicML llm-foundry, scripts/train/benchmarking/README.md, table "A100 80GB with 1600 Gbps
// node-node interconnect (RoCE)": MPT models, 8 GPUs, FULL_SHARD, amp_bf16, Triton/flash attention.
ValidationCase mosaic(const std::string& size, int seq, int mb, int accum, bool ckpt, double tps) {
  ValidationCase c = fsdp_case(
      fmt::format("MPT {} seq {} {}", size, seq, ckpt ? "full recompute" : "no recompute"),
      fmt::format(
          "llm-foundry benchmarking README, A100 80GB table, {} seq {} row (8 GPUs, micro-batch "
          "{}, accumulation {}, checkpointing {})",
          size, seq, mb, accum, ckpt ? "True" : "False"),
      mpt_size(size), 8, seq, mb, mb * accum * 8, ckpt ? Recompute::kFull : Recompute::kNone, tps);
  c.job.framework = Framework::kFsdp1;  // Composer's FSDP (FlatParameter), not FSDP2
  c.job.grad_fp32 = composer_2023_reduce();
  return c;
}

// The A100 80GB table's two MPT-70B rows (32 and 64 GPUs: four and eight dgx-a100 boxes; README at
// commit 061f2c7ce64e), the only rows of that table over more than 8 GPUs. Their Precision column
// reads bf16 and MP Mode PURE (Composer: FSDP MixedPrecision with bf16 parameters, reduction and
// buffers), so gradients are reduced in bf16 as in the table's DEFAULT rows; FULL_SHARD,
// checkpointing True.
ValidationCase mosaic_a100_70b(int gpus, int mb, int accum, double tps) {
  ValidationCase c = mosaic("70B", 2048, mb, accum, true, tps);
  c.name = fmt::format("MPT 70B seq 2048 {} GPUs full recompute", gpus);
  c.source = fmt::format(
      "llm-foundry benchmarking README, A100 80GB table, 70B seq 2048 {} GPUs row (micro-batch {}, "
      "accumulation {}, checkpointing True, bf16 PURE)",
      gpus, mb, accum);
  c.boxes = gpus / 8;
  c.plan.dp = gpus;
  c.job.global_batch = mb * accum * gpus;
  return c;
}

// The same README's table "A100 40GB with 1600 Gbps node-node interconnect (RoCE)" (commit
// 061f2c7ce64e): MPT models from 125M to 70B on 8 to 128 A100 40GB GPUs, FSDP FULL_SHARD,
// Precision bf16, MP Mode PURE (bf16 parameters, reduction and buffers: gradients reduced in bf16,
// as the A100 80GB table's MPT-70B rows read), Triton flash attention (the pretrain yamls'
// attn_impl), the table's micro-batch, accumulation, sequence and checkpointing. The node is
// examples/validation/dgx-a100-320gb-roce.yaml (the README names the GPU and the 1600 Gb/s RoCE
// between nodes; the rest is the DGX A100 320GB layout, stated there), GPUs / 8 boxes; MPT shapes
// by mpt_size.

// A row of one of the README's tables over one or more boxes (GPUs / 8): `label` names the GPU in
// the row's name, `table` the README's table, `extra` what the table's columns add to the source.
ValidationCase mosaic_boxes(const std::string& label, const std::string& table,
                            const std::string& extra, const std::string& chassis,
                            const std::string& size, int seq, int gpus, int mb, int accum,
                            bool ckpt, double tps) {
  ValidationCase c = fsdp_case(
      fmt::format("MPT {} {} seq {} {} GPUs", size, label, seq, gpus),
      fmt::format("llm-foundry benchmarking README, {} table, {} seq {} {} GPUs row (micro-batch "
                  "{}, accumulation {}, checkpointing {}{})",
                  table, size, seq, gpus, mb, accum, ckpt ? "True" : "False", extra),
      mpt_size(size), gpus, seq, mb, mb * accum * gpus, ckpt ? Recompute::kFull : Recompute::kNone,
      tps);
  c.chassis = chassis;
  c.job.framework = Framework::kFsdp1;  // Composer's FSDP (FlatParameter), not FSDP2
  c.job.grad_fp32 = composer_2023_reduce();
  return c;
}

ValidationCase mosaic_a100_40gb(const std::string& size, int seq, int gpus, int mb, int accum,
                                bool ckpt, double tps) {
  ValidationCase c = mosaic_boxes("A100 40GB", "A100 40GB", ", bf16 PURE",
                                  "examples/validation/dgx-a100-320gb-roce.yaml", size, seq, gpus,
                                  mb, accum, ckpt, tps);
  // PyTorch 1.13 (the sweep's image mosaicml/pytorch:1.13.1_cu117): its non-reentrant checkpoint
  // recomputes the whole block; early stop came with 2.1 (pytorch/pytorch PR #96866).
  c.job.recompute_early_stop = Switch::kOff;
  return c;
}

// torchtitan docs/performance.md: Llama on 64 A100 80GB with FSDP2, local batch 1 or 2 (global =
// local x 64), SDPA (flash) attention; WPS is tokens/s per GPU.
ValidationCase titan(const std::string& id, int local_batch, Recompute rc, const std::string& ac,
                     double wps, int recompute_every = 1) {
  Model m = find_model(id);
  ValidationCase c = fsdp_case(
      fmt::format("torchtitan {} {}", id, ac),
      fmt::format(
          "torchtitan docs/performance.md, {} row: 64 A100 80GB, FSDP2, batch {}, activation "
          "checkpointing {}",
          id, local_batch, ac),
      m, 64, m.seq, local_batch, 64 * local_batch, rc, wps);
  // torchtitan of that revision built torch.optim.AdamW with foreach=True (torchtitan/
  // optimizer.py, build_optimizers: fused only under --optimizer.fused, off by default).
  c.job.fused_optimizer = Switch::kOff;
  // "selective layer": selective_ac_option as an integer, ac_freq 2 in the configs of that time
  // (`selective_ac_option = '2'  # 'int' = ac every positive int layer`): every second block
  // wrapped in checkpoint_wrapper (_apply_ac_to_transformer_block), the others not checkpointed.
  c.job.recompute_every = recompute_every;
  return c;
}

// torchtitan benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md (Trainy on WhiteFiber, June
// 2025): Llama 3.1 8B on 4 and 8 hosts of 8 H200 (NVLink, 400 Gb/s CX-7 a GPU: the hgx-h200
// preset), torchtitan e7c0cae with its llama3_8b.toml (seq 8192, per-op selective checkpointing,
// FSDP2 over every GPU), local batch 2, --training.compile, the float8 converter (tensorwise) with
// FSDP float8 all-gathers (--fp8-gather); tokens/s per GPU and memory at step 100 (47.96 and
// 46.97 GiB). The step is compute-bound: the gathers are hidden either way.
ValidationCase trainy_h200(int nodes, double tps) {
  ValidationCase c;
  const int gpus = 8 * nodes;
  c.name = fmt::format("torchtitan llama3-8b fp8 op H200 {} GPUs", gpus);
  c.source = fmt::format(
      "torchtitan benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md, {} nodes row: {} H200, "
      "FSDP2, local batch 2, seq 8192, float8, compile, per-op checkpointing",
      nodes, gpus);
  c.metric = "tokens/s per GPU";
  c.model = find_model("llama3-8b");
  c.chassis = "hgx-h200";
  c.boxes = nodes;
  c.plan.dp = gpus, c.plan.zero = 3, c.plan.micro_batch = 2;
  c.job.seq = 8192, c.job.global_batch = 2 * gpus, c.job.recompute = Recompute::kOp;
  c.job.precision = Precision::kFp8, c.job.flash_attention = true;
  c.job.framework = Framework::kFsdp, c.job.fused_elementwise = Switch::kOn;
  c.job.fp8_gather = true;
  c.measured = tps;
  return c;
}

// PyTorch/IBM blog "Maximizing training throughput using PyTorch FSDP" (pytorch.org/blog/
// maximizing-training/, March 2024), Table 1: Llama 2 shapes in IBM's foundation-model-stack,
// FSDP1 (PyTorch nightlies after 2.2), SDPA FlashAttention-2, bf16 mixed precision with bf16
// reduction (fms-fsdp pretraining/policies/mixed_precision.py `bfSixteen`: param, reduce and
// buffer dtypes bf16), micro-batch 2 at sequence 4096, no accumulation (fms-fsdp's loop steps
// every batch). 7B: no checkpointing, HSDP (shard within a node of 8, replicate across: fms-fsdp
// README and scripts/7b.sh, `sharding_strategy hsdp`); 34B and 70B: every block checkpointed
// (fms-fsdp ac_handler.py, `checkpoint_wrapper` non-reentrant: PyTorch 2.1+'s early stop),
// FULL_SHARD. 13B ("selective": every n-th block, n not given) is not a row. A100 rows on 128 GPUs
// of examples/validation/a100-80gb-8gpu-400g.yaml, H100 rows on 96 of
// examples/validation/h100-8gpu-800g.yaml (both chassis state their assumptions).
ValidationCase ibm_fsdp(const std::string& size, bool h100, double tokens_per_gpu) {
  Model m = size == "7B" ? find_model("llama2-7b") : find_model("llama2-70b");
  if (size == "34B") {
    // fms-fsdp get_model_config "llama2_34b": emb 8192, 64 heads, 8 KV heads, 48 layers, hidden
    // 22016 (the Code Llama 34B shapes), vocabulary 32000.
    m.id = "llama2-34b", m.name = "Llama 2 34B", m.layers = 48, m.ffn = 22016;
  }
  const int gpus = h100 ? 96 : 128;
  const bool ckpt = size != "7B";
  ValidationCase c = fsdp_case(
      fmt::format("IBM FSDP {} {} {} GPUs", size, h100 ? "H100" : "A100", gpus),
      fmt::format("PyTorch/IBM blog 'Maximizing training throughput using PyTorch FSDP' (2024), "
                  "Table 1, {} row, {} ({} GPUs, {} Gb/s between nodes), batch 2, activation "
                  "checkpoint {}",
                  size, h100 ? "H100 80GB" : "A100 80GB", gpus, h100 ? 800 : 400,
                  ckpt ? "Yes" : "No"),
      m, gpus, 4096, 2, 2 * gpus, ckpt ? Recompute::kFull : Recompute::kNone, tokens_per_gpu);
  c.chassis = h100 ? "examples/validation/h100-8gpu-800g.yaml"
                   : "examples/validation/a100-80gb-8gpu-400g.yaml";
  c.job.framework = Framework::kFsdp1;
  c.job.grad_fp32 = Switch::kOff;
  if (size == "7B") c.plan.shard = 8;
  return c;
}

// KempnerForge's reports, by their path in its repository.
constexpr const char* kKempnerMfu = "benchmarks/mfu_scaling/mfu_scaling_2026-04-05.md";
constexpr const char* kKempnerWeak = "benchmarks/weak_scaling_160gpu/README.md";
constexpr const char* kKempnerConfigs = "benchmarks/config_validation/config_validation.md";
constexpr const char* kKempner175b = "benchmarks/175b_360gpu/README.md";

// KempnerInstitute/KempnerForge's H200 benchmarks: Llama-3-shaped models (GQA with 8 KV heads,
// SwiGLU, vocabulary 128256, untied) at sequence 4096 on nodes of four H200 (chassis
// examples/validation/h200-4gpu-nvlink-ndr.yaml, its assumptions stated there), FSDP2
// (`fully_shard` per block, kempnerforge/distributed/parallel.py: bf16 parameters, fp32 gradient
// reduction) under TP within a node where tp > 1, every block checkpointed (non-reentrant:
// PyTorch 2.1+'s early stop), fused AdamW (mfu_bench.sh: --optimizer.fused=true, clipping at norm
// 1.0), torch.compile on (fused element-wise work) except where
// `compiled` is false, cuDNN attention (the SDPA backend the repository's H200 profile,
// benchmarks/profiling/13b_24gpu_profiling.md, shows). The reports' tok/s is the whole job's:
// divided by the GPU count. "7B" is Llama 3 8B's shape (8.03B); "13B" is 14.84B: dim 5120, 40
// layers, 40 heads, FFN 17920 (ffn_dim_multiplier 1.3); "70B" is Llama 3 70B's shape; "175B" is
// 175.0B: dim 12288, 96 layers, 96 heads, 8 KV heads, FFN 39680, untied (benchmarks/175b_360gpu/
// README.md).
ValidationCase kempner(const std::string& size, int gpus, int tp, int mb, int accum,
                       double job_tokens_per_s, const std::string& report, bool compiled = true) {
  Model m = find_model(size == "70B" ? "llama3-70b" : "llama3-8b");
  if (size == "13B") {
    m.id = "kempnerforge-13b", m.name = "KempnerForge 13B";
    m.layers = 40, m.hidden = 5120, m.heads = 40, m.kv_heads = 8, m.ffn = 17920;
  }
  if (size == "175B") {
    m.id = "kempnerforge-175b", m.name = "KempnerForge 175B";
    m.layers = 96, m.hidden = 12288, m.heads = 96, m.kv_heads = 8, m.ffn = 39680;
  }
  const int dp = gpus / tp;
  ValidationCase c;
  // The weak-scaling and config-validation reports ran configurations of the MFU sweep again
  // (13B TP=4 on 8 GPUs: 29,860 tok/s where the sweep had 27,345; 70B TP=4 on 32: 18,688 and
  // 17,769): their rows are named apart.
  const std::string tag = report == kKempnerWeak      ? " (weak scaling)"
                          : report == kKempnerConfigs ? " (config validation)"
                                                      : "";
  c.name = fmt::format("KempnerForge {} H200 {} GPU{}{}{}", size, gpus, gpus > 1 ? "s" : "",
                       tp > 1 ? fmt::format(" tp={}", tp) : std::string(), tag);
  c.source = fmt::format(
      "KempnerInstitute/KempnerForge {}, {} row ({} GPUs, {}, batch {} x accumulation {}, "
      "full checkpointing, compile {}; {} tok/s for the job)",
      report, size, gpus,
      tp > 1 ? fmt::format("TP={} + FSDP={}", tp, dp) : fmt::format("FSDP={}", dp), mb, accum,
      compiled ? "on" : "off", job_tokens_per_s);
  c.metric = "tokens/s per GPU";
  c.model = m;
  c.chassis = "examples/validation/h200-4gpu-nvlink-ndr.yaml";
  c.boxes = std::max(1, gpus / 4);
  c.plan.tp = tp, c.plan.dp = dp, c.plan.zero = dp > 1 ? 3 : 0, c.plan.micro_batch = mb;
  c.job.seq = 4096, c.job.global_batch = mb * accum * dp, c.job.recompute = Recompute::kFull;
  c.job.flash_attention = true;
  c.job.framework = Framework::kFsdp;
  c.job.cudnn_attention = Switch::kOn;
  c.job.fused_elementwise = compiled ? Switch::kOn : Switch::kDefault;
  // The model is cast to bf16 and stepped in place: bf16 weights and AdamW moments, no fp32
  // master (build_parallel_model: `.to(dtype=param_dtype)`; the 7B's 80.7 GB on one GPU is under
  // the 128 GB its 8.03B parameters would take at 16 bytes each).
  c.job.fp32_master = Switch::kOff;
  // Gradients reduced at the last micro-batch only (scripts/train.py: maybe_no_sync,
  // kempnerforge/training/grad.py: set_requires_gradient_sync(False) before the others; the
  // 175B report: "FSDP2 keeps unsharded fp32 grads across microbatches").
  c.job.grad_sync_last = Switch::kOn;
  // Its TP plan (kempnerforge/distributed/tensor_parallel.py, _build_block_tp_plan) makes q, k, v,
  // gate and up each a ColwiseParallel with input_layouts Shard(1): each gathers the sequence-
  // parallel input itself (no PrepareModuleInput), and reduce-scatters its own input gradient.
  c.job.tp_per_projection = Switch::kOn;
  c.measured = job_tokens_per_s / gpus;
  return c;
}

ValidationCase kempner175b() {
  ValidationCase c = kempner("175B", 360, 4, 8, 1, 154523, kKempner175b);
  c.job.fp32_master = Switch::kOn;
  return c;
}

// Narayanan et al. 2021, Table 2 (section 5.2, Figure 10): GPT-3 175B (96 layers, h 12288, 96
// heads) at global batch 1536 on 384, 768 and 1536 A100s, PTD-P (model-parallel size 96: t=8, p=12,
// micro-batch 1) against ZeRO-3 without model parallelism (DeepSpeed, micro-batch 4, 2, 1: one
// micro-batch per step). fp16, full recomputation, as Table 1.
ValidationCase table2(bool zero3, int gpus, double tflops) {
  ValidationCase c = narayanan("175B", 96, 12288, 96, 8, 12, gpus, 1536, tflops);
  c.name = fmt::format("Narayanan T2 {} {}", zero3 ? "ZeRO-3" : "PTD-P", gpus);
  c.source = fmt::format("Narayanan et al. 2021, Table 2, {} 174.6B row, {} GPUs",
                         zero3 ? "ZeRO-3 without model parallelism" : "PTD Parallelism", gpus);
  if (zero3) {
    c.plan = Plan{};
    c.plan.dp = gpus, c.plan.zero = 3, c.plan.micro_batch = 1536 / gpus;
    c.job.framework = Framework::kDeepSpeed03;  // the DeepSpeed of the paper (April 2021)
  }
  return c;
}

// NeMo Framework 24.12 performance summary
// (docs.nvidia.com/nemo-framework/user-guide/24.12/nemotoolkit/
// performance/performance_summary.html), "Finetuning" table: LoRA on DGX H100 at FP8, SQuAD packed
// to 4096 tokens, global batch 32, micro-batch 1; NeMo's LoRA defaults
// (nemo/collections/llm/peft/lora.py: rank 32 on linear_qkv, linear_proj, linear_fc1, linear_fc2).
// Megatron-core underneath: fused kernels.
ValidationCase nemo_lora(const std::string& id, int gpus, int tp, int pp, double tokens_per_gpu) {
  ValidationCase c;
  c.name = fmt::format("NeMo LoRA {} fp8", id);
  c.source = fmt::format(
      "NeMo 24.12 performance summary, Finetuning table, {} LoRA row ({} H100, TP {}, PP {})", id,
      gpus, tp, pp);
  c.metric = "tokens/s per GPU";
  c.model = find_model(id);
  c.chassis = "dgx-h100";
  c.boxes = std::max(1, gpus / 8);
  c.plan.tp = tp, c.plan.pp = pp, c.plan.dp = gpus / (tp * pp), c.plan.micro_batch = 1;
  c.job.mode = Mode::kLora, c.job.precision = Precision::kFp8, c.job.seq = 4096,
  c.job.global_batch = 32;
  // No activation recomputation: the recipes set none (nemo/collections/llm/recipes/llama2_7b.py,
  // finetune_recipe over default_finetune_recipe; the 13B and 70B recipes are built the same way),
  // and Megatron-core's TransformerConfig defaults recompute_granularity to None.
  c.job.recompute = Recompute::kNone;
  c.job.lora.rank = 32, c.job.lora.targets = {"q", "k", "v", "o", "gate", "up", "down"};
  c.job.framework = Framework::kMegatron;
  c.measured = tokens_per_gpu;
  return c;
}

// The same README, table "H100 80GB BF16": MPT models on H100 boxes (dgx-h100), FULL_SHARD,
// amp_bf16, at 8, 32 and 64 GPUs. MPT-70B: llm-foundry's mpt-70b.yaml (80 layers, d_model 8192, 64
// heads).
ValidationCase mosaic_h100(const std::string& size, int seq, int gpus, int mb, int accum, bool ckpt,
                           double tps) {
  return mosaic_boxes("H100", "H100 80GB BF16", "", "dgx-h100", size, seq, gpus, mb, accum, ckpt,
                      tps);
}

// The same README, table "H100 80GB FP8": Composer's amp_fp8 (Transformer Engine's fp8_autocast
// around the model's linear layers), otherwise as the BF16 table's rows.
ValidationCase mosaic_h100_fp8(const std::string& size, int seq, int mb, int accum, bool ckpt,
                               double tps) {
  ValidationCase c =
      mosaic_boxes("H100 fp8", "H100 80GB FP8", "", "dgx-h100", size, seq, 8, mb, accum, ckpt, tps);
  c.job.precision = Precision::kFp8;
  return c;
}

// NeMo AutoModel performance summary (docs.nvidia.com/nemo/automodel/latest/performance/
// performance-summary.md), "Fine-Tuning (LoRA) Performance" table, DGX-H100, BF16: PyTorch FSDP2
// over Hugging Face models (not Megatron-core), LoRA dim 16 on every linear layer
// (examples/llm_finetune/llama3_1/llama3_1_8b_peft_benchmark.yaml; for 70B the summary's
// examples/llm_finetune/llama3_3/custom_llama3_3_70b_instruct_peft_benchmark.yaml and its _2nodes
// twin: TP 2, sequence parallel, FSDP2 over the rest), mock data of 4096 tokens, global batch 32,
// local batch 2. The 70B recipes checkpoint activations (full recomputation); the 8B one does not.
// Metric: the table's tokens/s per GPU.
ValidationCase automodel_lora(const std::string& id, int gpus, int tp, Recompute rc,
                              double tokens_per_gpu) {
  ValidationCase c;
  c.name = fmt::format("AutoModel LoRA {} {} GPUs", id, gpus);
  c.source = fmt::format(
      "NeMo AutoModel performance summary, Fine-Tuning (LoRA) table, DGX-H100 BF16, {} row ({} "
      "GPUs, TP {}, FSDP {})",
      id, gpus, tp, gpus / tp);
  c.metric = "tokens/s per GPU";
  c.model = find_model(id);
  c.chassis = "dgx-h100";
  c.boxes = std::max(1, gpus / 8);
  c.plan.tp = tp, c.plan.dp = gpus / tp, c.plan.zero = gpus / tp > 1 ? 3 : 0,
  c.plan.micro_batch = 2;
  c.job.mode = Mode::kLora, c.job.precision = Precision::kBf16, c.job.seq = 4096,
  c.job.global_batch = 32, c.job.recompute = rc;
  c.job.lora.rank = 16, c.job.lora.targets = {"q", "k", "v", "o", "gate", "up", "down"};
  c.job.framework = Framework::kFsdp;
  // The 70B recipes set enable_async_tensor_parallel (torch._inductor micro-pipeline TP) with TP 2
  // and enable_compile (the compiled layers fuse their element-wise work).
  if (tp > 1) c.job.tp_overlap = Switch::kOn, c.job.fused_elementwise = Switch::kOn;
  // The 8B recipe (TP 1, force_hf) would get Liger's fused kernels from from_pretrained's
  // use_liger_kernel=True only where liger_kernel imports; it is in the repository's dev
  // dependency group alone (pyproject.toml), so the row keeps the fsdp default, eager.
  // FSDP2Manager's MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=bf16): 16-bit gradients
  // (nemo_automodel/components/distributed/fsdp2.py).
  c.job.grad_fp32 = Switch::kOff;
  c.measured = tokens_per_gpu;
  return c;
}

// Training steps measured on the target machine, one H200 SXM
// (data/measured/h200-train-steps-2026-12-01, scripts/gpu-train-step.py): Hugging Face transformers
// 5.17 in eager PyTorch 2.11, fp32 weights under autocast bf16 (full) or a bf16 base with fp32
// rank-16 adapters on all seven matrices (LoRA), SDPA attention, fused AdamW, the loss over the
// whole vocabulary, no recomputation; one micro-batch per step. Metric: tokens/s of the one GPU.
ValidationCase hf_h200(const std::string& id, bool lora, int seq, int mb, double tokens_per_s) {
  ValidationCase c;
  c.name = fmt::format("HF H200 {} {} seq {} mb {}", id, lora ? "LoRA r16" : "full", seq, mb);
  c.source = fmt::format(
      "data/measured/h200-train-steps-2026-12-01, {} {} seq {} micro-batch {} (transformers 5.17 "
      "eager, one H200)",
      id, lora ? "LoRA r16" : "full", seq, mb);
  c.metric = "tokens/s per GPU";
  c.model = find_model(id);
  c.chassis = "hgx-h200";
  c.plan.micro_batch = mb;
  c.job.mode = lora ? Mode::kLora : Mode::kFullFinetune;
  c.job.precision = Precision::kBf16, c.job.seq = seq, c.job.global_batch = mb;
  c.job.recompute = Recompute::kNone;
  if (lora) c.job.lora.rank = 16, c.job.lora.targets = {"q", "k", "v", "o", "gate", "up", "down"};
  c.job.framework = Framework::kHf;
  c.measured = tokens_per_s;
  return c;
}

// NeMo long-sequence performance (NVIDIA/NeMo docs/source/performance/performance_long_sequence.md,
// "LLAMA2-7B (FP8)": NeMo 24.03.01 container, DGX-H100): Llama 2 7B pre-training in fp8 with
// context parallelism (Megatron-core, Transformer Engine's ring attention), the table's TP, PP, DP
// and CP. Metric: the table's TFLOPS per GPU, NeMo's model FLOPs (nemo/collections/common/parts/
// perf_metrics_utils.py, llama2: per token and layer h²·(12 + 12·g/a) + 18hf + 12·s·h, i.e.
// 6·(4h² + 3hf) + 12·s·h for Llama 2 7B (32 query groups of 32 heads), with attention counted
// whole, plus 6hV per token: model_flops_per_token's count). Neither the batch nor recomputation is
// in the table: the companion B200 table of the same page keeps 4,194,304 tokens per global batch
// at every length, taken here (with pp=1 it sets only how often the gradient all-reduce and the
// optimizer run); no activation checkpointing (NeMo's default); micro-batch 1; distributed
// optimizer (NeMo's default: zero=1 over dp·cp). The table's rows of 4K-16K run without CP (its
// "With-CP" columns give CP 1 and the plan); at 8K with PP 2 the batch also sets the pipeline
// bubble: 128 micro-batches per pipeline, under 1 %. Attention: FlashAttention-2 (--attention
// flash). The launcher of that container sets NVTE_FUSED_ATTN: 0 ("Disable cudnn FA until we've
// tested it more") in the env_vars of every job (NVIDIA/NeMo-Framework-Launcher
// launcher_scripts/conf/config.yaml, at the commit whose `container:` is
// nvcr.io/nvidia/nemo:24.03.01.framework), so Transformer Engine falls back to flash-attn,
// Ampere-style kernels on the H100. The page names the container, not the launch: the launcher's
// defaults are taken as the runs'.
ValidationCase nemo_long_seq(int seq_k, int tp, int pp, int dp, int cp, double tflops) {
  ValidationCase c;
  const int gpus = tp * pp * dp * cp;
  c.name = fmt::format("NeMo Llama 2 7B fp8 seq {}K cp={}", seq_k, cp);
  c.source = fmt::format(
      "NeMo long-sequence performance, LLAMA2-7B (FP8) table, {}K row ({} H100, TP {}, PP {}, DP "
      "{}, CP {}; NeMo 24.03.01 container)",
      seq_k, gpus, tp, pp, dp, cp);
  c.metric = "model TFLOP/s per GPU";
  c.model = find_model("llama2-7b");
  c.chassis = "dgx-h100";
  c.boxes = std::max(1, gpus / 8);
  c.plan.tp = tp, c.plan.pp = pp, c.plan.dp = dp, c.plan.cp = cp, c.plan.zero = 1,
  c.plan.micro_batch = 1;
  c.job.seq = seq_k * 1024, c.job.global_batch = 4194304 / c.job.seq;
  c.job.precision = Precision::kFp8, c.job.recompute = Recompute::kNone;
  c.job.framework = Framework::kMegatron;
  c.job.cudnn_attention = Switch::kOff;
  c.measured = tflops;
  return c;
}

// NeMo Framework 24.07 performance summary, "Pretraining" table (NVIDIA/NeMo
// docs/source/performance/performance_summary.md at commit 070a0bb168d4; container NeMo 24.07,
// DGX-H100, FP8): Megatron-core pre-training with the table's GPUs, GBS, MBS, sequence, TP, PP, CP
// and VP; metric: the table's tokens/s per GPU. What the table leaves out is taken from the NeMo
// Framework Launcher's training configs the runs name (launcher_scripts/conf/training/llama/
// llama2_70b.yaml at 0446d2c, llama3_70b.yaml at 3dd3561, llama3_8b.yaml at 14860f7,
// gpt3/175b.yaml and 20b.yaml at 056a90e, gpt3/5b.yaml at 00af8f2, nemotron/nemotron_8b.yaml and
// nemotron_22b.yaml at 089b90e, nemotron_340b.yaml at 3be81fc) and its H100 fp8 example scripts
// (examples/training/{llama,gpt,nemotron}/h100/*_fp8*.sh): distributed optimizer
// (distributed_fused_adam / mcore_distributed_optim: zero=1 over the data ranks) with
// overlap_grad_sync on; sequence parallelism where TP > 1; no activation checkpointing for Llama,
// Nemotron and GPT-3 5B (activations_checkpoint_granularity: null), selective for GPT-3 20B and
// 175B; userbuffers TP overlap where the config sets ub_tp_comm_overlap (llama3_70b, gpt3/20b and
// 175b, the three Nemotrons; not llama2_70b, gpt3/5b); gradients reduced in bf16 where the script
// adds optim.grad_sync_dtype=bf16 or the config sets it (Llama 3 8B and 70B, Llama 2 70B, GPT-3 5B,
// 20B and 175B, Nemotron 340B), else the default fp32. Attention: the framework's default (cuDNN
// through Transformer Engine); the 24.07 runs' NVTE_FUSED_ATTN is not stated.
ValidationCase nemo_pretrain(const std::string& label, const Model& m, int gpus, int gbs, int mbs,
                             int seq, int tp, int pp, int cp, int vp, Recompute rc, bool ub_overlap,
                             bool grad_bf16, double tokens_per_gpu) {
  ValidationCase c;
  c.name = fmt::format("NeMo 24.07 {} fp8 {} GPUs", label, gpus);
  c.source = fmt::format(
      "NeMo 24.07 performance summary, Pretraining table, {} row ({} H100, GBS {}, MBS {}, seq {}, "
      "TP {}, PP {}, CP {}, VP {})",
      label, gpus, gbs, mbs, seq, tp, pp, cp, vp);
  c.metric = "tokens/s per GPU";
  c.model = m;
  c.chassis = "dgx-h100";
  c.boxes = std::max(1, gpus / 8);
  c.plan.tp = tp, c.plan.pp = pp, c.plan.cp = cp, c.plan.dp = gpus / (tp * pp * cp),
  c.plan.vpp = vp, c.plan.zero = 1, c.plan.sp = tp > 1, c.plan.micro_batch = mbs;
  c.job.precision = Precision::kFp8, c.job.seq = seq, c.job.global_batch = gbs,
  c.job.recompute = rc;
  c.job.framework = Framework::kMegatron;
  c.job.grad_overlap = Switch::kOn;
  if (ub_overlap) c.job.tp_overlap = Switch::kOn;
  if (grad_bf16) c.job.grad_fp32 = Switch::kOff;
  c.measured = tokens_per_gpu;
  return c;
}

// Megatron-Bridge's performance summary (NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md,
// "25.11 NeMo Container", and docs/performance-summary-archive.md, "26.02 NeMo Container",
// Pre-Training Performance, DGX-H100): Llama 3 70B, FP8 (current scaling), 64 GPUs, MBS 1, sequence
// 8192, FSDP 0, TP 4, PP 8, CP 1, VP 5, GBS 128 (25.11) or 256 (26.02); their tokens/s per GPU.
// What the tables leave out is the recipe's
// (scripts/performance/configs/llama/llama3_llm_pretrain.py and llama3_workload_base_configs.py,
// LLAMA3_70B_PRETRAIN_CONFIG_H100_FP8_CS_V1 and _V2, the GBS 128 and 256 variants): gradients
// reduced in bf16 (`grad_reduce_in_fp32 = False`), the userbuffers TP overlap of
// `userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192`, no recomputation named, Megatron-core's
// distributed optimizer (zero=1) and sequence parallelism with TP. The tables' 405B rows (PP 8 x VP
// 8 over 126 layers: an uneven split the model does not take) and 8B rows (FSDP in the tables,
// recompute_num_layers 5 and no FSDP in the recipe read) are not rows; 25.09's 70B row (1,619 at
// GBS 128) is 25.11's configuration again.
ValidationCase bridge_h100_70b(const std::string& release, int gbs, double tokens_per_gpu) {
  ValidationCase c;
  c.name = fmt::format("Megatron-Bridge {} Llama 3 70B fp8 64 H100 GBS {}", release, gbs);
  c.source = fmt::format(
      "Megatron-Bridge performance summary{}, {} NeMo Container, DGX-H100, LLAMA3_70B row (64 "
      "GPUs, FP8, GBS {}, MBS 1, seq 8192, FSDP 0, TP 4, PP 8, CP 1, VP 5)",
      release == "25.11" ? "" : " archive", release, gbs);
  c.metric = "tokens/s per GPU";
  c.model = find_model("llama3-70b");
  c.chassis = "dgx-h100";
  c.boxes = 8;
  c.plan.tp = 4, c.plan.pp = 8, c.plan.dp = 2, c.plan.vpp = 5, c.plan.zero = 1, c.plan.sp = true,
  c.plan.micro_batch = 1;
  c.job.precision = Precision::kFp8, c.job.seq = 8192, c.job.global_batch = gbs,
  c.job.recompute = Recompute::kNone;
  c.job.framework = Framework::kMegatron;
  c.job.grad_overlap = Switch::kOn;
  c.job.tp_overlap = Switch::kOn;
  c.job.grad_fp32 = Switch::kOff;
  c.measured = tokens_per_gpu;
  return c;
}

// The same summary's DGX-B200 table, 25.11: Llama 3 8B, FP8 current scaling, 8 GPUs, GBS 128, MBS
// 2, sequence 8192, TP 1, PP 1, CP 1, 30,624 tokens/s per GPU; the recipe
// (LLAMA3_8B_PRETRAIN_CONFIG_B200_FP8_CS_V1): micro-batch 2, CUDA graphs of the whole iteration, no
// recomputation, bf16 gradient reduction; the chassis examples/dgx-b200.yaml.
ValidationCase bridge_b200_8b() {
  ValidationCase c;
  c.name = "Megatron-Bridge 25.11 Llama 3 8B fp8 8 B200";
  c.source =
      "Megatron-Bridge performance summary, 25.11 NeMo Container, DGX-B200 table, LLAMA3_8B row "
      "(8 GPUs, FP8-CS, GBS 128, MBS 2, seq 8192, FSDP 0, TP 1, PP 1, CP 1)";
  c.metric = "tokens/s per GPU";
  c.model = find_model("llama3-8b");
  c.chassis = "examples/dgx-b200.yaml";
  c.plan.dp = 8, c.plan.zero = 1, c.plan.micro_batch = 2;
  c.job.precision = Precision::kFp8, c.job.seq = 8192, c.job.global_batch = 128,
  c.job.recompute = Recompute::kNone;
  c.job.framework = Framework::kMegatron;
  c.job.grad_overlap = Switch::kOn;
  c.job.grad_fp32 = Switch::kOff;
  c.measured = 30624;
  return c;
}

// GPT-3 175B as NeMo trains it (launcher_scripts/conf/training/gpt3/175b.yaml): 96 layers, hidden
// 12288, 96 heads, FFN 4h, hidden_dropout 0.1, GPT-2 BPE vocabulary (50,257) padded to a multiple
// of make_vocab_size_divisible_by 128 x TP 4 = 512: 50,688.
Model nemo_gpt3_175b() {
  Model m = find_model("gpt3-175b");
  m.vocab = 50688;
  return m;
}

// GPT-3 5B and 20B as NeMo trains them (launcher_scripts/conf/training/gpt3/5b.yaml: 24 layers,
// hidden 4096, 32 heads; 20b.yaml: 44, 6144, 48; FFN 4h, dropout 0.1), GPT-2 BPE vocabulary padded
// to 128 x TP: 50,304 at TP 1, 50,432 at TP 2.
Model nemo_gpt3(const std::string& id, int layers, int hidden, int heads, int vocab) {
  Model m = gpt(id, layers, hidden, heads);
  m.vocab = vocab;
  return m;
}

// Nemotron as NeMo trains it (launcher_scripts/conf/training/nemotron/nemotron_{8b,22b,340b}.yaml):
// squared-ReLU MLP of two matrices (not gated), no bias, no dropout, sequence 4096; 8B 32 layers,
// hidden 4096, 32 heads, FFN 16384; 22B 40, 6144, 48, 24576; 340B 96, 18432, 96 heads over 8 query
// groups, FFN 4h = 73728. Vocabulary 256,000 (the 8B's and the 340B's Hugging Face configs,
// thhaus/nemotron3-8b and mgoin/Nemotron-4-340B-Base-hf config.json: vocab_size 256000; the 22B's
// config names no tokenizer and is taken to share it).
Model nemotron(const std::string& id, int layers, int hidden, int heads, int kv_heads, int ffn) {
  Model m;
  m.id = m.name = id;
  m.layers = layers, m.hidden = hidden, m.heads = heads, m.kv_heads = kv_heads, m.ffn = ffn;
  m.vocab = 256000, m.seq = 4096;
  return m;
}

ValidationCase open_case(ValidationCase c) {
  c.open = true;
  return c;
}

// A row whose name would repeat another's (same model and sequence, another micro-batch).
ValidationCase mb_named(ValidationCase c) {
  c.name += fmt::format(" mb {}", c.plan.micro_batch);
  return c;
}

// Narayanan et al. eq. 3: FLOPs per iteration with full recomputation, 96·B·s·l·h²·(1 + s/6h +
// V/16lh).
double narayanan_flops(const Model& m, const Job& j) {
  double B = j.global_batch, s = j.seq, l = m.layers, h = m.hidden, V = m.vocab;
  return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}

}  // namespace

std::vector<ValidationCase> validation_cases() {
  return {
      narayanan("1.7B", 24, 2304, 24, 1, 1, 32, 512, 137),
      narayanan("3.6B", 32, 3072, 30, 2, 1, 64, 512, 138),
      narayanan("7.5B", 32, 4096, 36, 4, 1, 128, 512, 142),
      narayanan("18.4B", 48, 6144, 40, 8, 1, 256, 1024, 135),
      narayanan("39.1B", 64, 8192, 48, 8, 2, 512, 1536, 138),
      narayanan("76.1B", 80, 10240, 60, 8, 4, 1024, 1792, 140),
      narayanan("145.6B", 96, 12288, 80, 8, 8, 1536, 2304, 148),
      korthikanti("22B", 64, 6144, 48, 1, 8, true, 1.10),
      korthikanti("22B", 64, 6144, 48, 1, 8, false, 1.42),
      korthikanti("175B", 96, 12288, 96, 8, 64, true, 13.75),
      korthikanti("175B", 96, 12288, 96, 8, 64, false, 18.13),
      korthikanti("530B", 128, 20480, 105, 35, 280, true, 37.83),
      korthikanti("530B", 128, 20480, 105, 35, 280, false, 49.05),
      korthikanti("1T", 160, 25600, 128, 64, 512, true, 71.49),
      korthikanti("1T", 160, 25600, 128, 64, 512, false, 94.42),
      table2(false, 384, 153),
      table2(false, 768, 149),
      table2(false, 1536, 141),
      table2(true, 384, 144),
      table2(true, 768, 88),
      table2(true, 1536, 44),
      nemo_lora("llama2-7b", 8, 1, 1, 24824),
      nemo_lora("llama2-13b", 8, 1, 1, 14629),
      nemo_lora("llama2-70b", 8, 2, 4, 2621),
      automodel_lora("llama3-8b", 1, 1, Recompute::kNone, 12472.87),
      automodel_lora("llama3-70b", 8, 2, Recompute::kFull, 1091.85),
      automodel_lora("llama3-70b", 16, 2, Recompute::kFull, 984.85),
      mosaic("7B", 2048, 6, 2, false, 4641),
      mosaic("13B", 2048, 2, 3, false, 2262),
      mosaic("7B", 4096, 16, 2, true, 3684),
      mosaic("30B", 2048, 3, 21, true, 916),
      // Open since the recomputation stops early (+20.5 %, +18.1 %): MPT-70B at micro-batch 2 and 8
      // carries a cost per micro-batch the model lacks (docs/VALIDATION.md, "Early-stopping
      // recomputation").
      open_case(mosaic_a100_70b(32, 2, 16, 373)),
      open_case(mosaic_a100_70b(64, 8, 4, 410)),
      // The A100 80GB table's other rows (README at commit 061f2c7ce64e): the small models (MPT-3B,
      // 1B, 760M, 350M, 125M) at every sequence length it gives, 8 GPUs each, in its order; MPT
      // shapes as the A100 40GB rows take them (mpt_size). MPT-125M has two sequence-2048 rows
      // (micro-batch 40 and 32): the second is named by its micro-batch. Open, over 15 %: MPT-760M
      // at 1,024 and 512 (+27.1 %, +35.3 %), which measure below the same model's sequence-2048 row
      // (MFU 47.8 and 45.1 against 56.9 %).
      mosaic("3B", 65536, 1, 2, true, 1767),
      mosaic("3B", 32768, 3, 6, true, 3029),
      mosaic("3B", 16384, 1, 6, false, 5529),
      mosaic("3B", 8192, 3, 6, false, 7695),
      mosaic("3B", 4096, 5, 6, false, 9457),
      mosaic("3B", 2048, 10, 2, false, 10811),
      mosaic("3B", 1024, 20, 6, false, 11580),
      mosaic("3B", 512, 40, 6, false, 12127),
      mosaic("1B", 65536, 1, 2, true, 3044),
      mosaic("1B", 32768, 1, 4, false, 6275),
      mosaic("1B", 16384, 2, 4, false, 9956),
      mosaic("1B", 8192, 3, 4, false, 13814),
      mosaic("1B", 4096, 7, 4, false, 17807),
      mosaic("1B", 2048, 14, 4, false, 20513),
      mosaic("1B", 1024, 18, 4, false, 22112),
      mosaic("1B", 512, 56, 4, false, 23148),
      mosaic("760M", 65536, 1, 2, true, 4143),
      mosaic("760M", 32768, 1, 2, false, 8802),
      mosaic("760M", 16384, 3, 2, false, 14274),
      mosaic("760M", 8192, 6, 2, false, 20933),
      mosaic("760M", 4096, 12, 2, false, 27351),
      mosaic("760M", 2048, 24, 2, false, 32434),
      open_case(mosaic("760M", 1024, 48, 2, false, 29765)),
      open_case(mosaic("760M", 512, 96, 2, false, 29446)),
      mosaic("350M", 65536, 1, 2, false, 7524),
      mosaic("350M", 32768, 2, 2, false, 13652),
      mosaic("350M", 16384, 4, 2, false, 23559),
      mosaic("350M", 8192, 8, 2, false, 36569),
      mosaic("350M", 4096, 16, 2, false, 49555),
      mosaic("350M", 2048, 32, 2, false, 58782),
      mosaic("350M", 1024, 64, 2, false, 64813),
      mosaic("350M", 512, 128, 2, false, 69330),
      mosaic("125M", 65536, 1, 2, false, 20368),
      mosaic("125M", 32768, 2, 2, false, 36407),
      mosaic("125M", 16384, 4, 2, false, 60040),
      mosaic("125M", 8192, 8, 2, false, 90392),
      mosaic("125M", 4096, 16, 2, false, 118396),
      mosaic("125M", 2048, 40, 2, false, 142830),
      mb_named(mosaic("125M", 2048, 32, 2, false, 141737)),
      mosaic("125M", 1024, 64, 2, false, 156468),
      mosaic("125M", 512, 128, 2, false, 165681),
      // The A100 80GB table's other 7B-30B rows (README at commit 061f2c7ce64e): MPT-30B, 13B and
      // 7B at the sequence lengths the rows above leave out, 8 GPUs each, in the table's order.
      // Open: MPT-30B at sequence 8,192 (+46.8 %; its H100 row +27.7 %): from sequence 4,096 to
      // 8,192 at the same one-sequence micro-batch the measured MFU falls 51.4 -> 39.4 % (H100 35.9
      // -> 29.9 %) where the model's rises with attention's share; the model holds the step at 68.6
      // of 80 GiB, the fullest of these rows: the cache allocator near full memory is suspected
      // (docs/VALIDATION.md, "The A100 40GB table"), not modelled.
      open_case(mosaic("30B", 8192, 1, 21, true, 574)),
      mosaic("30B", 4096, 1, 21, true, 814),
      mosaic("30B", 1024, 6, 21, true, 946),
      mosaic("30B", 512, 12, 21, true, 967),
      mosaic("13B", 32768, 1, 3, true, 1016),
      mosaic("13B", 16384, 3, 3, true, 1431),
      mosaic("13B", 8192, 5, 3, true, 1795),
      mosaic("13B", 4096, 10, 3, true, 2060),
      mosaic("13B", 1024, 40, 3, true, 2330),
      mosaic("7B", 65536, 1, 2, true, 1013),
      mosaic("7B", 32768, 2, 2, true, 1672),
      mosaic("7B", 16384, 4, 2, true, 2453),
      mosaic("7B", 8192, 8, 2, true, 3206),
      mosaic("7B", 1024, 64, 2, true, 4357),
      mosaic_h100("7B", 2048, 8, 6, 1, false, 10643),
      mosaic_h100("7B", 4096, 8, 16, 2, true, 8611),
      mosaic_h100("13B", 2048, 64, 2, 1, false, 4800),
      mosaic_h100("13B", 4096, 8, 10, 3, true, 4717),
      mosaic_h100("30B", 2048, 8, 3, 21, true, 2002),
      mosaic_h100("70B", 2048, 32, 2, 16, true, 882),
      mosaic_h100("70B", 2048, 64, 8, 4, true, 1039),
      // The same table's other sequence-2048 rows (README at commit 061f2c7ce64e): every model's
      // scaling over 8-64 GPUs (FSDP FULL_SHARD over one to eight boxes). MPT-3B, 1B and 760M:
      // llm-foundry scripts/train/yamls/pretrain/mpt-3b.yaml (d_model 2560, 20 heads, 32 layers),
      // mpt-1b.yaml (2048, 16, 24), mpt-760m.yaml (1536, 12, 24), expansion ratio 4, vocabulary
      // 50368.
      mosaic_h100("30B", 2048, 16, 10, 3, true, 2263),
      mosaic_h100("30B", 2048, 32, 14, 3, true, 2308),
      mosaic_h100("13B", 2048, 8, 2, 1, false, 4792),
      mosaic_h100("13B", 2048, 16, 2, 1, false, 4767),
      mosaic_h100("13B", 2048, 32, 2, 1, false, 4811),
      mosaic_h100("3B", 2048, 16, 10, 3, false, 24142),
      mosaic_h100("3B", 2048, 32, 6, 3, false, 23021),
      mosaic_h100("3B", 2048, 64, 6, 3, false, 22525),
      mosaic_h100("1B", 2048, 8, 14, 1, false, 45455),
      mosaic_h100("1B", 2048, 16, 20, 1, false, 46037),
      mosaic_h100("1B", 2048, 32, 20, 1, false, 45130),
      mosaic_h100("1B", 2048, 64, 20, 1, false, 44402),
      // The measurement is 8 % below the same model's 16-GPU row at the same micro-batch
      // (docs/VALIDATION.md, "More public rows").
      mosaic_h100("760M", 2048, 8, 24, 2, false, 63147),
      mosaic_h100("760M", 2048, 16, 24, 1, false, 68551),
      mosaic_h100("760M", 2048, 32, 24, 1, false, 67971),
      // The H100 table's rows at the other sequence lengths (README at commit 061f2c7ce64e), 8 GPUs
      // each, in the table's order.
      open_case(mosaic_h100("30B", 8192, 8, 1, 21, true, 1384)),  // as the A100 80GB row above
      mosaic_h100("30B", 4096, 8, 1, 21, true, 1802),
      mosaic_h100("30B", 1024, 8, 6, 21, true, 2084),
      mosaic_h100("13B", 32768, 8, 1, 3, true, 1976),
      mosaic_h100("13B", 16384, 8, 3, 3, true, 2985),
      mosaic_h100("13B", 1024, 8, 40, 3, true, 5502),
      mosaic_h100("7B", 65536, 8, 1, 2, true, 1956),
      mosaic_h100("7B", 32768, 8, 2, 2, true, 3318),
      mosaic_h100("7B", 8192, 8, 8, 2, true, 6935),
      mosaic_h100("7B", 1024, 8, 64, 2, true, 10203),
      mosaic_h100("3B", 65536, 8, 1, 2, true, 3262),
      mosaic_h100("3B", 32768, 8, 3, 6, true, 5873),
      mosaic_h100("3B", 16384, 8, 1, 6, false, 11152),
      mosaic_h100("3B", 8192, 8, 3, 6, false, 16578),
      mosaic_h100("3B", 4096, 8, 5, 6, false, 20964),
      mosaic_h100("3B", 1024, 8, 20, 6, false, 27046),
      mosaic_h100("3B", 512, 8, 40, 6, false, 27965),
      mosaic_h100("1B", 65536, 8, 1, 2, true, 5506),
      mosaic_h100("1B", 32768, 8, 1, 4, false, 12025),
      mosaic_h100("1B", 16384, 8, 2, 4, false, 19649),
      mosaic_h100("1B", 8192, 8, 3, 4, false, 29157),
      mosaic_h100("1B", 4096, 8, 7, 4, false, 38535),
      mosaic_h100("1B", 1024, 8, 18, 4, false, 48910),
      mosaic_h100("1B", 512, 8, 56, 4, false, 52275),
      mosaic_h100("760M", 32768, 8, 1, 2, false, 16291),
      mosaic_h100("760M", 16384, 8, 3, 2, false, 27815),
      mosaic_h100("760M", 8192, 8, 6, 2, false, 41825),
      mosaic_h100("760M", 4096, 8, 12, 2, false, 55459),
      mosaic_h100("760M", 1024, 8, 48, 2, false, 78581),
      mosaic_h100("760M", 512, 8, 96, 2, false, 83749),
      // The H100 FP8 table (README at commit 061f2c7ce64e), every row, in its order.
      mosaic_h100_fp8("3B", 32768, 3, 6, true, 5856),
      mosaic_h100_fp8("3B", 8192, 3, 6, false, 19146),
      mosaic_h100_fp8("3B", 2048, 10, 6, false, 30586),
      mosaic_h100_fp8("3B", 512, 40, 6, false, 36527),
      mosaic_h100_fp8("1B", 32768, 1, 4, false, 12580),
      mosaic_h100_fp8("1B", 8192, 2, 4, false, 32010),
      mosaic_h100_fp8("1B", 512, 56, 4, false, 70315),
      mosaic_h100_fp8("350M", 32768, 1, 4, false, 24439),
      mosaic_h100_fp8("350M", 16384, 2, 4, false, 42929),
      mosaic_h100_fp8("350M", 512, 56, 4, false, 154420),
      // llm-foundry's A100 40GB table (README at commit 061f2c7ce64e), every row, in its order.
      // Open, over 15 % (docs/VALIDATION.md, "The A100 40GB table"): MPT-70B on 64 GPUs (+46.5 %:
      // micro-batch 2, one a step; the 128-GPU row at micro-batch 4 reads +14.9 %, and the
      // measurement per GPU is 27 % below it where the model is 6 % below); MPT-13B on 8 GPUs
      // (+17.5 to +22.7 %: every row 8,192 tokens per micro-batch, 16 a step; its 16-128 GPU rows
      // at 20-33K tokens per micro-batch read +4.3 to +6.6 %); MPT-1B on 32 GPUs (+38.8 %: 18 %
      // below the same model's 16- and 64-GPU rows at the same micro-batch, a slow run suspected);
      // MPT-3B on 128 GPUs (+15.5 %: the small models' measurement falls with GPU count where the
      // model stays flat, a per-collective cost of FULL_SHARD's small-layer gathers at 32-128 ranks
      // over RoCE suspected).
      mosaic_a100_40gb("70B", 2048, 128, 4, 1, true, 376),
      open_case(mosaic_a100_40gb("70B", 2048, 64, 2, 1, true, 276)),
      mosaic_a100_40gb("30B", 2048, 128, 6, 1, true, 865),
      mosaic_a100_40gb("30B", 2048, 32, 4, 1, true, 857),
      open_case(mosaic_a100_40gb("13B", 8192, 8, 1, 16, true, 1407)),
      open_case(mosaic_a100_40gb("13B", 4096, 8, 2, 16, true, 1603)),
      mosaic_a100_40gb("13B", 2048, 128, 16, 1, true, 1972),
      mosaic_a100_40gb("13B", 2048, 64, 16, 1, true, 1976),
      mosaic_a100_40gb("13B", 2048, 32, 14, 1, true, 1998),
      mosaic_a100_40gb("13B", 2048, 16, 10, 1, true, 1993),
      open_case(mosaic_a100_40gb("13B", 2048, 8, 4, 16, true, 1668)),
      open_case(mosaic_a100_40gb("13B", 1024, 8, 8, 16, true, 1727)),
      open_case(mosaic_a100_40gb("13B", 512, 8, 16, 16, true, 1763)),
      mosaic_a100_40gb("7B", 16384, 8, 1, 4, true, 2249),
      mosaic_a100_40gb("7B", 8192, 8, 3, 4, true, 2887),
      mosaic_a100_40gb("7B", 4096, 8, 6, 4, true, 3366),
      mosaic_a100_40gb("7B", 2048, 128, 18, 1, true, 3623),
      mosaic_a100_40gb("7B", 2048, 64, 18, 1, true, 3665),
      mosaic_a100_40gb("7B", 2048, 32, 18, 1, true, 3725),
      mosaic_a100_40gb("7B", 2048, 16, 16, 1, true, 3645),
      mosaic_a100_40gb("7B", 2048, 8, 12, 4, true, 3679),
      mosaic_a100_40gb("7B", 1024, 8, 24, 4, true, 3854),
      mosaic_a100_40gb("7B", 512, 8, 48, 4, true, 3895),
      mosaic_a100_40gb("3B", 32768, 8, 1, 4, true, 2955),
      mosaic_a100_40gb("3B", 16384, 8, 2, 8, true, 4465),
      mosaic_a100_40gb("3B", 8192, 8, 1, 8, false, 7149),
      mosaic_a100_40gb("3B", 4096, 8, 2, 8, false, 8777),
      open_case(mosaic_a100_40gb("3B", 2048, 128, 6, 1, false, 9538)),
      mosaic_a100_40gb("3B", 2048, 64, 6, 1, false, 9736),
      mosaic_a100_40gb("3B", 2048, 32, 6, 1, false, 9914),
      mosaic_a100_40gb("3B", 2048, 16, 5, 1, false, 9750),
      mosaic_a100_40gb("3B", 2048, 8, 5, 8, false, 10065),
      mosaic_a100_40gb("3B", 1024, 8, 10, 8, false, 10731),
      mosaic_a100_40gb("3B", 512, 8, 20, 8, false, 11324),
      mosaic_a100_40gb("1B", 32768, 8, 1, 4, true, 5095),
      mosaic_a100_40gb("1B", 16384, 8, 1, 8, false, 9715),
      mosaic_a100_40gb("1B", 8192, 8, 2, 8, false, 13474),
      mosaic_a100_40gb("1B", 4096, 8, 4, 8, false, 16856),
      mosaic_a100_40gb("1B", 2048, 128, 10, 1, false, 18647),
      mosaic_a100_40gb("1B", 2048, 64, 10, 1, false, 19001),
      open_case(mosaic_a100_40gb("1B", 2048, 32, 10, 1, false, 15555)),
      mosaic_a100_40gb("1B", 2048, 16, 8, 1, false, 19085),
      mosaic_a100_40gb("1B", 2048, 8, 8, 8, false, 19271),
      mosaic_a100_40gb("1B", 1024, 8, 16, 8, false, 20959),
      mosaic_a100_40gb("1B", 512, 8, 32, 8, false, 21782),
      mosaic_a100_40gb("760M", 32768, 8, 1, 4, true, 7183),
      mosaic_a100_40gb("760M", 16384, 8, 1, 4, false, 13914),
      mosaic_a100_40gb("760M", 8192, 8, 3, 4, false, 20106),
      mosaic_a100_40gb("760M", 4096, 8, 6, 4, false, 25863),
      mosaic_a100_40gb("760M", 2048, 128, 12, 1, false, 28940),
      mosaic_a100_40gb("760M", 2048, 64, 12, 1, false, 29344),
      mosaic_a100_40gb("760M", 2048, 32, 12, 1, false, 29648),
      mosaic_a100_40gb("760M", 2048, 16, 12, 1, false, 29607),
      mosaic_a100_40gb("760M", 2048, 8, 12, 4, false, 30173),
      mosaic_a100_40gb("760M", 1024, 8, 24, 4, false, 33422),
      mosaic_a100_40gb("760M", 512, 8, 48, 4, false, 34938),
      mosaic_a100_40gb("350M", 32768, 8, 1, 4, false, 13416),
      mosaic_a100_40gb("350M", 16384, 8, 2, 4, false, 22896),
      mosaic_a100_40gb("350M", 8192, 8, 4, 4, false, 34933),
      mosaic_a100_40gb("350M", 4096, 8, 8, 4, false, 46833),
      mosaic_a100_40gb("350M", 2048, 128, 18, 1, false, 51934),
      mosaic_a100_40gb("350M", 2048, 64, 18, 1, false, 52689),
      mosaic_a100_40gb("350M", 2048, 32, 18, 1, false, 53811),
      mosaic_a100_40gb("350M", 2048, 16, 18, 1, false, 55413),
      mosaic_a100_40gb("350M", 2048, 8, 16, 4, false, 55995),
      mosaic_a100_40gb("350M", 1024, 8, 32, 4, false, 62523),
      mosaic_a100_40gb("350M", 512, 8, 64, 4, false, 66284),
      mosaic_a100_40gb("125M", 32768, 8, 1, 4, false, 32651),
      mosaic_a100_40gb("125M", 16384, 8, 2, 3, false, 55484),
      mosaic_a100_40gb("125M", 8192, 8, 5, 3, false, 86858),
      mosaic_a100_40gb("125M", 4096, 8, 13, 3, false, 115162),
      mosaic_a100_40gb("125M", 2048, 128, 26, 1, false, 123936),
      mosaic_a100_40gb("125M", 2048, 64, 26, 1, false, 125234),
      mosaic_a100_40gb("125M", 2048, 32, 26, 1, false, 127122),
      mosaic_a100_40gb("125M", 2048, 16, 26, 1, false, 130535),
      mosaic_a100_40gb("125M", 2048, 8, 26, 3, false, 136334),
      mosaic_a100_40gb("125M", 1024, 8, 52, 3, false, 148289),
      mosaic_a100_40gb("125M", 512, 8, 104, 3, false, 156735),
      titan("llama2-13b", 2, Recompute::kNone, "none", 2162),
      titan("llama3-70b", 1, Recompute::kFull, "full", 331),
      titan("llama2-70b", 2, Recompute::kFull, "full", 353),
      titan("llama3-8b", 1, Recompute::kFull, "selective layer", 2904, 2),
      titan("llama2-13b", 2, Recompute::kFull, "selective layer", 1914, 2),
      titan("llama3-8b", 1, Recompute::kOp, "selective op", 2973),
      titan("llama2-13b", 2, Recompute::kOp, "selective op", 1904),
      titan("llama2-70b", 1, Recompute::kOp, "selective op", 355),
      trainy_h200(4, 10938),
      trainy_h200(8, 10753),
      ibm_fsdp("7B", false, 3700),
      ibm_fsdp("34B", false, 700),
      ibm_fsdp("70B", false, 370),
      ibm_fsdp("7B", true, 7500),
      ibm_fsdp("34B", true, 1550),
      ibm_fsdp("70B", true, 800),
      // KempnerForge: the 2026-04-05 MFU sweep and the 2026-06-30 weak-scaling campaign (the
      // latter's figures where both ran a configuration).
      // One GPU: batch 2 x accumulation 4 (benchmarks/mfu_scaling/mfu_bench.sh, 01_1gpu_7b; the
      // report's batch table gives the 4 x 2 of the other 7B runs).
      kempner("7B", 1, 1, 2, 4, 10471, kKempnerMfu),
      kempner("7B", 4, 1, 4, 2, 38983, kKempnerMfu),
      kempner("7B", 2, 2, 4, 2, 13163, kKempnerMfu),
      kempner("7B", 4, 4, 4, 2, 25135, kKempnerMfu),
      kempner("7B", 4, 2, 4, 2, 25980, kKempnerMfu),
      kempner("7B", 16, 4, 4, 2, 82988, kKempnerMfu),
      kempner("13B", 8, 4, 4, 4, 27345, kKempnerMfu),
      kempner("13B", 16, 4, 4, 4, 53814, kKempnerMfu),
      kempner("13B", 8, 1, 4, 4, 35405, kKempnerMfu, false),
      kempner("7B", 8, 4, 4, 2, 44299, kKempnerMfu),
      kempner("7B", 32, 4, 4, 2, 155917, kKempnerMfu),
      kempner("13B", 32, 4, 4, 4, 110373, kKempnerWeak),
      kempner("13B", 160, 4, 4, 4, 534644, kKempnerWeak),
      kempner("13B", 8, 4, 4, 4, 29860, kKempnerWeak),
      kempner("13B", 64, 4, 4, 4, 216507, kKempnerWeak),
      kempner("13B", 128, 4, 4, 4, 423306, kKempnerWeak),
      // Open (+53.7 %): FSDP=2 holds the TP shard's unsharded fp32 gradients across the
      // micro-batches, and the model puts the peak at 138.0 of the H200's 139.8 GiB (the report:
      // 128.5 GB); the caching allocator's flush-and-retry near full memory (pytorch/pytorch
      // #104509, mosaicml/composer #1998) is not modelled.
      open_case(kempner("70B", 8, 4, 2, 4, 3623, kKempnerWeak)),
      kempner("70B", 64, 4, 2, 4, 35824, kKempnerWeak),
      // Open (+15.4 %): the 70B's per-GPU rate falls 8 % from 32 to 160 GPUs (584 -> 535), the
      // model's 1 % (docs/VALIDATION.md).
      open_case(kempner("70B", 96, 4, 2, 4, 52190, kKempnerWeak)),
      kempner("70B", 128, 4, 2, 4, 69985, kKempnerWeak),
      // 90 nodes of four: TP=4 x FSDP=90, 8 sequences a GPU, no accumulation (the report's
      // micro-batch 1 run, 8.1 % MFU, is named comm-bound there and gives no tok/s: not a row),
      // fp32 AdamW moments and master ("bf16 weights ~350 GB plus fp32 optimizer moments ~2.1 TB
      // across the job"). Open (-24.3 %): compute alone is 17.8 s of the 19.1 s measured; the
      // model adds 3.3 s of exposed TP collectives and 3.9 s of compute slowed beside them.
      open_case(kempner175b()),
      // The config-validation report (2026-04-06, 8 nodes, steady state of its last 5 steps):
      // configs/train/7b.toml (batch 8 x accumulation 4 on one node), 7b_12gpu_tp4.toml (4 x 8),
      // 7b_32gpu_fsdp.toml (4 x 4), 70b_32gpu_tp4.toml (2 x 4), all compiled.
      kempner("7B", 4, 1, 8, 4, 38858, kKempnerConfigs),
      kempner("7B", 12, 4, 4, 8, 67045, kKempnerConfigs),
      kempner("7B", 32, 1, 4, 4, 297384, kKempnerConfigs),
      kempner("70B", 32, 4, 2, 4, 17769, kKempnerConfigs),
      kempner("70B", 32, 4, 2, 4, 18688, kKempnerWeak),
      open_case(kempner("70B", 160, 4, 2, 4, 85571, kKempnerWeak)),
      nemo_long_seq(4, 1, 1, 4, 1, 768),
      nemo_long_seq(8, 1, 2, 4, 1, 730),
      nemo_long_seq(16, 2, 1, 8, 1, 660),
      nemo_long_seq(32, 2, 1, 8, 2, 610),
      nemo_long_seq(64, 4, 1, 8, 2, 574),
      nemo_long_seq(128, 4, 1, 8, 4, 555),
      nemo_long_seq(256, 4, 1, 8, 8, 549),
      nemo_long_seq(512, 8, 1, 4, 16, 549),
      nemo_long_seq(1024, 8, 1, 4, 32, 536),
      // Open (+15.0 %, +23.6 %, GPT-3 5B +15.4 %): the rows without TP, the attention kernel of
      // the 24.07 runs not being stated (docs/VALIDATION.md, "More public rows").
      open_case(nemo_pretrain("Llama 2 7B", find_model("llama2-7b"), 8, 128, 1, 4096, 1, 1, 1, 1,
                              Recompute::kNone, false, false, 16847)),
      nemo_pretrain("Llama 2 13B", find_model("llama2-13b"), 16, 128, 1, 4096, 1, 4, 1, 10,
                    Recompute::kNone, false, false, 8646),
      nemo_pretrain("Llama 2 70B", find_model("llama2-70b"), 64, 128, 1, 4096, 4, 4, 1, 20,
                    Recompute::kNone, false, true, 1707),
      open_case(nemo_pretrain("Llama 3 8B", find_model("llama3-8b"), 8, 128, 1, 8192, 1, 1, 2, 1,
                              Recompute::kNone, false, true, 12036)),
      nemo_pretrain("Llama 3 70B", find_model("llama3-70b"), 64, 128, 1, 8192, 4, 4, 2, 5,
                    Recompute::kNone, true, true, 1533),
      bridge_h100_70b("25.11", 128, 1602),
      bridge_h100_70b("26.02", 256, 1621),
      // Open (+23.8 %): Blackwell's GEMMs at the burst efficiency (no sustained-clock figure for
      // the B200 in the catalog, where Hopper's comes from a measured 700 W clock), and an 8B at TP
      // 1 in fp8, as the open NeMo 24.07 H100 rows without TP (docs/VALIDATION.md).
      open_case(bridge_b200_8b()),
      open_case(nemo_pretrain("GPT-3 5B", nemo_gpt3("gpt3-5b", 24, 4096, 32, 50304), 64, 2048, 4,
                              2048, 1, 1, 1, 1, Recompute::kNone, false, true, 22521)),
      nemo_pretrain("GPT-3 20B", nemo_gpt3("gpt3-20b", 44, 6144, 48, 50432), 64, 256, 2, 2048, 2, 1,
                    1, 1, Recompute::kSelective, true, true, 5851),
      nemo_pretrain("Nemotron 8B", nemotron("nemotron-8b", 32, 4096, 32, 32, 16384), 64, 256, 4,
                    4096, 2, 1, 1, 1, Recompute::kNone, true, false, 12701),
      nemo_pretrain("Nemotron 22B", nemotron("nemotron-22b", 40, 6144, 48, 48, 24576), 64, 256, 2,
                    4096, 2, 4, 1, 10, Recompute::kNone, true, false, 4256),
      nemo_pretrain("Nemotron 340B", nemotron("nemotron-340b", 96, 18432, 96, 8, 73728), 128, 32, 1,
                    4096, 8, 8, 1, 12, Recompute::kNone, true, true, 322),
      nemo_pretrain("GPT-3 175B", nemo_gpt3_175b(), 128, 256, 1, 2048, 4, 8, 1, 6,
                    Recompute::kSelective, true, true, 726),
      nemo_pretrain("GPT-3 175B", nemo_gpt3_175b(), 512, 2048, 2, 2048, 4, 8, 1, 6,
                    Recompute::kSelective, true, true, 782),
      hf_h200("qwen3-0.6b", false, 2048, 8, 43544),
      open_case(hf_h200("qwen3-0.6b", false, 2048, 2, 31142)),
      hf_h200("llama3.2-3b", false, 2048, 4, 18365),
      hf_h200("llama3-8b", true, 2048, 4, 12450),
      hf_h200("llama3-8b", true, 4096, 1, 11613),
  };
}

std::vector<ValidationRow> run_validation(const std::string& filter) {
  std::vector<ValidationRow> rows;
  for (const auto& c : validation_cases()) {
    if (!filter.empty() && c.name.find(filter) == std::string::npos) continue;
    auto chassis = topo::load_chassis(c.chassis, c.boxes);
    StepModel sm(chassis, c.model, c.job);
    ValidationRow r;
    r.c = c;
    r.step = sm.simulate(c.plan);
    r.predicted =
        c.metric == "step time s"             ? r.step.step_time_s
        : c.metric == "model TFLOP/s per GPU" ? r.step.model_tflops_per_gpu
        : c.metric == "tokens/s per GPU"
            ? r.step.tokens_per_s / c.plan.gpus()
            : narayanan_flops(c.model, sm.job()) / (r.step.step_time_s * c.plan.gpus()) / 1e12;
    r.error = (r.predicted - c.measured) / c.measured;
    r.within_bound = c.open || std::abs(r.error) <= kValidationBound;
    rows.push_back(r);
  }
  return rows;
}

}  // namespace linkwise::work
