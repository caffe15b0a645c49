// How long a GPU computes one transformer layer: matrix multiplies against the tensor-core peak,
// the rest against memory bandwidth.
//
// Matrix multiply of m x k by k x n, `count` times (a batched GEMM), on a GPU with peak P (FLOP/s,
// the catalog's bf16_dense_tflops, or fp8_dense_tflops for fp8 jobs), memory bandwidth W (bytes/s)
// and N SMs:
//
//   t = max( 2·m·n·k·count / (P · η · q),  bytes / (W · η_mem) ) + t_launch
//
//   η   the fraction of peak large GEMMs reach: 0.85 at the clock they run at, times the SM clock a
//       dense GEMM holds under the board power limit over the clock the peak is quoted at, for
//       parts whose catalog entry gives both (gemm_sustained_clock_mhz, tensor_peak_clock_mhz: H100
//       SXM, H200 SXM: 0.85 · 1455 / 1830 = 0.676); else by architecture (0.85; Hopper, Blackwell
//       0.75)
//   q   wave quantization (NVIDIA "Matrix Multiplication Background User's Guide", DU-09799-001,
//   ch. 3):
//       the output is cut into 256 x 128 tiles, the tiles run in waves of N; q = tiles / (waves ·
//       N)
//       split-K: an output of fewer tiles than SMs splits its k loop s = min(floor(N / tiles),
//       floor(k / 256)) ways over the idle SMs (CUTLASS split-K, cuBLAS split-K/stream-K):
//       q = tiles·s / (waves · N), and the fp32 partial sums are written and read (8·m·n·s bytes)
//   bytes  2·(m·k + k·n + m·n)·count at 2 bytes per element (the roofline's memory side; the k x n
//       operand, a layer's weight, at its own bytes per element), at η_mem = 0.85 of W
//
// Fused attention (FlashAttention-2, Dao 2023) under Megatron-core is charged as its causal
// kernels run (FrameworkTraits::causal_attention): fused_attention_time, per backend (cuDNN or
// FlashAttention-2 on Hopper, --attention), once per context-parallel ring step, each step on s /
// cp keys. The other stacks keep the whole 4·s²·a·d/t FLOPs at η · kFlashFactor (FlashAttention-2
// on Hopper: 0.34 of peak) forward and 2.5x those FLOPs (it recomputes the scores) backward, a
// charge that stands in for a cost of theirs not found yet (docs/VALIDATION.md). Without it,
// the scores are two batched GEMMs and the softmax / dropout read and write the b·a/t·s² score
// matrix. Element-wise work (norms, residual adds, activation function, dropout) moves bytes: each
// op reads its inputs and writes its output once (16-bit), backward moves twice the forward bytes.
#pragma once

#include <string>

#include "linkwise/work/job.h"
#include "linkwise/work/model.h"
#include "linkwise/work/plan.h"

namespace linkwise::topo {
struct Node;
}

