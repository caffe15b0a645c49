// What a training framework does with a plan's collectives: the unit of each collective, which of
// them overlap compute, the gradients' precision on the wire, and whether element-wise work is
// fused.
//
//   megatron   Megatron-LM / Megatron-core. DP gradients in buckets of max(40M, 1M·dp) parameters
//              (DistributedDataParallelConfig.bucket_size) when --overlap-grad-reduce is on, else
//              one bucket after the backward (overlap_grad_reduce defaults to False); gradients
//              all-reduced (or reduce-scattered, distributed optimizer = zero=1) in fp32 for bf16
//              training (arguments.py: "bfloat16 requires gradient accumulation and all-reduce to
//              be done in fp32"), in fp16 for fp16 training; fused kernels (fused layer norm,
//              bias-GeLU, SwiGLU, bias-dropout-add, masked softmax); Transformer Engine's cuDNN
//              fused attention (Hopper-native: TE prefers it to flash-attn on sm90 from 1.2,
//              NVIDIA/TransformerEngine PR 497; FlashAttention-2 first up to 1.1). zero=3 is
//              Megatron-FSDP: one unit per layer, as fsdp.
//   fsdp       PyTorch FSDP / FSDP2 (torchtitan, llm-foundry). zero=3 is FULL_SHARD with one unit
//   per
//              transformer block (the wrapping policy of both): all-gather before the forward,
//              again before the backward (reshard_after_forward), reduce-scatter after it, every
//              micro-batch, on their own streams beside the compute (backward_prefetch
//              BACKWARD_PRE: one unit ahead); zero=2 is SHARD_GRAD_OP (gather before the forward,
//              reduce-scatter after the backward, every micro-batch); zero=0 is DDP (25 MiB
//              buckets, bucket_cap_mb, overlapped with the backward). FSDP has no ZeRO-1. Gradients
//              reduced in fp32 (torchtitan's mixed_precision_reduce default "float32"; DDP under
//              torch.autocast keeps fp32 parameters, so fp32 gradients); eager element-wise work
//              (PyTorch modules without torch.compile: RMSNorm as six kernels, SwiGLU as two);
//              attention through scaled_dot_product_attention's FlashAttention-2 backend
//              (PyTorch 2.2 release notes), which on Hopper runs at most 335 TFLOP/s forward (Dao
//              2023, 4.1); AdamW fused (torchtitan's optimizer.implementation default).
//   fsdp1      PyTorch FSDP with FlatParameter (Composer, llm-foundry): as fsdp, but the gather
//              writes the flat parameter in place and the gradient is cast to fp32 and pre-divided
//              in place before its reduce-scatter (fsdp is FSDP2: copy-out after each gather,
//              fp32 copy-in before each reduce-scatter). Under LoRA every adapter matrix is a
//              unit of its own (llm-foundry's PEFT wrapping), gathered and reduce-scattered alone.
//              AdamW one kernel per tensor operation (Composer's DecoupledAdamW, torch.optim's
//              foreach default).
//   deepspeed  DeepSpeed ZeRO (docs: deepspeed.ai/docs/config-json, "ZeRO optimizations"). zero=3
//   gathers
//              each sub-module's weights (every weight matrix; parameters under
//              stage3_param_persistence_threshold 1e5 stay whole) and reduce-scatters gradients in
//              buckets of reduce_bucket_size 5e8 elements; overlap_comm defaults to true for stage
//              3 and false for stages 0-2 (zero/config.py); stage 2 reduce-scatters every
//              micro-batch's gradients, stages 0-1 all-reduce at the accumulation boundary;
//              gradients on the wire in the model's 16-bit type (communication_data_type unset);
//              eager element-wise work and FlashAttention-2, as with fsdp. Under full recomputation
//              each unit is gathered again for the recomputed forward.
//   deepspeed-0.3  DeepSpeed 0.3.13-0.4 (before PR #1188, as in Narayanan et al. 2021): as
//   deepspeed, but
//              every ZeRO-3 all-gather synchronizes the device first (nothing overlaps the compute)
//              and each collective costs host time per call and per rank (torch.distributed list
//              forms).
//
//   hf         Hugging Face transformers in eager PyTorch (Trainer, TRL, axolotl):
//              collectives as accelerate runs them (DDP at zero=0, FSDP1 for zero 2 and 3), and the
//              layers' own kernels as transformers writes them: fp32 weights under autocast, eager
//              element-wise work, host time per operation, the loss in fp32 over the whole
//              vocabulary (hf_stack.h).
//
//   auto t = linkwise::work::framework_traits(job, plan);
#pragma once

#include <utility>
#include <vector>

#include "linkwise/work/job.h"
#include "linkwise/work/model.h"
#include "linkwise/work/plan.h"

