// A training or fine-tuning job: what is trained (mode, precision, LoRA), on what batches, with
// which memory savers (activation recomputation, optimizer offload).
//
// Batches are counted in sequences: each micro-batch holds `micro_batch` sequences of `seq` tokens;
// one step (one optimizer update) consumes `global_batch` sequences, split over the data-parallel
// replicas and, within each, over m = global_batch / (micro_batch · dp) micro-batches (gradient
// accumulation, and the micro-batches a pipeline keeps in flight).
//
// Optimizer: AdamW with fp32 master weights and fp32 moments, as mixed-precision training keeps
// them (Micikevicius et al. 2018; Rajbhandari et al. 2020, "ZeRO", section 3.1: 2 + 2 + 12 bytes
// per parameter).
#pragma once

#include <string>
#include <vector>

namespace linkwise::work {

enum class Mode { kPretrain, kFullFinetune, kLora };
/// kAuto: bf16 where the GPU has BF16 tensor cores, else fp16 (StepModel resolves it).
enum class Precision { kBf16, kFp8, kFp16, kAuto };
/// Korthikanti et al. 2022: none stores every activation; selective recomputes the attention core
/// (scores, softmax, dropout, scores·V) in the backward pass; full keeps only each layer's input
/// and recomputes the whole layer's forward.
/// kOp: torchtitan's per-op selective checkpointing (`selective_ac_option = 'op'`, its default
/// since mid-2024; torchtitan/parallelisms/parallelize_llama.py, _save_list and _custom_policy):
/// every block checkpointed, saving the outputs of the attention kernel, the reduce-scatters and
/// the odd matmuls (aten.mm, counted afresh each forward), recomputing the rest: the even linear
/// GEMMs (K, O, up) and all the element-wise work, never the attention core.
enum class Recompute { kNone, kSelective, kFull, kOp };

const char* to_string(Mode m);
const char* to_string(Precision p);
const char* to_string(Recompute r);
/// Parse "pretrain" / "full" / "lora", "bf16" / "fp16" / "fp8" / "auto", "none" / "selective" /
/// "full"; InputError otherwise.
Mode parse_mode(const std::string& s);
Precision parse_precision(const std::string& s);
Recompute parse_recompute(const std::string& s);

/// The training framework: how it runs the plan's collectives (include/linkwise/work/framework.h).
enum class Framework { kMegatron, kFsdp, kDeepSpeed, kDeepSpeed03, kFsdp1, kHf };
/// A behaviour left to the framework's default, or forced on or off.
enum class Switch { kDefault, kOn, kOff };

/// How LoRA stores the frozen base weights: 16-bit, fp8 (Transformer Engine fp8 primary weights) or
/// 4-bit NF4 with double-quantized constants (QLoRA, Dettmers et al. 2023). kAuto: fp8 for fp8
/// jobs, else 16-bit.
enum class BaseWeights { kAuto, kBf16, kFp8, kNf4 };

const char* to_string(Framework f);
const char* to_string(BaseWeights b);
BaseWeights parse_base_weights(const std::string& s);
/// Bytes per frozen base parameter of a LoRA job (kAuto resolved by the job's precision).
double base_weight_bytes(const struct Job& job);
/// "megatron" / "fsdp" / "fsdp1" / "deepspeed" / "deepspeed-0.3" / "hf"; InputError otherwise.
Framework parse_framework(const std::string& s);
/// "default", `on` or `off` (e.g. "on"/"off", "fused"/"eager") for the flag `flag`; InputError
/// otherwise.
Switch parse_switch(const std::string& s, const char* flag, const char* on, const char* off);

struct LoraSpec {
  int rank = 16;
  /// Matrices that get adapters: any of q, k, v, o (attention) and gate, up, down (MLP).
  std::vector<std::string> targets = {"q", "k", "v", "o"};
};

struct Job {
  Mode mode = Mode::kPretrain;
  Precision precision = Precision::kAuto;
  int seq = 0;          ///< tokens per sequence; 0 = the model's default
  int micro_batch = 1;  ///< sequences per micro-batch
  int global_batch =
      0;  ///< sequences per optimizer step; 0 = as many micro-batches as keep the pipeline full
  Recompute recompute = Recompute::kSelective;
  /// With Recompute::kFull: one block in this many is checkpointed and recomputed, the others
  /// keep every activation (torchtitan's `selective_ac_option` as an integer: ac_freq, every
  /// ac_freq-th block wrapped, torchtitan/parallelisms/parallelize_llama.py
  /// _apply_ac_to_transformer_block; Megatron's --recompute-method block with
  /// --recompute-num-layers K of L a stage is a share K/L). 1: every block.
  int recompute_every = 1;
  bool flash_attention =
      true;  ///< fused attention: no s x s score matrix in memory (Dao et al. 2022)
  bool offload_optimizer =
      false;  ///< optimizer states and step on the CPU (ZeRO-Offload, Ren et al. 2021)
  LoraSpec lora;
  Framework framework = Framework::kMegatron;
  BaseWeights base_weights = BaseWeights::kAuto;  ///< LoRA's frozen base (--base-weights)
  Switch grad_overlap =
      Switch::kDefault;  ///< gradient reduction beside the backward (framework default)
  Switch fused_elementwise = Switch::kDefault;  ///< fused norms/activations (framework default)
  /// Sequence-parallel TP all-gathers and reduce-scatters split into chunks and pipelined with the
  /// GEMMs beside them (Megatron --tp-comm-overlap, PyTorch async TP); framework default: off.
  Switch tp_overlap = Switch::kDefault;
  /// Gradients reduced in fp32 (kOn) or in the job's 16-bit type (kOff): FSDP's
  /// MixedPrecision.reduce_dtype, Megatron's --accumulate-allreduce-grads-in-fp32, DeepSpeed's
  /// communication_data_type; framework default.
  Switch grad_fp32 = Switch::kDefault;
  /// The fused attention kernel on Hopper (--attention): cuDNN's (kOn: Transformer Engine's
  /// FusedAttention, PyTorch SDPA's cudnn backend) or FlashAttention-2 (kOff: the flash-attn
  /// package, SDPA's flash backend; Transformer Engine with NVTE_FUSED_ATTN=0); framework default
  /// (FrameworkTraits::hopper_attention). Other architectures run FlashAttention-2's rate either
  /// way.
  Switch cudnn_attention = Switch::kDefault;
  /// Full recomputation stops once the checkpointed block has saved every tensor its backward
  /// needs (kOn: PyTorch's non-reentrant torch.utils.checkpoint since 2.1,
  /// set_checkpoint_early_stop) or runs the whole block again (kOff: reentrant checkpointing,
  /// PyTorch 2.0 and earlier); framework default (FrameworkTraits::recompute_early_stop).
  Switch recompute_early_stop = Switch::kDefault;
  /// PyTorch's AdamW as one fused kernel (kOn: torch.optim.AdamW(fused=True), torchtitan's
  /// optimizer.implementation "fused") or one kernel per tensor operation (kOff: the foreach and
  /// per-parameter forms); framework default (FrameworkTraits::optimizer_bytes_per_param). Only
  /// the PyTorch stacks (fsdp, fsdp1, hf): Megatron-LM and DeepSpeed run their own fused Adam.
  Switch fused_optimizer = Switch::kDefault;
  /// Where the optimizer keeps the weights it updates: an fp32 master copy with fp32 Adam moments
  /// beside the 16-bit weights (kOn, the default: mixed precision as ZeRO describes it), or the
  /// 16-bit weights themselves with 16-bit moments (kOff: "pure" bf16, a model cast to bf16 and
  /// stepped in place, e.g. KempnerForge's build_parallel_model, llama-recipes' pure_bf16).
  Switch fp32_master = Switch::kDefault;
  /// ZeRO-3 gradients reduce-scattered after every micro-batch's backward (kOff, the default), or
  /// only after the last one (kOn: FSDP's no_sync, FSDP2's set_requires_gradient_sync(False) on
  /// the others), the unsharded gradients accumulating on each GPU until then.
  Switch grad_sync_last = Switch::kDefault;
  /// Sequence-parallel TP collectives one per projection (kOn: each column-parallel projection
  /// gathers its own input and reduce-scatters its own input gradient, DTensor ColwiseParallel
  /// with input_layouts Shard(1) on q, k, v, gate and up, as KempnerForge's plan) or one per
  /// half-layer (kOff, the default: the input gathered once for the projections that share it,
  /// Megatron's fused QKV, torchtitan's PrepareModuleInput).
  Switch tp_per_projection = Switch::kDefault;
  /// FSDP's weight all-gathers in fp8 (torchao's float8 training with
  /// enable_fsdp_float8_all_gather, torchtitan --float8.enable_fsdp_float8_all_gather): each
  /// block's linear weights are cast to fp8 on their shard and gathered at 1 byte a parameter,
  /// the gathered fp8 weights feeding the fp8 GEMMs (the block's two norms, 2·h parameters, are
  /// counted with them); the root unit (embedding, output layer, final norm: not converted to
  /// float8) is gathered in 16-bit. With fp8 precision under fsdp only.
  bool fp8_gather = false;
};

/// Bytes a parameter of a block's weight all-gather moves: 1 under Job::fp8_gather, else 2.
inline double block_gather_bytes(const Job& job) { return job.fp8_gather ? 1.0 : 2.0; }

/// "none", "selective", "full", or "full (one block in N)" under Job::recompute_every.
std::string recompute_text(const Job& job);

/// Checks a job's numbers; throws InputError naming the flag.
void validate_job(const Job& job);

}  // namespace linkwise::work
