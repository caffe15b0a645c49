#include "linkwise/work/framework.h"

#include <fmt/format.h>

#include <algorithm>

namespace linkwise::work {

namespace {
// Megatron-core DistributedDataParallel: bucket_size = max(40000000, 1000000 * dp) parameters
// (megatron/core/distributed/distributed_data_parallel.py).
double megatron_bucket(int dp) { return std::max(40e6, 1e6 * dp); }
// PyTorch DDP bucket_cap_mb = 25 (torch.nn.parallel.DistributedDataParallel), fp32 gradients: 25 MiB / 4 B.
constexpr double kDdpBucketParams = 25.0 * (1 << 20) / 4;
// DeepSpeed reduce_bucket_size default 5e8 elements (deepspeed.ai/docs/config-json).
constexpr double kDeepSpeedReduceBucket = 5e8;
}  // namespace

FrameworkTraits framework_traits(const Job& job, const Plan& p) {
  FrameworkTraits t;
  t.framework = job.framework;
  bool half = job.precision == Precision::kFp16;
  switch (job.framework) {
    case Framework::kMegatron:
      t.grad_overlap = p.zero >= 3;  // DDP: overlap_grad_reduce = False; Megatron-FSDP overlaps its collectives
      t.grad_bytes = half ? 2 : 4;
      t.fused_elementwise = true;
      break;
    case Framework::kFsdp:
      t.grad_overlap = true;
      t.grad_bytes = 4;
      t.fused_elementwise = false;
      t.hopper_attention = false;
      t.reduce_every_micro_batch = p.zero == 2;
      t.gather_every_micro_batch = p.zero == 2;
      break;
    case Framework::kDeepSpeed:
      t.grad_overlap = p.zero >= 3;  // overlap_comm: true for stage 3, false otherwise
      t.grad_bytes = 2;
      t.fused_elementwise = false;
      t.hopper_attention = false;
      t.reduce_every_micro_batch = p.zero == 2;
      t.zero3_reduce_bucket_params = kDeepSpeedReduceBucket;
      t.per_module_gather = true;
      t.bucket_params = kDeepSpeedReduceBucket;
      break;
  }
  if (job.grad_overlap != Switch::kDefault) t.grad_overlap = job.grad_overlap == Switch::kOn;
  if (job.fused_elementwise != Switch::kDefault) t.fused_elementwise = job.fused_elementwise == Switch::kOn;
  if (job.framework == Framework::kMegatron) t.bucket_params = t.grad_overlap ? megatron_bucket(p.dp) : 0;
  if (job.framework == Framework::kFsdp) t.bucket_params = kDdpBucketParams;
  return t;
}

std::string framework_problem(const Job& job, const Plan& p) {
  if (job.framework == Framework::kFsdp && p.zero == 1 && p.dp > 1)
    return "fsdp has no ZeRO-1 (zero=2 is SHARD_GRAD_OP, zero=3 FULL_SHARD; or --framework megatron/deepspeed)";
  return "";
}

std::vector<double> zero3_units(const Model& m, const Plan& p, bool per_module) {
  double h = m.hidden, d = m.head_dim > 0 ? m.head_dim : h / m.heads, f = m.ffn;
  double t = p.tp, experts = static_cast<double>(m.experts) / p.ep;
  double q = h * m.heads * d / t, kv = h * m.kv_heads * d / t, o = m.heads * d * h / t;
  double router = m.moe() ? h * m.experts : 0;
  std::vector<double> u;
  if (!per_module) {
    u.push_back(q + 2 * kv + o + experts * (m.gated_ffn ? 3 : 2) * h * f / t + router + 2 * h);
    return u;
  }
  if (m.gated_ffn) {  // Llama-style modules: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj
    u.insert(u.end(), {q, kv, kv, o});
    for (int e = 0; e < static_cast<int>(experts); ++e) u.insert(u.end(), {h * f / t, h * f / t, f * h / t});
  } else {  // GPT-style: fused query_key_value, dense, dense_h_to_4h, dense_4h_to_h
    u.insert(u.end(), {q + 2 * kv, o});
    for (int e = 0; e < static_cast<int>(experts); ++e) u.insert(u.end(), {h * f / t, f * h / t});
  }
  if (router > 0) u.push_back(router);
  return u;
}

}  // namespace linkwise::work
