// The Hugging Face transformers stack as it trains in eager PyTorch (--framework hf): the
// transformers Trainer with bf16=True through accelerate, and the TRL / axolotl fine-tunes built on
// it, without torch.compile or fused-kernel patches.
//
// What it does differently from a fused stack, each from the code that runs:
//  * Weights: full training keeps fp32 parameters and runs the forward under torch.autocast(bf16)
//    (Trainer's bf16=True; accelerate's native AMP). Autocast casts every fp32 weight to bf16 once
//    per forward (its cast cache holds leaf tensors that require grad) and keeps that copy for the
//    backward; every fp32 activation that enters a linear layer is cast again for each linear it
//    feeds (non-leaf tensors are not cached: PyTorch docs "Automatic Mixed Precision", and
//    aten/src/ATen/autocast_mode.cpp cached_cast). The embedding output and the residual stream
//    are fp32 (nn.Embedding is not autocast; fp32 + bf16 promotes to fp32). LoRA fine-tunes load
//    the base in bf16 (torch_dtype=torch.bfloat16) with fp32 adapters, as PEFT keeps them.
//  * Element-wise work one kernel per PyTorch operation, each charged by its kind
//    (compute.h eager_kernel_share: element-wise, activation, softmax; transformers
//    src/transformers/models/llama/modeling_llama.py and models/qwen3/modeling_qwen3.py, v4.5x to
//    5.x): LlamaRMSNorm is to(float32), pow(2), mean(-1), + eps, rsqrt, multiply, to(input dtype),
//    times the weight; apply_rotary_pos_emb is q·cos + rotate_half(q)·sin with rotate_half a
//    negation of one half and a cat; Qwen3 adds q_norm and k_norm (RMSNorm over each head) before
//    it; the MLP is act_fn(gate_proj(x)) * up_proj(x); residual adds; the attention output is
//    transposed back with .contiguous(). Backward kernels follow tools/autograd/derivatives.yaml:
//    about two kernels and twice the bytes per forward element-wise kernel.
//  * Attention through torch.nn.functional.scaled_dot_product_attention
//    (integrations/sdpa_attention.py, is_causal with no mask, enable_gqa from torch 2.5). Its
//    backend order puts cuDNN attention first on sm90 and sm100 when the cuDNN PyTorch runs is
//    newer than 9.15 (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp,
//    check_prefer_cudnn_attention, present in 2.10; the wheels bundle such a cuDNN from 2.11:
//    huggingface/transformers PR #48163, closed as "on recent torch the default is already
//    cuDNN"), FlashAttention-2 first elsewhere: FrameworkTraits::hopper_attention is true.
//  * The loss (src/transformers/loss/loss_utils.py, ForCausalLMLoss): the bf16 logits of every
//    token over the whole vocabulary are upcast with logits.float() and go through
//    nn.functional.cross_entropy (log_softmax then nll_loss) in fp32 (hf_head_work).
//  * PEFT LoRA (peft/tuners/lora/layer.py, Linear.forward): result = base_layer(x) +
//    lora_B(lora_A(dropout(x))) * scaling: two thin matmuls that read the target's whole input and
//    write its whole output, a scaling multiply and an add per target, lora_dropout 0 (Identity).
//  * Host time: every operation is issued from Python through the dispatcher, autocast and
//    autograd; when the kernels are shorter than that, the GPU waits for the host (hf_host_s).
//  * Optimizer: torch.optim.AdamW(fused=True) over fp32 parameters, fp32 gradients and two fp32
//    moments (no separate master copy).
//
//   auto w = linkwise::work::hf_layer_work(model, job, plan);
#pragma once

#include "linkwise/work/compute.h"
#include "linkwise/work/job.h"
#include "linkwise/work/memory.h"
#include "linkwise/work/model.h"
#include "linkwise/work/plan.h"

