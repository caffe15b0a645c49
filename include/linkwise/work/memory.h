// Memory per GPU of a training plan.
//
// Model states (Rajbhandari et al. 2020, "ZeRO", section 3.1), per parameter a GPU holds:
//   weights 2 bytes (bf16; fp8 training keeps bf16 weights and adds a 1-byte fp8 copy, Micikevicius
//   et al. 2022), gradients 2 bytes, optimizer 12 bytes (fp32 master weight, Adam m and v).
// ZeRO-1 divides the optimizer states by dp, ZeRO-2 the gradients too, ZeRO-3 the weights too.
// Offload moves the optimizer states to CPU memory. LoRA: the base weights are frozen (weights
// only, no gradient, no optimizer state); the adapters (rank r on each targeted d_in x d_out
// matrix: r·(d_in + d_out) parameters) carry all 16 bytes.
//
// Activations per layer and micro-batch, in bytes, after Korthikanti et al. 2022, section 4 (16-bit
// activations, s sequence, b micro-batch, h hidden, a heads, t TP size; every term divided by t
// with sequence parallelism, only the "inner" terms without):
//   outer (norm inputs, QKV and MLP inputs, dropout masks)   4sbh + 2sbh + 2sbh + 2sbh(dropout) =
//   10sbh inner (Q, K, V, attention output, MLP intermediates)      24sbh for GPT (f = 4h); in
//   general
//         2sb(a·d) + 4sb(g·d) + 2sbh + (gated ? 6 : 4)·sbf·k + sbf(dropout)... see memory.cc
//   attention core (scores, softmax, dropout)                 5as²b; 0 with flash attention or
//   selective
// which gives their sbh(34/t + 5as/(ht)) for GPT-3 with SP, 34sbh/t with selective recompute, and
// 2sbh (the layer input, /t with SP) with full recompute. The first pipeline stage keeps the
// activations of min(m, pp) micro-batches in flight under 1F1B, times (1 + (pp-1)/(pp·vpp)) when
// interleaved.
#pragma once

#include <string>
#include <vector>

#include "linkwise/work/job.h"
#include "linkwise/work/model.h"
#include "linkwise/work/plan.h"

namespace linkwise::work {

struct MemoryBreakdown {
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, lora = 0,
         buffers = 0;     ///< bytes
  double total = 0;       ///< bytes, the worst pipeline stage
  double capacity = 0;    ///< the GPU's memory, bytes
  double host_bytes = 0;  ///< CPU memory for offloaded optimizer states, per GPU
  /// The part of `gradients` held unsharded across micro-batches (--grad-sync last), bytes.
  double gradients_held = 0;
  bool fits = false;  ///< total <= capacity
  double headroom() const { return capacity - total; }
};

/// A plan whose peak leaves less than this share of the GPU's memory free gets a note: near full
/// memory PyTorch's caching allocator, finding no cached block for a request, frees its cache and
/// retries the cudaMalloc (torch.cuda.memory_stats num_alloc_retries), which stalls the step
/// (pytorch/pytorch #104509: 46 retries, 7.3 s against 5.3 s a step; mosaicml/composer #1998:
/// "throughput will collapse due to memory thrashing"). The step time does not include it. The
/// share is a margin for the allocator's block rounding and fragmentation, chosen, not fitted:
/// no public figure maps headroom to retries.
inline constexpr double kAllocatorMarginShare = 0.05;

/// A plan that fits with less than kAllocatorMarginShare of the GPU's memory free.
inline bool near_full_memory(const MemoryBreakdown& m) {
  return m.fits && m.capacity > 0 && m.capacity - m.total < kAllocatorMarginShare * m.capacity;
}

/// Parameters a rank of `stage` holds before ZeRO sharding (its share of layers, TP and EP splits,
/// and the embedding on the first stage / output projection on the last).
double stage_params(const Model& model, const Plan& plan, int stage);

/// Bytes of stored activations for one layer and one micro-batch on one GPU.
double layer_activation_bytes(const Model& model, const Job& job, const Plan& plan);
/// The mean over a stage's blocks: layer_activation_bytes, or under --recompute-every N
/// (Job::recompute_every) one block in N checkpointed (2·S·h) and the others keeping everything.
double mean_layer_activation_bytes(const Model& model, const Job& job, const Plan& plan);

/// Context parallelism: the K and V one GPU sends to the next cp rank at each step of the ring
/// attention (Transformer Engine, cp_comm_type "p2p"), per layer and micro-batch, bf16:
/// 2 · 2 bytes · mb · seq/cp · max(1, kv_heads/tp) · head_dim. 0 when cp = 1.
double cp_ring_bytes(const Model& model, const Job& job, const Plan& plan);

/// Memory per GPU on the worst stage. `gpu_memory_bytes` is the GPU's capacity.
MemoryBreakdown memory_per_gpu(const Model& model, const Job& job, const Plan& plan,
                               double gpu_memory_bytes);

/// Trainable parameters of the LoRA adapters (whole model).
double lora_params(const Model& model, const LoraSpec& lora);

/// One layer's LoRA adapter matrices on one GPU, in elements: A (r·d_in) then B (r·d_out) for each
/// target, the expert targets (gate, up, down) once per expert this GPU holds (experts / ep); every
/// matrix split over tp.
std::vector<double> lora_parameter_tensors(const Model& model, const LoraSpec& lora,
                                           const Plan& plan);

/// One layer's trainable parameters on one GPU: its adapters under LoRA (the sum of
/// lora_parameter_tensors), else all its weights (attention / tp, experts / (tp·ep), router,
/// norms).
double layer_trainable_params(const Model& model, const Job& job, const Plan& plan);

}  // namespace linkwise::work