namespace linkwise::work {

/// How a framework overlaps the sequence-parallel TP collectives with the GEMMs beside them.
enum class TpOverlapStyle {
  kNone,  ///< not offered (DeepSpeed)
  /// Transformer Engine userbuffers (Megatron-LM --tp-comm-overlap; TE
  /// pytorch/module/base.py initialize_ub defaults): the all-gathers before the QKV and FC1 GEMMs
  /// (forward) and before the proj and FC2 dgrad GEMMs (backward) by ring exchange in tp chunks on
  /// the copy engines (num_sm 1, use_ce); the reduce-scatters after the proj and FC2 GEMMs
  /// (forward) pipelined in 4 chunks on 16 SMs the GEMM gives up (set_sm_margin); the backward's
  /// dgrad reduce-scatters of QKV and FC1 in bulk beside their wgrad GEMMs, on 16 SMs.
  kUserbuffers,
  /// PyTorch async TP (torch._inductor micro-pipeline TP, torchtitan enable_async_tensor_parallel;
  /// fused_all_gather_matmul / fused_matmul_reduce_scatter over symmetric memory, SM-free one-sided
  /// P2P: pytorch/pytorch #122163): every all-gather -> matmul and matmul -> reduce-scatter of the
  /// compiled forward and backward decomposed into tp chunks.
  kAsyncTp,
};

struct FrameworkTraits {
  Framework framework = Framework::kMegatron;
  /// TP communication overlap: on or off, and how the framework does it.
  bool tp_overlap = false;
  TpOverlapStyle tp_overlap_style = TpOverlapStyle::kNone;
  bool grad_overlap = true;  ///< gradient collectives run beside the backward
  double grad_bytes = 2;     ///< bytes per gradient element on the wire
  /// HBM bytes the optimizer step moves per trainable parameter it holds, gradient clipping
  /// included: a fused AdamW on fp32 master weights, 28; eager PyTorch AdamW, 92 (framework.cc).
  double optimizer_bytes_per_param = 28;
  /// Share of the HBM peak the optimizer step's kernels stream those bytes at: PyTorch's own
  /// optimizers (torch.optim fused and foreach AdamW, Composer's per-tensor ops) run PyTorch's
  /// element-wise kernels, eager_kernel_share(kElementwise); 1 (the peak) for the fused Adam of
  /// Megatron-LM (Apex / Transformer Engine) and DeepSpeed, which no measurement here times.
  double optimizer_share = 1;
  /// Gradient bucket of zero 0-2 in parameters; 0 = one bucket holding every gradient of the stage.
  double bucket_params = 0;
  /// zero 0-2: gradients reduced every micro-batch (DeepSpeed stage 2, FSDP SHARD_GRAD_OP), not
  /// once.
  bool reduce_every_micro_batch = false;
  /// zero=2 that gathers the weights before every micro-batch's forward (FSDP SHARD_GRAD_OP).
  bool gather_every_micro_batch = false;
  /// ZeRO-3 gradient reduce-scatter bucket in parameters; 0 = one per gather unit (per layer).
  double zero3_reduce_bucket_params = 0;
  bool per_module_gather = false;  ///< ZeRO-3 gathers each weight matrix, not the whole layer
  bool fused_elementwise = true;
  /// Fused attention written for Hopper (Transformer Engine's cuDNN kernels, FlashAttention-3
  /// class), or FlashAttention-2 (PyTorch's scaled_dot_product_attention flash backend), which runs
  /// Ampere-style MMA instructions on Hopper.
  bool hopper_attention = true;
  /// The fused attention core charged as the causal kernel runs it (the tiles above the diagonal
  /// skipped: half the score matrix), per context-parallel ring step: Megatron-core (Transformer
  /// Engine's DotProductAttention, causal mask; its ring's load-balanced steps). The PyTorch and
  /// DeepSpeed stacks keep the whole s x s matrix at the whole-matrix rate, which stands in for a
  /// cost of theirs not found yet (docs/VALIDATION.md, "Compute by shape").
  bool causal_attention = false;
  /// ZeRO-3 collectives the compute waits for: every all-gather synchronizes the device first, so
  /// none runs beside the compute (DeepSpeed 0.3).
  bool zero3_blocking = false;
  /// ZeRO-3 under full recomputation gathers each unit twice in the backward: for the recomputed
  /// forward (whose forward hooks gather and then release it) and again for the backward
  /// (DeepSpeed).
  bool zero3_regather_for_recompute = false;
  /// Host time per ZeRO-3 collective, on the critical path: a fixed part per call, and a part per
  /// rank of the group (the torch.distributed list collectives copy one tensor per rank).
  double zero3_call_s = 0;
  double zero3_call_per_rank_s = 0;
  /// Device-memory bytes the framework moves around each weight gather, per byte gathered, besides
  /// NCCL's own writes: buffers zero-filled and gathered shards copied out into the parameters
  /// (FSDP2 copy-out, DeepSpeed 0.3's list all-gather). On the compute's HBM, in the layer's time.
  double gather_copy_per_byte = 0;
  /// Per byte reduce-scattered: gradients cast and copied into the collective's input and
  /// pre-divided in place before it (FSDP1, FSDP2's copy-in, DeepSpeed 0.3's list reduce-scatter).
  double scatter_copy_per_byte = 0;
  /// ZeRO-3 gradients reduce-scattered one parameter tensor at a time, biases and norms included
  /// (DeepSpeed 0.3's _reduce_scatter_gradients), not per bucket or per unit.
  bool zero3_reduce_per_parameter = false;
  /// Parameters with fewer elements than this stay gathered through the step
  /// (stage3_param_persistence_threshold); 0 = none. DeepSpeed 0.3 gathers them again after every
  /// optimizer step in one all-gather, copied out one (parameter, rank) piece at a time on the
  /// host (zero3_call_per_rank_s each).
  double persistence_threshold = 0;
  /// The attention wrapper unpads q, k and v and pads the output around the variable-length
  /// FlashAttention kernel in every layer, padding or not (llm-foundry's flash_attn_fn through
  /// flash_attn.bert_padding): gathers and zero-filled scatters through HBM (attention_unpad_s).
  bool attention_unpad = false;
  /// Cross-entropy passes over the whole logits each micro-batch beyond the loss, for metrics the
  /// trainer updates as it trains (Composer's train metrics: LanguageCrossEntropy and
  /// LanguagePerplexity each run torch's CrossEntropyLoss under autocast). Forward only, eager:
  /// the logits cast to fp32, log_softmax and nll_loss (head_compute).
  int metric_loss_passes = 0;
  /// Full recomputation skips the block's last GEMM: PyTorch's non-reentrant checkpoint (default
  /// early stop since 2.1) stops the recomputed forward once the last tensor the backward needs is
  /// saved, and an autograd op saves its inputs before its kernel runs, so the MLP's down
  /// projection (and the residual add after it, left in as small) is not run again
  /// (layer_compute; not under LoRA, whose adapters save last).
  bool recompute_early_stop = false;
  /// LoRA: every adapter matrix (lora_A, lora_B of each target) is an FSDP unit of its own, nested
  /// in its frozen block's unit, so it is gathered and its gradient reduce-scattered alone, and the
  /// frozen block has no gradient to reduce (llm-foundry's PEFT wrapping for FlatParameter FSDP).
  bool lora_adapter_units = false;
  /// ZeRO-3 gradients reduced at the last micro-batch only (Job::grad_sync_last): the layers'
  /// reduce-scatters beside the last micro-batch's backward, unsharded gradients held until then.
  bool zero3_sync_last = false;
  /// Sequence-parallel TP collectives one per column-parallel projection (Job::tp_per_projection).
  bool tp_per_projection = false;
};

/// Seconds per layer and micro-batch (forward, backward) of the unpad and pad copies around fused
/// attention when the framework makes them (FrameworkTraits::attention_unpad), else (0, 0). Per
/// token, q the query and kv the key and value elements on one GPU: forward gathers q, k, v (read
/// 2, write 2 bytes each) and pads the output into a zero-filled buffer (write 2, read 2, write 2):
/// 4·(q + 2·kv) + 6·q bytes; backward scatters the three gradients into zero-filled buffers (6
/// each) and gathers the output's gradient (4): 6·(q + 2·kv) + 4·q.
std::pair<double, double> attention_unpad_s(const Model& model, const Job& job, const Plan& plan,
                                            double hbm_bytes_per_s);

/// Seconds per layer and micro-batch (forward, backward) the framework's copies around its ZeRO-3
/// (or SHARD_GRAD_OP) gathers and gradient reduce-scatters take on one GPU's memory; (0, 0) when
/// the plan gathers nothing.
std::pair<double, double> framework_copy_s(const Model& model, const Job& job, const Plan& plan,
                                           double hbm_bytes_per_s);

/// The framework's behaviour for this job and plan, the job's switches applied.
FrameworkTraits framework_traits(const Job& job, const Plan& plan);

/// Why the framework cannot run the plan ("fsdp has no ZeRO-1 ..."), or "".
std::string framework_problem(const Job& job, const Plan& plan);

/// Parameters of each ZeRO-3 gather unit of one layer on one GPU (TP/EP shards): the whole layer,
/// or each weight matrix (attention q, k, v, o, or fused qkv and o for GPT-style models; MLP
/// matrices per local expert; the router).
std::vector<double> zero3_units(const Model& model, const Plan& plan, bool per_module);

/// Elements of every parameter tensor of one layer on one GPU (TP/EP shards): weight matrices,
/// and for GPT-style layers (no gated MLP: Megatron-LM's GPT) their biases and two LayerNorms
/// (weight and bias), for Llama-style layers two RMSNorm weights and no biases.
std::vector<double> layer_parameter_tensors(const Model& model, const Plan& plan);

}  // namespace linkwise::work