namespace linkwise::work {

struct GpuSpec {
  std::string part;
  double peak_flops = 0;  ///< dense tensor-core FLOP/s at the job's precision
  /// 16-bit dense peak: what fused attention and LoRA adapters run at in fp8 jobs (= peak_flops
  /// otherwise)
  double half_peak_flops = 0;
  bool fp8 = false;  ///< GEMM inputs cast to fp8 (Transformer Engine)
  std::string arch;  ///< the catalog's architecture: "ampere", "hopper", ...
  double memory_bytes_per_s = 0;
  double memory_bytes = 0;
  int sms = 100;
  double gemm_efficiency = 0.8;  ///< η under sustained dense load (a training step's GEMMs)
  /// η of GEMMs in bursts between lighter, memory-bound work (serving's prefills between decode
  /// steps): the architecture's figure, without the power-capped clock
  double burst_gemm_efficiency = 0.8;
  double tile_m = 256;  ///< rows of the largest GEMM output tile (128 before Ampere)
};

/// The precision a job runs at on this GPU: kAuto is bf16 where the catalog gives
/// bf16_dense_tflops, else fp16.
Precision resolve_precision(const topo::Node& gpu, Precision asked);
/// Whether fused attention (FlashAttention-2: Ampere and newer, Dao 2023) runs on this GPU.
bool has_fused_attention(const topo::Node& gpu);

/// The figures of a chassis GPU node (topo::Node::fig), for a job's precision. Throws InputError
/// when the GPU has no tensor cores for it ("a100-sxm has no FP8 tensor cores").
GpuSpec gpu_spec(const topo::Node& gpu, Precision precision);

// fp8 GEMMs reach a smaller share of their (twice as high) peak than 16-bit GEMMs: on Hopper the
// best dense fp8 GEMM of DeepGEMM reaches 1404 of 1979 TFLOP/s (71 %; deepseek-ai/DeepGEMM PR #74,
// "Normal GEMMs for dense models", 4096x7168x16384) where bf16 cuBLAS reaches 797.5 of 989 (81 %;
// zzc0721/torch-performance-test-data issue #79, H100 80GB HBM3, 8192^3). derived: 0.71 / 0.81 =
// 0.88 of the GPU's GEMM efficiency η. Used by the training step's linear layers and the serving
// step alike. Checked on one H200 (data/measured/h200-compute-shapes-2026-12-01, fp8 `_scaled_mm`
// against the bf16 GEMM of the same shape): fp8 ran 1.48-1.87x the bf16 speed, median 1.80x = 0.90
// of the 2x the peaks give; not independent of that run's clock (docs/VALIDATION.md, "Compute by
// shape").
inline constexpr double kFp8GemmShareOfEta = 0.88;

/// A GEMM's time in parts: its tensor-core side, its memory side, its launch (seconds).
struct GemmTime {
  double compute_s = 0, memory_s = 0, launch_s = 0;
  double total() const { return (compute_s > memory_s ? compute_s : memory_s) + launch_s; }
  bool memory_bound() const { return memory_s >= compute_s; }
};
/// A (batched) GEMM of m x k by k x n, `count` times; see the header note. `b_bytes`: bytes per
/// element of the k x n operand (a layer's weight: 2 in 16 bits, 1 in fp8, ~0.52 in int4).
GemmTime gemm_parts(const GpuSpec& gpu, double m, double n, double k, double count = 1,
                    double b_bytes = 2);
/// The GPU as a training step's linear layers see it: in fp8 jobs (Transformer Engine's fp8
/// GEMMs) η times 0.88, the share of their twice-as-high peak fp8 GEMMs reach against 16-bit ones
/// (work/compute.cc); unchanged otherwise.
GpuSpec weight_gemm_gpu(GpuSpec gpu);
/// Seconds for a (batched) GEMM: gemm_parts(...).total().
double gemm_time(const GpuSpec& gpu, double m, double n, double k, double count = 1,
                 double b_bytes = 2);
/// Fraction of the 16-bit dense peak fused attention runs at: FlashAttention-2 on Hopper
/// (`fa2_on_hopper`: it issues Ampere-style mma.sync) 0.34, otherwise η · 0.75 (cuDNN fused
/// attention, FlashAttention-3 on Hopper; FlashAttention-2 elsewhere).
double fused_attention_efficiency(const GpuSpec& gpu, bool fa2_on_hopper);
/// Seconds for causal fused attention whose unmasked forward would be `full_flops` (4·b·s²·a·d)
/// over `keys` keys per query: the kernel skips the tiles above the diagonal (half the FLOPs;
/// 2.5x those backward) and pays a fixed tail per query tile, by backend: FlashAttention-2 on
/// Hopper (`fa2_on_hopper`: Ampere-style mma.sync, PyTorch SDPA flash) or cuDNN (Transformer
/// Engine) on Hopper, derived from the H200 measurement; FlashAttention-2 elsewhere at η · 0.75.
double fused_attention_time(const GpuSpec& gpu, bool fa2_on_hopper, double full_flops, double keys,
                            bool backward);
/// Seconds for an element-wise kernel moving `bytes`.
double memory_time(const GpuSpec& gpu, double bytes);

/// What one eager PyTorch kernel is, for the share of the HBM peak its bytes stream at
/// (eager_kernel_share). Every stack that runs element-wise work in eager PyTorch (the Hugging
/// Face stack, FSDP, DeepSpeed) charges each kernel it launches by its kind; fused stacks
/// (Megatron-core, Transformer Engine) are not charged through these.
enum class EagerKernel {
  kElementwise,   ///< PyTorch's element-wise kernel: add, mul, pow, neg, a dtype cast, a strided
                  ///< copy (contiguous(), cat), and a row reduction such as mean(-1)
  kActivation,    ///< an activation with transcendental math: GeLU, SiLU
  kSoftmax,       ///< a (log-)softmax pass over rows (the loss)
  kLayerNorm,     ///< torch.nn.LayerNorm / F.layer_norm: one kernel
  kRmsNorm,       ///< F.rms_norm / torch.nn.RMSNorm where PyTorch runs it as one kernel
  kDropout,       ///< F.dropout in training
  kSlicedSwiglu,  ///< silu(gate) * up with gate and up column slices of one tensor (two kernels)
};

/// Share of the HBM peak one eager kernel of kind `k` streams its bytes at. derived: measured on
/// one H200 SXM (data/measured/h200-compute-shapes-2026-12-01, compute-shapes.json "eager",
/// PyTorch 2.11, 64-128 MiB bf16 tensors, each kernel between two CUDA events; bytes as
/// scripts/gpu-compute-shapes.py counts them) against its 4.8 TB/s peak: add 3478 GB/s (0.72, the
/// element-wise kernel's: casts, strided copies and reductions not measured apart), GeLU 2395
/// (0.50), fp32 softmax 3702 (0.77), LayerNorm 1888 (0.39), F.rms_norm 2355 (0.49), dropout p=0.1
/// 2218 (0.46), silu(up[:, :f]) * up[:, f:] 1839 (0.38). Applied to other GPUs as the same share
/// of their own HBM peak: an assumption (no other part measured here).
double eager_kernel_share(EagerKernel k);

/// Eager kernels and their bytes: `bytes` moved in HBM, `peak_bytes` the same bytes each divided
/// by its kernel's share (seconds at the HBM peak W: peak_bytes / W), `kernels` launched.
struct EagerOps {
  double bytes = 0, peak_bytes = 0, kernels = 0;
  /// Adds `kernels` kernels of kind `k` moving `bytes` in all.
  void add(EagerKernel k, double bytes, double kernels = 1);
  /// The bytes' overall share of the peak (bytes / peak_bytes; 1 when empty).
  double share() const { return peak_bytes > 0 ? bytes / peak_bytes : 1; }
};

/// Kernels of one eager RMSNorm per element (Hugging Face's LlamaRMSNorm / Qwen3RMSNorm, and
/// torchtitan's RMSNorm of its Llama model) on an input of `in_bytes` per element with a weight of
/// `weight_bytes`: to(float32) (read in, write 4; no kernel for an fp32 input), pow(2) (read 4,
/// write 4), mean(-1) (read 4), + eps and rsqrt (one value per row: no bytes counted), the product
/// (read 4, write 4), to(input dtype) (read 4, write in; none for fp32), weight * x (read in,
/// write the promoted type): every one an element-wise kernel. bf16: 36 bytes, 8 kernels; fp32:
/// 28 bytes, 6 kernels.
EagerOps eager_rms_norm(double in_bytes, double weight_bytes);
/// Bytes per element of an eager RMSNorm's output (the promoted type of its input and weight).
double eager_rms_norm_out(double in_bytes, double weight_bytes);

/// Kernels of an eager SwiGLU per element of the FFN width, act_fn(gate) * up with gate and up
/// separate bf16 tensors (Hugging Face LlamaMLP / Qwen3MLP, torchtitan FeedForward
/// w2(silu(w1 x) * w3 x)): silu (read 2, write 2, an activation) and the product (read 4, write 2,
/// element-wise).
EagerOps eager_swiglu();

/// Compute of one layer for one micro-batch on one GPU, split at the TP collectives:
/// attention block and MLP block, forward and backward (backward includes the recomputation the
/// job's recompute mode needs). Seconds; FLOPs are what the GPU executes.
struct LayerCompute {
  double attn_f = 0, mlp_f = 0, attn_b = 0, mlp_b = 0;
  double flops_f = 0, flops_b = 0;
  double mem_f = 0,
         mem_b = 0;  ///< memory-bound (element-wise, softmax) part of forward / backward, seconds
  /// Forward seconds of the GEMMs beside the TP collectives (TP communication overlap): QKV and
  /// output projection, MLP up (gate and up) and down; the MLP's are 0 for MoE layers (their GEMMs
  /// sit behind the expert all-to-alls). A backward dgrad or wgrad GEMM takes as long as its
  /// forward.
  double gemm_qkv = 0, gemm_proj = 0, gemm_up = 0, gemm_down = 0;
  int sms = 0;  ///< the GPU's SMs, which overlap kernels on SMs take from the GEMMs beside them
  /// The attention core (fused attention) forward and backward, seconds, part of attn_f and
  /// attn_b: context parallelism runs it as cp ring steps, each beside one K,V transfer. core_b
  /// holds selective recomputation's second core forward too.
  double core_f = 0, core_b = 0;
  double forward() const { return attn_f + mlp_f; }
  double backward() const { return attn_b + mlp_b; }
};
LayerCompute layer_compute(const Model& model, const Job& job, const Plan& plan,
                           const GpuSpec& gpu);

/// Bytes the context-parallel ring moves outside its attention kernels in one layer for one
/// micro-batch on one GPU, forward and backward: merging each ring step's partial result into the
/// running one (0 without context parallelism or without fused attention). See compute.cc.
struct RingMergeBytes {
  double forward = 0, backward = 0;
};
RingMergeBytes cp_ring_merge_bytes(const Model& model, const Job& job, const Plan& plan);

/// Seconds a micro-batch spends on the framework's metric cross-entropy passes over the logits
/// (FrameworkTraits::metric_loss_passes): each the eager forward of kHfLossForwardBytes a logit at
/// the element-wise and softmax kernels' shares of HBM peak. 0 where the framework has none.
double metric_loss_time(const Model& model, const Job& job, const Plan& plan, const GpuSpec& gpu);

/// Output projection and loss (last stage) plus embedding (first stage), forward + backward,
/// seconds.
double head_compute(const Model& model, const Job& job, const Plan& plan, const GpuSpec& gpu);

/// Fraction by which a GPU's compute slows while an NCCL collective with bus bandwidth `busbw_Bps`
/// runs beside it (docs/training.md, "Communication kernels beside compute"):
///
///   σ = (1 - μ)·C/N + μ·min(1, k·busbw/W),   C = min(32, max(2, ceil(busbw / r_ch)))
///
/// C the NCCL channels (one CTA each, on an SM of its own), N the SMs, r_ch = 10 GB/s what one
/// channel moves, μ the memory-bound share of the overlapped compute, k = 2 bytes of HBM traffic
/// per bus byte, W the memory bandwidth. Compute overlapped for `a` seconds loses σ·a seconds.
double comm_kernel_slowdown(const GpuSpec& gpu, double busbw_Bps, double mem_fraction);
/// NCCL channels (SMs) a collective of bus bandwidth `busbw_Bps` runs on (see
/// comm_kernel_slowdown).
int nccl_channels(double busbw_Bps);

/// Seconds a step spends casting the linear layers' weights to fp8 with their transposes (4 bytes
/// per parameter at HBM speed, once a step: Megatron-core's fp8 weight cache); 0 unless gpu.fp8.
double fp8_weight_cast_time(double linear_params_local, const GpuSpec& gpu);

/// The optimizer step on the GPU (AdamW, memory-bound: `bytes_per_param` moved per trainable
/// parameter it holds, at `share` of the HBM peak; 28 bytes for a fused AdamW, the framework's
/// figures in FrameworkTraits).
double optimizer_time(double trainable_params_local, const GpuSpec& gpu,
                      double bytes_per_param = 28, double share = 1);

/// FLOPs of one training step of the whole job per token, as MFU counts them (Chowdhery et al.
/// 2022, appendix B): 3 x forward for full training; LoRA: forward, input gradients (1 x the weight
/// matmuls), the attention core's backward (2x) and the adapters (3x). No recomputation.
double model_flops_per_token(const Model& model, const Job& job);

}  // namespace linkwise::work
