#include "linkwise/work/memory.h"

#include <algorithm>
#include <cmath>

#include "linkwise/work/framework.h"
#include "linkwise/work/hf_stack.h"

namespace linkwise::work {

namespace {

double head_dim(const Model& m) {
  return m.head_dim > 0 ? m.head_dim : static_cast<double>(m.hidden) / m.heads;
}

// Mixed-precision bytes per parameter (Rajbhandari et al. 2020, ZeRO, section 3.1).
constexpr double kWeightBytes = 2;  // bf16 weights
constexpr double kFp8CopyBytes =
    1;                            // fp8 weight copy kept by fp8 training (Micikevicius et al. 2022)
constexpr double kGradBytes = 2;  // bf16 gradients
constexpr double kOptimizerBytes = 12;  // fp32 master weight + Adam m + Adam v
// Pure bf16 (Job::fp32_master off): no master copy, Adam m and v in the weights' bf16
// (torch.optim.AdamW's state tensors are zeros_like(param)).
constexpr double kBf16OptimizerBytes = 4;
// Runtime reserve: CUDA context and NCCL's per-peer channel buffers. derived: estimate, about 0.5
// GiB of CUDA context (PyTorch reports 300-600 MiB on A100/H100) plus NCCL_BUFFSIZE 4 MiB x 2
// directions x up to 32 channels x 2 protocols (NCCL docs, NCCL_BUFFSIZE default 4 MiB).
constexpr double kRuntimeReserveBytes = 1.0 * (1ull << 30);
// Gradient bucket of PyTorch DDP (bucket_cap_mb = 25, torch.nn.parallel.DistributedDataParallel
// docs); two in flight while one reduces and the next fills.
constexpr double kBucketBytes = 25.0 * (1 << 20);

}  // namespace

namespace {
// r·d_in and r·d_out of one target's A and B, and whether the target is an expert's matrix.
struct LoraShape {
  double in = 0, out = 0;
  bool expert = false;
};
LoraShape lora_shape(const Model& m, const std::string& t) {
  const double h = m.hidden, d = head_dim(m), f = m.ffn;
  if (t == "q") return {h, m.heads * d, false};
  if (t == "k" || t == "v") return {h, m.kv_heads * d, false};
  if (t == "o") return {m.heads * d, h, false};
  if (t == "gate" || t == "up") return {h, f, true};
  if (t == "down") return {f, h, true};
  return {};
}
}  // namespace

double lora_params(const Model& m, const LoraSpec& lora) {
  double per_layer = 0;
  for (const auto& t : lora.targets) {
    const LoraShape s = lora_shape(m, t);
    per_layer += (s.expert ? m.experts : 1) * lora.rank * (s.in + s.out);
  }
  return per_layer * m.layers;
}

std::vector<double> lora_parameter_tensors(const Model& m, const LoraSpec& lora, const Plan& p) {
  std::vector<double> u;
  const double r = lora.rank, t = p.tp;
  for (const auto& target : lora.targets) {
    const LoraShape s = lora_shape(m, target);
    const int copies = s.expert ? std::max(1, m.experts / p.ep) : 1;  // the experts this GPU holds
    for (int e = 0; e < copies; ++e) u.insert(u.end(), {r * s.in / t, r * s.out / t});
  }
  return u;
}

double layer_trainable_params(const Model& m, const Job& job, const Plan& p) {
  if (job.mode == Mode::kLora) {
    double sum = 0;
    for (double e : lora_parameter_tensors(m, job.lora, p)) sum += e;
    return sum;
  }
  const double router = m.moe() ? static_cast<double>(m.hidden) * m.experts : 0;
  return m.attention_params() / p.tp + m.experts * m.expert_params() / (p.tp * p.ep) + router +
         2.0 * m.hidden;
}

double stage_params(const Model& m, const Plan& p, int stage) {
  double layers = static_cast<double>(m.layers) / p.pp;
  double router = m.moe() ? static_cast<double>(m.hidden) * m.experts : 0;
  double per_layer = m.attention_params() / p.tp + m.experts * m.expert_params() / (p.tp * p.ep) +
                     router + 2.0 * m.hidden;
  double params = layers * per_layer;
  double table = static_cast<double>(m.vocab) * m.hidden / p.tp;  // vocabulary-parallel embedding
  if (stage == 0) params += table;
  if (stage == p.pp - 1 && (!m.tied_embeddings || p.pp > 1)) params += table + m.hidden;
  return params;
}

double layer_activation_bytes(const Model& m, const Job& job, const Plan& p) {
  // S: the tokens of one micro-batch on this GPU; context parallelism keeps seq/cp of each
  // sequence (Korthikanti's s becomes s/cp; the fused kernel's softmax statistics too).
  double S =
      static_cast<double>(job.seq) * (p.micro_batch > 0 ? p.micro_batch : job.micro_batch) / p.cp;
  double h = m.hidden, d = head_dim(m), f = m.ffn, t = p.tp;
  double outer_div = (p.sp && p.tp > 1) ? t : 1;
  if (job.recompute == Recompute::kFull) return 2 * S * h / outer_div;
  if (job.recompute == Recompute::kOp) {
    // torchtitan's per-op policy (Recompute::kOp): the block's input, the attention kernel's
    // output and its fp32 log-sum-exp, the reduce-scatters' outputs (SP), and the odd linear
    // GEMMs' outputs (compute.cc): Q and V, then gate and down (w1, w2) in a gated MLP, else up. A
    // MoE block's experts run grouped GEMMs, which the policy does not save.
    const double kv_t = std::max(m.kv_heads * d / t, d);
    const double mm_out = m.heads * d / t + kv_t + (m.moe() ? 0 : m.gated_ffn ? f / t + h : f / t);
    const double rs = (p.sp && p.tp > 1) ? 2 * 2 * S * h / t : 0;
    return 2 * S * h / outer_div + 2 * S * m.heads * d / t + 4 * S * m.heads / t + rs +
           2 * S * mm_out;
  }
  // Korthikanti et al. 2022, section 4.1, generalised to GQA, gated MLPs and MoE (see memory.h).
  double outer = 4 * S * h + 2 * S * h + 2 * S * h + (m.dropout ? 2 * S * h : 0);
  double kv =
      std::max(m.kv_heads * d / t, d);  // a KV head is replicated when tp exceeds their count
  double inner = 2 * S * m.heads * d / t + 2 * 2 * S * kv + 2 * S * m.heads * d / t +
                 m.top_k * (m.gated_ffn ? 6 : 4) * S * f / t;
  double core = 0;
  if (job.recompute == Recompute::kNone) {
    double scores = static_cast<double>(m.heads) / t * job.seq * S;  // a/t · s² · b
    core = job.flash_attention ? 4 * S * m.heads / t : scores * (m.dropout ? 5 : 2);
  }
  return outer / outer_div + inner + core;
}

double mean_layer_activation_bytes(const Model& m, const Job& job, const Plan& p) {
  if (job.recompute != Recompute::kFull || job.recompute_every <= 1)
    return layer_activation_bytes(m, job, p);
  Job none = job;
  none.recompute = Recompute::kNone;
  const double w = 1.0 / job.recompute_every;  // the checkpointed share of the blocks
  return w * layer_activation_bytes(m, job, p) + (1 - w) * layer_activation_bytes(m, none, p);
}

double cp_ring_bytes(const Model& m, const Job& job, const Plan& p) {
  if (p.cp <= 1) return 0;
  const int mb = p.micro_batch > 0 ? p.micro_batch : job.micro_batch;
  // K and V of this GPU's KV heads (a KV head is replicated when tp exceeds their count), bf16.
  const double kv_heads = std::max(1.0, static_cast<double>(m.kv_heads) / p.tp);
  return 2.0 * 2.0 * mb * (static_cast<double>(job.seq) / p.cp) * kv_heads * head_dim(m);
}

MemoryBreakdown memory_per_gpu(const Model& m, const Job& job, const Plan& p, double capacity) {
  MemoryBreakdown best;
  int mb = p.micro_batch > 0 ? p.micro_batch : job.micro_batch;
  double S = static_cast<double>(job.seq) * mb / p.cp;  // this GPU's tokens of a micro-batch
  int micro = std::max(1, micro_batches(p, job));
  double in_flight = std::min(micro, p.pp);
  if (p.vpp > 1) in_flight *= 1.0 + static_cast<double>(p.pp - 1) / (p.pp * p.vpp);
  double per_layer = mean_layer_activation_bytes(m, job, p);
  double layers = static_cast<double>(m.layers) / p.pp;
  // --grad-sync last: bytes a parameter of the unsharded gradients held across micro-batches.
  double held_grad_bytes = 0;
  if (micro > 1 && p.zero >= 3) {
    const FrameworkTraits fw = framework_traits(job, p);
    if (fw.zero3_sync_last) held_grad_bytes = fw.grad_bytes;
  }
  for (int stage : {0, p.pp - 1}) {
    MemoryBreakdown r;
    double params = stage_params(m, p, stage);
    const double sd = p.shard_size();  // HSDP shards over its shard group only
    double w_div = p.zero >= 3 ? sd : 1, g_div = p.zero >= 2 ? sd : 1, o_div = p.zero >= 1 ? sd : 1;
    double wbytes = job.mode == Mode::kLora
                        ? base_weight_bytes(job)
                        : kWeightBytes + (job.precision == Precision::kFp8 ? kFp8CopyBytes : 0);
    r.weights = params * wbytes / w_div;
    double trainable = params;
    const double opt_bytes =
        job.fp32_master == Switch::kOff ? kBf16OptimizerBytes : kOptimizerBytes;
    // Parameters with gradients: the adapters under LoRA, else the stage's.
    const double adapters =
        job.mode == Mode::kLora ? layer_trainable_params(m, job, p) * layers : 0;
    if (job.mode == Mode::kLora) {
      r.lora = adapters * (kWeightBytes + kGradBytes + (job.offload_optimizer ? 0 : opt_bytes));
      r.host_bytes = job.offload_optimizer ? adapters * opt_bytes : 0;
      trainable = 0;
    }
    r.gradients = trainable * kGradBytes / g_div;
    // --grad-sync last: each GPU accumulates its whole (TP-split) gradients, unsharded, in the
    // type they are reduced in, until the last micro-batch reduce-scatters them (FSDP2 keeps them
    // in reduce_dtype: FSDPParam.unsharded_accumulated_grad).
    if (held_grad_bytes > 0) {
      r.gradients_held = (job.mode == Mode::kLora ? adapters : params) * held_grad_bytes;
      r.gradients += r.gradients_held;
    }
    r.optimizer = job.offload_optimizer ? 0 : trainable * opt_bytes / o_div;
    if (job.mode != Mode::kLora && job.offload_optimizer)
      r.host_bytes = trainable * opt_bytes / o_div;
    r.activations = per_layer * layers * in_flight;
    if (job.recompute == Recompute::kFull) {  // one layer recomputed in full during its backward
      Job sel = job;
      sel.recompute = Recompute::kSelective;
      r.activations += layer_activation_bytes(m, sel, p);
    } else if (job.recompute == Recompute::kOp) {  // one layer's recomputed tensors beside them
      Job none = job;
      none.recompute = Recompute::kNone;
      r.activations += std::max(0.0, layer_activation_bytes(m, none, p) - per_layer);
    }
    if (stage == p.pp - 1) r.activations += 6 * S * m.vocab / p.tp;  // bf16 logits and fp32 softmax
    double sp_div = (p.sp && p.tp > 1) ? p.tp : 1;
    if (stage == 0) r.activations += 2 * S * m.hidden / sp_div * in_flight;  // embedding output
    r.buffers = kRuntimeReserveBytes + 2 * kBucketBytes;
    if (p.tp > 1) r.buffers += 2 * 2 * S * m.hidden;  // gathered sequence for the TP collectives
    if (p.cp > 1)  // the ring's K,V in flight: the chunk being received beside the one in use
      r.buffers += 2 * cp_ring_bytes(m, job, p);
    if (p.zero >= 3)  // two layers of gathered weights (one in use, one prefetched)
      r.buffers += 2 * (m.layer_params() / p.tp) * block_gather_bytes(job);
    r.total = r.weights + r.gradients + r.optimizer + r.activations + r.lora + r.buffers;
    if (r.total >= best.total) best = r;
  }
  best.capacity = capacity;
  best.fits = best.total <= capacity;
  if (job.framework == Framework::kHf) return hf_memory(m, job, p, best);  // hf_stack.h
  return best;
}

}  // namespace linkwise::work
