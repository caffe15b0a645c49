#include "linkwise/work/overlap.h"

#include <algorithm>
#include <cmath>

namespace linkwise::work {

bool persistent_gemms(const GpuSpec& gpu) { return gpu.arch == "hopper"; }

namespace {

// The collectives beside the compute, one after another on the NCCL stream: which one runs and
// until when. Each starts when the one before it ends, or later where delay_next says so (a
// persistent GEMM holding every SM).
class Chain {
 public:
  explicit Chain(const std::vector<OverlapCollective>& c) : c_(c) { begin(0); }
  /// Moves past the collectives that have ended by t; true while one runs at t.
  bool at(double t) {
    while (j_ < c_.size() && end_ <= t) {
      ++j_;
      begin(std::max(end_, not_before_));
    }
    return j_ < c_.size();
  }
  double end() const { return end_; }
  double busbw() const { return c_[j_].busbw_Bps; }
  /// The collective after the running one starts no earlier than `t`.
  void delay_next(double t) { not_before_ = t; }

 private:
  void begin(double start) {
    while (j_ < c_.size() && c_[j_].seconds <= 0) ++j_;
    if (j_ < c_.size()) end_ = start + c_[j_].seconds;
    not_before_ = 0;
  }
  const std::vector<OverlapCollective>& c_;
  size_t j_ = 0;
  double end_ = 0, not_before_ = 0;
};

}  // namespace

double compute_lost_beside_s(const GpuSpec& gpu, const std::vector<OverlapKernel>& kernels,
                             const std::vector<OverlapCollective>& collectives) {
  Chain chain(collectives);
  double t = 0, own = 0;
  for (const OverlapKernel& k : kernels) {
    if (k.seconds <= 0) continue;
    own += k.seconds;
    const double w = k.seconds;
    if (k.persistent) {
      if (!chain.at(t)) {
        t += w;
        continue;
      }
      // N - C CTAs start now; the other C start at min(t_e, t + w) and run w more.
      const double t_e = chain.end();
      const double end = std::min(t_e, t + w) + w;
      // The collective after this one waits for the first CTAs to finish (every SM is held until
      // then: the late CTAs take the SMs the collective frees).
      if (t_e < t + w) chain.delay_next(t + w);
      t = end;
      continue;
    }
    // One CTA per tile: 1 - σ of its speed while a collective runs.
    double left = w;
    while (left > 0) {
      if (!chain.at(t)) {
        t += left;
        break;
      }
      const double rate =
          std::max(1e-9, 1 - comm_kernel_slowdown(gpu, chain.busbw(), k.mem_fraction));
      const double until = chain.end();
      if (t + left / rate <= until) {
        t += left / rate;
        break;
      }
      left -= (until - t) * rate;
      t = until;
    }
  }
  return std::max(0.0, t - own);
}

double share_lost_beside(const GpuSpec& gpu, const std::vector<OverlapKernel>& kernels,
                         const OverlapCollective& collective) {
  const double a = collective.seconds;
  double own = 0;
  for (const OverlapKernel& k : kernels) own += std::max(0.0, k.seconds);
  if (!(a > 0) || !(own > 0)) return 0;
  // Layers enough to outlast the collective (their own time alone already does), at most 64.
  const size_t layers = static_cast<size_t>(std::clamp(std::ceil(a / own), 1.0, 64.0));
  std::vector<OverlapKernel> beside;
  beside.reserve(layers * kernels.size());
  for (size_t i = 0; i < layers; ++i) beside.insert(beside.end(), kernels.begin(), kernels.end());
  const double lost = compute_lost_beside_s(gpu, beside, {collective});
  const double end = layers * own + lost;  // when the kernels end
  return end >= a ? lost / a : lost / end;
}

std::vector<OverlapKernel> layer_kernels(const LayerCompute& lc, const GpuSpec& gpu, const Job& job,
                                         bool backward) {
  const bool persistent = persistent_gemms(gpu);
  const double gemms = lc.gemm_qkv + lc.gemm_proj + lc.gemm_up + lc.gemm_down;
  // Forward: the rest of each block (norms, attention core, activation, adds, copies) between its
  // GEMMs, memory-bound in the layer's proportion.
  const double f_other = std::max(0.0, lc.forward() - gemms);
  const double mu_f = f_other > 0 ? std::clamp(lc.mem_f / f_other, 0.0, 1.0) : 0;
  auto g = [&](double s) { return OverlapKernel{s, persistent, 0}; };
  auto forward = [&](std::vector<OverlapKernel>& out) {
    out.push_back(g(lc.gemm_qkv));
    out.push_back({std::max(0.0, lc.attn_f - lc.gemm_qkv - lc.gemm_proj), false, mu_f});
    out.push_back(g(lc.gemm_proj));
    out.push_back(g(lc.gemm_up));
    out.push_back({std::max(0.0, lc.mlp_f - lc.gemm_up - lc.gemm_down), false, mu_f});
    out.push_back(g(lc.gemm_down));
  };
  std::vector<OverlapKernel> out;
  if (!backward) {
    forward(out);
    return out;
  }
  const bool full = job.recompute == Recompute::kFull;
  const int k = job.mode == Mode::kLora ? 1 : 2;  // input gradients (and weight gradients)
  if (full) forward(out);
  const double mlp_other =
      std::max(0.0, lc.mlp_b - (full ? lc.mlp_f : 0) - k * (lc.gemm_up + lc.gemm_down));
  const double attn_other =
      std::max(0.0, lc.attn_b - (full ? lc.attn_f : 0) - k * (lc.gemm_qkv + lc.gemm_proj));
  const double mem_b = std::max(0.0, lc.mem_b - (full ? lc.mem_f : 0));
  const double mu_b =
      mlp_other + attn_other > 0 ? std::clamp(mem_b / (mlp_other + attn_other), 0.0, 1.0) : 0;
  for (int i = 0; i < k; ++i) out.push_back(g(lc.gemm_down));
  out.push_back({mlp_other, false, mu_b});
  for (int i = 0; i < k; ++i) out.push_back(g(lc.gemm_up));
  for (int i = 0; i < k; ++i) out.push_back(g(lc.gemm_proj));
  out.push_back({attn_other, false, mu_b});
  for (int i = 0; i < k; ++i) out.push_back(g(lc.gemm_qkv));
  return out;
}

}  // namespace linkwise::work