namespace linkwise::work {

/// Kernels and HBM bytes of eager operations, and the host time issuing them (seconds).
struct EagerWork {
  double kernels = 0;     ///< kernels launched
  double bytes = 0;       ///< bytes read and written in HBM
  double peak_bytes = 0;  ///< the bytes each divided by its kernel's share (eager_kernel_share)
  double host_s = 0;      ///< host time to issue them
};

/// One layer's element-wise and cast work (no GEMMs, no attention kernel) for one micro-batch on
/// one GPU, forward and backward; the GEMM and attention kernels' host time is in host_s and
/// kernels too (gemm_kernels of each).
struct HfLayerWork {
  EagerWork forward, backward;
  double gemm_kernels_f = 0, gemm_kernels_b = 0;
};

/// Bytes per element one eager RMSNorm moves (LlamaRMSNorm / Qwen3RMSNorm) on an input of
/// `in_bytes` per element with a weight of `weight_bytes`: to(float32) (read in, write 4; no kernel
/// for fp32), pow(2) (read 4, write 4), mean(-1) (read 4), + eps and rsqrt (one value per row),
/// the product (read 4, write 4), to(input dtype) (read 4, write in; none for fp32), weight * x
/// (read in, write the promoted type). bf16: 36; fp32 input and weight: 28.
double hf_rms_norm_bytes(double in_bytes, double weight_bytes);

/// Whether the stack keeps fp32 parameters under autocast (full fine-tune and pre-training) rather
/// than a bf16 model (LoRA's frozen base).
bool hf_fp32_weights(const Job& job);

/// Per-layer eager work of the Hugging Face stack (header above).
HfLayerWork hf_layer_work(const Model& model, const Job& job, const Plan& plan);

/// The head: final norm, the output projection's casts, the fp32 upcast of the logits, log_softmax
/// and nll_loss and their backward, the embedding's gradient; forward and backward (no GEMMs).
struct HfHeadWork {
  EagerWork forward, backward;
};
HfHeadWork hf_head_work(const Model& model, const Job& job, const Plan& plan);

/// Bytes per logit element the loss moves in fp32 besides the output GEMM's own bf16 write and
/// reads: forward logits.float() (read 2, write 4) and log_softmax (PyTorch's cunn_SoftMaxForward
/// for rows wider than shared memory: a max pass, a sum-of-exponentials pass and the write pass:
/// read 4 three times, write 4); backward nll_loss's zero-filled fp32 gradient (write 4),
/// log_softmax's backward (a sum pass over the gradient, then read gradient and output, write: 16)
/// and the cast of the gradient back to bf16 (read 4, write 2).
constexpr double kHfLossForwardBytes = 6 + 16, kHfLossBackwardBytes = 4 + 16 + 6;

/// Kernels of an eager cross-entropy forward per logit element (kHfLossForwardBytes in all): the
/// bf16 logits cast to fp32 (6 bytes, an element-wise kernel), log_softmax (16, a softmax kernel),
/// and nll_loss and its reduction (one value a row: two kernels, no bytes counted). The loss of
/// hf_head_work and the train metrics of metric_loss_time.
EagerOps eager_cross_entropy_forward();

/// Host seconds per eager operation issued from Python (a module's tensor operation): Python, the
/// dispatcher, autocast and autograd's graph recording, ~7 us for a one-element multiply with
/// requires_grad (pytorch/pytorch issue #41383, "overhead of ~7 microseconds for the simplest
/// tensor operations"), plus cudaLaunchKernel's host time, 2-5 us (CUDA C++ Best Practices Guide,
/// "Kernel launch overhead"; 3 taken). derived: 7 + 3 = 10 us.
constexpr double kHfPythonOp_s = 10e-6;
/// Host seconds per kernel launched from C++ without Python: the autocast casts inside an
/// operation and every backward kernel (autograd's engine runs the graph in C++): ~1 us of
/// dispatcher ("same operation called using c++ API would take about a microsecond", issue #41383)
/// plus the launch, 3 us. derived: 1 + 3 = 4 us.
constexpr double kHfCppKernel_s = 4e-6;

/// Bytes autograd keeps for one layer and micro-batch on one GPU in the eager stack, per token:
/// each RMSNorm's fp32 input and normalized product (pow and the multiply save them: 8h with an
/// fp32 residual; a bf16 residual keeps its fp32 cast, 4h, and the bf16 output, 2h); the bf16 cast
/// of the norm output that each linear keeps for its weight gradient (2h per linear, none for
/// LoRA's frozen weights, whose adapters keep the bf16 input itself); Qwen3's q and k norms (the
/// fp32 cast, 4 per element, and with trainable weights the bf16 product, 2); nothing for the
/// rotary embedding (cos and sin need no gradient: q·cos keeps only cos); SDPA's bf16 q, k, v and
/// output (4q + 4kv); o_proj's contiguous input (2q); the MLP's gate, activation, up and product
/// (8f). Full recomputation (gradient_checkpointing) keeps each layer's input (R·h) and one layer
/// in full.
double hf_layer_activation_bytes(const Model& model, const Job& job, const Plan& plan);

/// The stack's memory: fp32 parameters (4 bytes) with autocast's bf16 copies kept for the backward
/// (2), fp32 gradients (4), AdamW's two fp32 moments (8, no master copy); the loss's fp32 buffers
/// at their peak in the loss backward: log_softmax's saved output, nll_loss's zero-filled gradient
/// and log_softmax's gradient (12 bytes per logit); gradients appear as the backward frees the
/// activations (optimizer.zero_grad(set_to_none=True)), so with one micro-batch a step the peak
/// holds the larger of the two, with accumulation both. `generic` is memory_per_gpu's breakdown
/// (its sharding, LoRA adapters and buffers are kept).
MemoryBreakdown hf_memory(const Model& model, const Job& job, const Plan& plan,
                          const MemoryBreakdown& generic);

/// Adds one layer's eager work to `c` (seconds per micro-batch on one GPU): each element-wise and
/// cast kernel's bytes at its kind's share of `hbm_bytes_per_s` (the HBM peak; eager_kernel_share,
/// the one eager-kernel model the FSDP and DeepSpeed stacks use too) plus `kernel_s` per kernel,
/// into the attention and MLP parts
/// (mem_f, mem_b), then the host bound: a forward or backward takes at least the host time issuing
/// its operations, max(GPU time, host time), the GPU idling for the difference.
void hf_eager_layer(LayerCompute& c, const Model& model, const Job& job, const Plan& plan,
                    double hbm_bytes_per_s, double kernel_s);

/// Seconds of the head (forward + backward) with `gemm_s` of output-projection GEMMs: the GEMMs,
/// the loss and embedding work of hf_head_work, each kernel at its kind's share of
/// `hbm_bytes_per_s` (plus `kernel_s` a kernel),
/// bounded below by the host time issuing them.
double hf_eager_head(double gemm_s, const Model& model, const Job& job, const Plan& plan,
                     double hbm_bytes_per_s, double kernel_s);

}  // namespace linkwise::work
