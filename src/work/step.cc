#include "linkwise/work/step.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "linkwise/util/error.h"
#include "linkwise/work/overlap.h"
#include "work/step_impl.h"

namespace linkwise::work {

using comm::Op;

StepModel::Impl::Impl(const topo::Chassis& c)
    : chassis(c), routing(c), res(routing.resources()), nccl(comm::nccl_options(c)) {}

const comm::Communicator& StepModel::Impl::comm(const std::vector<int>& nodes) {
  auto it = comms.find(nodes);
  if (it == comms.end())
    it = comms.emplace(nodes, std::make_unique<comm::Communicator>(routing, nodes, nccl)).first;
  return *it->second;
}

std::pair<double, double> StepModel::Impl::timed(const std::vector<int>& nodes, Op op,
                                                 double bytes) {
  if (nodes.size() < 2 || bytes <= 0) return {0, 0};
  auto key = std::make_tuple(nodes, static_cast<int>(op), bytes);
  auto it = times.find(key);
  if (it != times.end()) return it->second;
  const double pieces = message_pieces(bytes);
  auto pr = comm(nodes).predict(op, bytes / pieces);
  return times.emplace(key, std::make_pair(pieces * pr.time_s, pr.busbw_Bps)).first->second;
}

void contention_periods(StepModel::Impl& impl, const StepTraffic& t, const Placement& pl,
                        const GpuSpec& gpu, const Job& job, Periods& r) {
  double mu_f = r.lc.forward() > 0 ? r.lc.mem_f / r.lc.forward() : 0;
  double mu_b = r.lc.backward() > 0 ? r.lc.mem_b / r.lc.backward() : 0;
  auto lost = [&](const std::vector<Coll>& cs, double mu) {
    double s = 0;
    for (const Coll& c : cs) {
      auto [a, bw] = impl.timed(first_group(pl, c.group), c.op, c.bytes);
      s += comm_kernel_slowdown(gpu, bw, mu) * a;
    }
    return s;
  };
  // Persistent GEMMs (Hopper) split into two waves beside an NCCL kernel: the layer's kernels
  // one by one against the chain of collectives (overlap.h).
  const bool waves = persistent_gemms(gpu);
  auto chain = [&](const std::vector<Coll>& cs) {
    std::vector<OverlapCollective> out;
    for (const Coll& c : cs) {
      auto [a, bw] = impl.timed(first_group(pl, c.group), c.op, c.bytes);
      out.push_back({a, bw});
    }
    return out;
  };
  auto kernels_b = [&] { return layer_kernels(r.lc, gpu, job, true); };
  // ZeRO-3: beside the forward and the backward of every micro-batch
  r.slow_f =
      waves ? compute_lost_beside_s(gpu, layer_kernels(r.lc, gpu, job, false), chain(t.beside_f))
            : lost(t.beside_f, mu_f);
  r.slow_b =
      waves ? compute_lost_beside_s(gpu, kernels_b(), chain(t.beside_b)) : lost(t.beside_b, mu_b);
  if (t.buckets > 0) {  // gradient buckets beside the last micro-batch's backward
    auto [c, bw] = impl.timed(first_group(pl, t.bucket.group), t.bucket.op, t.bucket.bytes);
    if (c > 0)
      r.dp_sigma = waves ? share_lost_beside(gpu, kernels_b(), {c, bw})
                         : comm_kernel_slowdown(gpu, bw, mu_b);
  }
}

std::vector<int> first_group(const Placement& pl, GroupKind g) {
  switch (g) {
    case GroupKind::kTp:
      return pl.tp_group(0, 0);
    case GroupKind::kEp:
      return pl.ep_group(0, 0, 0);
    case GroupKind::kDp:
      return pl.dp_group(0, 0);
    case GroupKind::kStagePair:
      return pl.pp > 1 ? std::vector<int>{pl.node(0, 0, 0), pl.node(0, 0, 1)} : std::vector<int>{};
    case GroupKind::kShard:
      return pl.shard_group(0, 0, 0);
    case GroupKind::kReplica:
      return pl.replica_group(0, 0, 0);
    case GroupKind::kCp:
      return pl.cp > 1 ? pl.cp_group(0, 0, 0) : std::vector<int>{};
  }
  return {};
}

Shape shape_of(const Model& m, const Job& job, const Plan& p) {
  Shape sh;
  sh.mb = p.micro_batch > 0 ? p.micro_batch : job.micro_batch;
  sh.m = micro_batches(p, job);
  sh.S = static_cast<double>(job.seq) * sh.mb / p.cp;
  sh.act_bytes = 2 * sh.S * m.hidden;
  double router = m.moe() ? static_cast<double>(m.hidden) * m.experts : 0;
  sh.layer_weights = m.attention_params() / p.tp + m.experts * m.expert_params() / (p.tp * p.ep) +
                     router + 2.0 * m.hidden;
  sh.layer_trainable = layer_trainable_params(m, job, p);
  sh.layers_per_stage = m.layers / p.pp;
  sh.stage_trainable = job.mode == Mode::kLora
                           ? sh.layer_trainable * sh.layers_per_stage
                           : std::max(stage_params(m, p, 0), stage_params(m, p, p.pp - 1));
  return sh;
}

Periods estimate_periods(StepModel::Impl& impl, const Model& m, const Job& job, const Plan& p,
                         const GpuSpec& gpu, const Shape& sh) {
  Periods r;
  Placement pl = place(p, impl.chassis);
  r.lc = layer_compute(m, job, p, gpu);
  double head = head_compute(m, job, p, gpu);
  r.head_f = head / 3, r.head_b = head - r.head_f;
  StepTraffic t = step_traffic(m, job, p, sh, r.lc);
  auto time = [&](const Coll& c) {
    return c.host_s + impl.time(first_group(pl, c.group), c.op, c.bytes);
  };
  auto sum = [&](const std::vector<Coll>& cs) {
    double s = 0;
    for (const Coll& c : cs) s += time(c);
    return s;
  };
  for (bool backward : {false, true}) {
    // The critical path without the expert all-to-alls, less the layer's compute: the TP
    // collectives compute does not hide (TP overlap: max(collective, compute beside it)).
    // The ring attention's transfers count apart: each what it outlasts the attention beside it.
    double path = 0, ep = 0, cp = 0;
    for (const PathItem& it : backward ? t.backward : t.forward) {
      if (it.is_compute()) {
        path += it.compute_s;
      } else if (it.coll.group == GroupKind::kEp) {
        ep += time(it.coll);
      } else if (it.coll.group == GroupKind::kCp) {
        path += it.beside_s;
        cp += std::max(0.0, time(it.coll) - it.beside_s);
      } else {
        path += std::max(time(it.coll), it.beside_s);
      }
    }
    double compute = backward ? r.lc.backward() : r.lc.forward();
    double tp = std::max(0.0, path - compute);
    double beside = sum(backward ? t.beside_b : t.beside_f);
    (backward ? r.tp_b : r.tp_f) = tp;
    (backward ? r.ep_b : r.ep_f) = ep;
    (backward ? r.cp_b : r.cp_f) = cp;
    (backward ? r.zero_b : r.zero_f) = std::max(0.0, beside - (compute + tp + ep + cp));
  }
  r.zero_after_b = sum(t.after_b);
  r.zero_b += r.zero_after_b;
  r.zero_after_f = sum(t.after_f);
  r.zero_f += r.zero_after_f;
  r.fill_f = sum(t.fill_f);
  r.fill_b = sum(t.fill_b);
  r.p2p = sum(t.boundary);
  if (t.buckets > 0) {
    r.bucket = time(t.bucket);
    r.buckets = t.buckets;
    r.bucket_overlap = t.bucket_overlap;
  }
  if (t.param_gather.bytes > 0) r.param_gather = time(t.param_gather);
  if (job.offload_optimizer) offload_periods(impl, p, pl, sh, r, nullptr);
  contention_periods(impl, t, pl, gpu, job, r);
  return r;
}

namespace {

std::string percent(double x) { return fmt::format("{:.0f}%", 100 * x); }

std::vector<LinkBusy> link_table(StepModel::Impl& impl, const std::map<int, ResUse>& use,
                                 double step) {
  std::vector<LinkBusy> out;
  for (const auto& [r, u] : use) {
    if (u.busy_s <= 0) continue;
    LinkBusy b;
    b.link = sim::resource_name(impl.chassis, impl.res, r);
    b.tech = r < 2 * impl.res.links ? impl.chassis.link(r / 2).tech->name : "host memory";
    b.busy_fraction = std::min(1.0, u.busy_s / step);
    b.bytes = u.bytes;
    const double cap = impl.res.capacity.at(r);
    b.utilisation = cap > 0 && step > 0 ? std::min(1.0, u.bytes / (cap * step)) : 0;
    double most = 0;
    for (const auto& [kind, bytes] : u.by_kind)
      if (bytes > most) most = bytes, b.traffic = kind;
    out.push_back(b);
  }
  // Fullest first: bytes moved over capacity x step time; busy time, then bytes break ties.
  std::sort(out.begin(), out.end(), [](const LinkBusy& a, const LinkBusy& b) {
    if (a.utilisation != b.utilisation) return a.utilisation > b.utilisation;
    return a.busy_fraction != b.busy_fraction ? a.busy_fraction > b.busy_fraction
                                              : a.bytes > b.bytes;
  });
  return out;
}

std::string bottleneck_line(const StepResult& r) {
  const auto& b = r.breakdown;
  std::vector<std::pair<double, std::string>> parts = {
      {b.tp_s, "tensor-parallel collectives"}, {b.cp_s, "context-parallel ring transfers"},
      {b.ep_s, "expert all-to-alls"},          {b.pp_s, "pipeline sends"},
      {b.dp_s, "data-parallel gradient sync"}, {b.zero_s, "ZeRO weight gathers"},
      {b.bubble_s, "the pipeline bubble"},     {b.io_s, "host offload traffic"}};
  auto worst = *std::max_element(parts.begin(), parts.end());
  std::string s;
  if (worst.first < 0.05 * r.step_time_s)
    s = fmt::format("compute-bound: compute is {} of the step",
                    percent(b.compute_s / r.step_time_s));
  else
    s = fmt::format("{} take {} of the step that compute does not hide", worst.second,
                    percent(worst.first / r.step_time_s));
  if (!r.links.empty()) {
    const auto& l = r.links.front();
    s += fmt::format(
        "; fullest link {} ({}) moves {} of its capacity over the step (busy {}), mostly {} "
        "traffic",
        l.link, l.tech, percent(l.utilisation), percent(l.busy_fraction), l.traffic);
  }
  return s;
}

}  // namespace

StepResult compose(StepModel::Impl& impl, const StepModel& sm, const Job& job, const Plan& p,
                   const Shape& sh, const Periods& r, bool simulated) {
  const Model& m = sm.model();
  StepResult out;
  out.chassis = impl.chassis.name();
  out.model = m.id;
  out.plan = p;
  out.job = job;
  out.gpus = p.gpus();
  out.micro_batches = sh.m;
  out.simulated = simulated;
  double L = sh.layers_per_stage, mm = sh.m;
  double comp_f = L * r.lc.forward() + r.head_f, comp_b = L * r.lc.backward() + r.head_b;
  // Overlapped NCCL kernels stretch the compute beside them; what the collective itself leaves
  // exposed already counts: a layer takes compute + max(exposed collective, σ·a).
  double cont_f = std::max(0.0, r.slow_f - (r.zero_f - r.zero_after_f)),
         cont_b = std::max(0.0, r.slow_b - (r.zero_b - r.zero_after_b));
  double t_f = comp_f + L * (r.tp_f + r.cp_f + r.ep_f + r.zero_f + cont_f) + r.fill_f;
  double t_b = comp_b + L * (r.tp_b + r.cp_b + r.ep_b + r.zero_b + cont_b) + r.fill_b;
  Breakdown& b = out.breakdown;
  const FrameworkTraits fw = framework_traits(job, p);
  b.optimizer_s = job.offload_optimizer
                      ? 0
                      : optimizer_time(sh.stage_trainable / (p.zero >= 1 ? p.shard_size() : 1),
                                       sm.gpu(), fw.optimizer_bytes_per_param, fw.optimizer_share);
  b.compute_s =
      mm * (comp_f + comp_b) + b.optimizer_s + fp8_weight_cast_time(L * sh.layer_weights, sm.gpu());
  b.tp_s = mm * L * (r.tp_f + r.tp_b);
  b.ep_s = mm * L * (r.ep_f + r.ep_b);
  b.cp_s = mm * L * (r.cp_f + r.cp_b);
  b.zero_s = mm * (L * (r.zero_f + r.zero_b) + r.fill_f + r.fill_b) + r.param_gather;
  PipelineTimes pipe = pipeline_1f1b(p.pp, sh.m, p.vpp, t_f, t_b, r.p2p);
  b.bubble_s = pipe.bubble_s;
  b.pp_s = pipe.p2p_s;
  // Buckets filled in backward order, each after 1/n of the last micro-batch's backward; without
  // overlap they all wait for the backward's end.
  double interval = r.bucket_overlap ? t_b / std::max(1, r.buckets) : 0;
  b.dp_s = dp_tail_s(r.buckets, r.bucket, interval);
  b.contention_s = mm * L * (cont_f + cont_b);
  if (r.bucket_overlap && r.buckets > 1 &&
      r.dp_sigma > 0) {  // buckets 2..n run beside the backward
    double hidden = (r.buckets - 1) * std::min(r.bucket, interval);
    b.contention_s += std::max(0.0, r.dp_sigma * hidden - (b.dp_s - r.bucket));
  }
  if (job.offload_optimizer) {
    // The CPU step waits for the gradients and the GPUs for its weights: the paper's one-step
    // delayed update is not DeepSpeed's default (docs/training.md, "Optimizer offload: CPU-Adam").
    double exposed_d2h =
        std::max(r.d2h / std::max(1.0, L), r.d2h - t_b * (L - 1) / std::max(1.0, L));
    b.io_s = exposed_d2h + r.cpu_optimizer + r.h2d;
  }
  b.exposed_comm_s = b.tp_s + b.cp_s + b.ep_s + b.pp_s + b.dp_s + b.zero_s;
  out.step_time_s = b.compute_s + b.exposed_comm_s + b.contention_s + b.bubble_s + b.io_s;
  out.tokens_per_step = static_cast<double>(job.global_batch) * job.seq;
  out.tokens_per_s = out.tokens_per_step / out.step_time_s;
  double peak = sm.gpu().peak_flops * out.gpus;
  out.mfu = model_flops_per_token(m, job) * out.tokens_per_step / (out.step_time_s * peak);
  double executed = out.gpus * mm * L * (r.lc.flops_f + r.lc.flops_b) +
                    p.data_ranks() * mm * 6.0 * sh.S * m.hidden * static_cast<double>(m.vocab);
  out.hfu = executed / (out.step_time_s * peak);
  out.model_tflops_per_gpu = out.mfu * sm.gpu().peak_flops / 1e12;
  out.memory = memory_per_gpu(m, job, p, sm.gpu().memory_bytes);
  out.links = link_table(impl, r.use, out.step_time_s);
  out.bottleneck = bottleneck_line(out);
  return out;
}

PipelineTimes pipeline_1f1b(int p, int m, int v, double t_f, double t_b, double t_p2p) {
  PipelineTimes r;
  r.bubble_s = static_cast<double>(p - 1) / v * (t_f + t_b);
  r.p2p_s = p > 1 ? 2.0 * (static_cast<double>(m) * v + p - 1) * t_p2p : 0;
  r.total_s = m * (t_f + t_b) + r.bubble_s + r.p2p_s;
  return r;
}

double dp_tail_s(int n, double c, double lb) {
  if (n <= 0 || c <= 0) return 0;
  return std::max(c, n * c - (n - 1) * lb);
}

int default_global_batch(const Model& model, const Job& job) {
  int seq = job.seq > 0 ? job.seq : model.seq;
  if (job.mode == Mode::kPretrain) return std::max(1, (1 << 22) / seq);
  return 64;
}

StepModel::StepModel(const topo::Chassis& chassis, Model model, Job job)
    : chassis_(chassis), model_(std::move(model)), job_(std::move(job)) {
  if (job_.seq == 0) job_.seq = model_.seq;
  if (job_.global_batch == 0) job_.global_batch = default_global_batch(model_, job_);
  validate_job(job_);
  if (chassis.gpus().empty())
    throw InputError(fmt::format("chassis '{}' has no GPUs", chassis.name()));
  const topo::Node& gpu = chassis.node(chassis.gpus().front());
  gpu_ = gpu_spec(gpu, job_.precision);
  job_.precision = resolve_precision(gpu, job_.precision);
  if (job_.flash_attention && !has_fused_attention(gpu)) {
    job_.flash_attention = false;
    notes_.push_back(fmt::format(
        "fused attention (FlashAttention-2) needs Ampere or newer: {} runs unfused attention",
        gpu.part->id));
  }
  if (job_.offload_optimizer) {
    // CPU-Adam scales the paper host's per-core rate by clock x lanes (offload_periods): a part
    // without them runs as that host's core, said here rather than silently.
    std::vector<std::string> seen;
    for (const auto& n : chassis.nodes()) {
      if (n.kind != topo::NodeKind::kCpu ||
          std::find(seen.begin(), seen.end(), n.part->id) != seen.end())
        continue;
      seen.push_back(n.part->id);
      std::vector<std::string> missing;
      for (const char* f : {"clock_hz", "simd_fp32_lanes"})
        if (!n.part->has(f) && !n.overrides.count(f)) missing.push_back(f);
      if (!missing.empty())
        notes_.push_back(fmt::format(
            "CPU part {} gives no {}: its CPU-Adam (--offload) runs as the ZeRO-Offload paper's "
            "host core (Xeon 8168: 2.7 GHz, 16 fp32 lanes)",
            n.part->id, fmt::join(missing, " or ")));
    }
  }
  impl_ = std::make_unique<Impl>(chassis);
}

StepModel::~StepModel() = default;

namespace {
void check(const Plan& p, const StepModel& sm, const Job& job) {
  std::string why = plan_problem(p, sm.model(), job, static_cast<int>(sm.chassis().gpus().size()));
  if (!why.empty()) throw InputError(why);
}
}  // namespace

StepResult StepModel::estimate(const Plan& plan) { return estimate(plan, job_); }
StepResult StepModel::simulate(const Plan& plan) { return simulate(plan, job_); }

namespace {
// w·a + (1 - w)·b, field by field: the periods of a step whose blocks are of two kinds, a share w
// of them like a's. The step is the sum of its blocks' periods (compose), so the mean block is
// exact; what does not depend on the block (head, stage boundary, optimizer) is the same in both.
// Every seconds or bytes field of Periods and LayerCompute is listed below: one added there must
// join these lists, or it keeps b's value.
Periods blend(const Periods& a, const Periods& b, double w) {
  auto mix = [w](double x, double y) { return w * x + (1 - w) * y; };
  Periods r = b;
  LayerCompute& c = r.lc;
  const LayerCompute &ca = a.lc, &cb = b.lc;
  for (auto f :
       {&LayerCompute::attn_f, &LayerCompute::mlp_f, &LayerCompute::attn_b, &LayerCompute::mlp_b,
        &LayerCompute::flops_f, &LayerCompute::flops_b, &LayerCompute::mem_f, &LayerCompute::mem_b,
        &LayerCompute::gemm_qkv, &LayerCompute::gemm_proj, &LayerCompute::gemm_up,
        &LayerCompute::gemm_down, &LayerCompute::core_f, &LayerCompute::core_b})
    c.*f = mix(ca.*f, cb.*f);
  for (auto f :
       {&Periods::head_f,       &Periods::head_b,        &Periods::tp_f,   &Periods::tp_b,
        &Periods::ep_f,         &Periods::ep_b,          &Periods::cp_f,   &Periods::cp_b,
        &Periods::zero_f,       &Periods::zero_b,        &Periods::slow_f, &Periods::slow_b,
        &Periods::dp_sigma,     &Periods::p2p,           &Periods::bucket, &Periods::zero_after_b,
        &Periods::zero_after_f, &Periods::param_gather,  &Periods::fill_f, &Periods::fill_b,
        &Periods::d2h,          &Periods::cpu_optimizer, &Periods::h2d})
    r.*f = mix(a.*f, b.*f);
  for (auto& [id, u] : r.use) {
    u.busy_s *= 1 - w, u.bytes *= 1 - w;
    for (auto& [kind, s] : u.by_kind) s *= 1 - w;
  }
  for (const auto& [id, u] : a.use) {
    ResUse& t = r.use[id];
    t.busy_s += w * u.busy_s, t.bytes += w * u.bytes;
    for (const auto& [kind, s] : u.by_kind) t.by_kind[kind] += w * s;
  }
  return r;
}

// --recompute-every N (Job::recompute_every): one block in N recomputed in full, the others
// keeping every activation; the step's periods are those of its mean block.
template <class F>
Periods periods_of(const Job& job, F&& run) {
  if (job.recompute != Recompute::kFull || job.recompute_every <= 1) return run(job);
  Job full = job, none = job;
  full.recompute_every = 1, none.recompute_every = 1;
  none.recompute = Recompute::kNone;
  return blend(run(full), run(none), 1.0 / job.recompute_every);
}
}  // namespace

StepResult StepModel::estimate(const Plan& plan, const Job& job) {
  check(plan, *this, job);
  Shape sh = shape_of(model_, job, plan);
  Periods r = periods_of(
      job, [&](const Job& j) { return estimate_periods(*impl_, model_, j, plan, gpu_, sh); });
  return compose(*impl_, *this, job, plan, sh, r, false);
}

StepResult StepModel::simulate(const Plan& plan, const Job& job) {
  check(plan, *this, job);
  Shape sh = shape_of(model_, job, plan);
  Periods r = periods_of(
      job, [&](const Job& j) { return simulate_periods(*impl_, model_, j, plan, gpu_, sh); });
  return compose(*impl_, *this, job, plan, sh, r, true);
}

double time_to_train_s(const StepResult& step, double tokens) {
  return step.tokens_per_s > 0 ? tokens / step.tokens_per_s : 0;
}

}  // namespace linkwise::work
