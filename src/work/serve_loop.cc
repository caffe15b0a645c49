// The steady state of continuous batching under a closed or open loop, the concurrency sweep and the
// result of ServeModel (docs/serving.md, "The scheduler's steady state").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"
#include "linkwise/work/memory.h"
#include "linkwise/work/serve.h"
#include "work/serve_impl.h"

namespace linkwise::work {

namespace {

std::string classify(const StepTime& t) {
  double host = t.kernels + t.overhead;
  double best = std::max({t.memory, t.compute, t.comm, host, t.offload});
  if (best == t.offload) return "offload";
  if (best == t.comm) return "link";
  if (best == t.compute) return "compute";
  if (best == t.memory) return "memory";
  return "overhead";
}

}  // namespace

// clients > 0: closed loop with that many clients per replica; else open loop at `rate` per replica.
ServePoint ServeModel::Impl::solve(double clients, double rate) const {
  const double P = std::max(1.0, std::round(opt.input * (1 - opt.prefix_hit)));
  const double O = opt.output;
  const double B = engine.max_batched_tokens;
  const double ctx_d = opt.input + O / 2;             // mean context of a decoding sequence
  const double ctx_p = opt.input * opt.prefix_hit + P / 2;  // mean prefix of a prompt token
  const double cap = opt.kv_offload ? engine.max_seqs : fit_replica;
  const bool closed = clients > 0;

  double n = closed ? std::min(clients, cap) : 1;  // sequences admitted
  double D = n, X = 0, ttft = 0, e2e = 0, tau = 0, rho = 0;
  bool overloaded = false;
  StepTime mean;
  for (int it = 0; it < 200; ++it) {
    // A prompt runs in k steps of `chunk` tokens beside the D decoding sequences; between prompts the
    // engine runs pure decode steps. Steps are discrete: a prompt step costs the roofline of its own
    // tokens, it is not spread over the decode steps.
    double left = std::max(1.0, B - D);
    double chunk = std::min(P, left);
    double k = std::ceil(P / left);
    StepTime pf = step(D, ctx_d, chunk, ctx_p);
    StepTime dec = step(std::max(D, O > 1 ? 1.0 : 0.0), ctx_d, 0, 0);
    pf.offload = offload_time(n, ctx_d);
    dec.offload = pf.offload;
    pf.total += pf.offload;
    dec.total += dec.offload;
    double t_pf = k * pf.total;                       // one prompt's steps
    // Prompt steps per second X·k take X·t_pf of each second (rho); decode steps fill the rest.
    double steps_per_s = (1 - std::min(rho, 0.999)) / dec.total + X * k;
    double next_tau = 1 / steps_per_s;
    // TTFT: the prompt's own steps, the step running when it arrives (when others are decoding), and the
    // wait behind other prompts (M/D/1: rho / (2(1 - rho)) of a prompt's time).
    double residual = std::min(1.0, std::max(0.0, n - 1)) * dec.total / 2;
    double queue = rho < 1 ? rho / (2 * (1 - rho)) * t_pf : t_pf * 10;
    ttft = t_pf + residual + queue;
    tau = it == 0 ? next_tau : 0.5 * (tau + next_tau);
    e2e = ttft + (O - 1) * tau;
    double X_next;
    if (closed) {
      X_next = n / e2e;
    } else {
      X_next = rate;
      n = std::min(cap, X_next * e2e);
      overloaded = X_next * e2e > cap;
      if (overloaded) X_next = n / e2e;
    }
    double rho_next = X_next * t_pf;
    if (!closed && rho_next >= 1) {  // prompts arrive faster than the engine takes them
      overloaded = true;
      X_next = 0.999 / t_pf;
      rho_next = 0.999;
    }
    X = it == 0 ? X_next : 0.5 * (X + X_next);
    rho = std::min(0.999, rho_next);
    D = O > 1 ? std::min(n, X * (O - 1) * tau) : 0;
    // The mean step: prompt steps X·k·tau of all steps, decode steps the rest.
    double w = std::min(1.0, X * k * tau);
    mean = StepTime{};
    for (auto [dst, a, b] : {std::tuple{&mean.compute, pf.compute, dec.compute}, std::tuple{&mean.memory, pf.memory, dec.memory},
                             std::tuple{&mean.comm, pf.comm, dec.comm}, std::tuple{&mean.kernels, pf.kernels, dec.kernels},
                             std::tuple{&mean.overhead, pf.overhead, dec.overhead}, std::tuple{&mean.offload, pf.offload, dec.offload},
                             std::tuple{&mean.pp_send, pf.pp_send, dec.pp_send}, std::tuple{&mean.flops, pf.flops, dec.flops},
                             std::tuple{&mean.bytes, pf.bytes, dec.bytes}})
      *dst = w * a + (1 - w) * b;
    mean.total = mean.compute + mean.memory + mean.comm + mean.kernels + mean.overhead + mean.offload;
    if (it > 2 && std::abs(next_tau - tau) <= 1e-7 * tau && std::abs(X_next - X) <= 1e-7 * X) break;
  }
  ServePoint p;
  p.running = n;
  p.decode = mean;
  p.itl_s = O > 1 ? tau : 0;
  p.ttft_s = ttft;
  p.e2e_s = e2e;
  if (closed && clients > n) {  // the rest wait for a free slot: Little's law over all clients
    double client_e2e = clients / X;
    p.queue_s = client_e2e - e2e;
    p.ttft_s += p.queue_s;
    p.e2e_s = client_e2e;
    p.kv_full = !opt.kv_offload || n >= engine.max_seqs;
  }
  if (!closed && overloaded) p.kv_full = n >= fit_replica;
  p.overloaded = overloaded;
  p.requests_per_s = X * replicas;
  p.output_tokens_per_s = X * O * replicas;
  p.tokens_per_s_per_user = p.itl_s > 0 ? 1 / p.itl_s : O / p.e2e_s;
  p.comm_fraction = mean.total > 0 ? mean.comm / mean.total : 0;
  p.bound = p.kv_full ? "kv-cache" : classify(mean);
  return p;
}

ServePoint ServeModel::closed_loop(int concurrency) const {
  if (concurrency < 1) throw InputError(fmt::format("--concurrency must be at least 1, not {}", concurrency));
  ServePoint p = impl_->solve(static_cast<double>(concurrency) / impl_->replicas, 0);
  p.concurrency = concurrency;
  return p;
}

ServePoint ServeModel::open_loop(double rate) const {
  if (!(rate > 0) || !std::isfinite(rate)) throw InputError(fmt::format("--rate must be positive, not {}", rate));
  ServePoint p = impl_->solve(0, rate / impl_->replicas);
  p.rate = rate;
  p.concurrency = static_cast<int>(std::ceil(p.running * impl_->replicas));
  return p;
}

LoadTime ServeModel::load_time() const { return impl_->load(); }

void ServeModel::Impl::describe(ServeResult* r) const {
  const Model& m = model;
  r->model = m.id;
  r->chassis = chassis.name();
  r->gpu_part = gpu.part;
  r->tp = opt.tp;
  r->pp = opt.pp;
  r->replicas = replicas;
  r->gpus = replicas * opt.tp * opt.pp;
  r->weights_format = to_string(opt.precision);
  r->kv_format = to_string(opt.kv_precision);
  r->engine = fmt::format("continuous batching, chunked prefill of {} tokens per step, at most {} sequences",
                          engine.max_batched_tokens, engine.max_seqs);
  r->memory = mem;
  r->max_concurrency_fit = fit_box;
  r->notes = notes;
  if (opt.tp > 1) {
    r->allreduces_per_token = opt.expert_parallel ? m.layers : 2.0 * m.layers;
    r->allreduce_bytes_per_token = 2.0 * m.hidden;
    double D = std::max(1.0, r->point.decode.total > 0 ? r->point.running : 1.0);
    collective(*reps[0].tp[0], comm::Op::kAllReduce, D * m.hidden * 2.0, &r->comm_link, &r->comm_algorithm);
  } else if (opt.pp > 1) {
    std::string algo;
    collective(*reps[0].pp[0], comm::Op::kSendRecv, m.hidden * 2.0, &r->comm_link, &algo);
    r->comm_algorithm = "send/recv";
  }
  if (opt.lora_rank > 0) {
    LoraSpec spec;
    spec.rank = opt.lora_rank;
    spec.targets = {"q", "k", "v", "o", "gate", "up", "down"};
    r->lora_bytes = 2 * lora_params(m, spec);  // bf16 adapters
    // Each GPU takes its 1/(tp·pp) share from host memory over its own PCIe link, all at once.
    r->lora_swap_s = r->lora_bytes / (opt.tp * opt.pp) / h2d_bytes_per_s();
  }
}

namespace {

std::string bottleneck_text(const ServeResult& r, const ServePoint& p) {
  const auto& t = p.decode;
  if (p.overloaded)
    return fmt::format("overloaded: the box completes {:.2f} requests/s; requests beyond that queue without bound",
                       p.requests_per_s);
  if (p.bound == "kv-cache")
    return fmt::format("KV cache: {} sequences fit at once ({:.1f} GiB of KV cache per GPU); the other clients wait",
                       r.max_concurrency_fit, r.memory.kv_cache / kGiB);
  if (p.bound == "link")
    return fmt::format("links: {:.0f}% of each decode step is {} over {}{}", 100 * p.comm_fraction,
                       r.tp > 1 ? "tensor-parallel all-reduces" : "pipeline sends", r.comm_link,
                       r.comm_algorithm.empty() ? "" : " (" + r.comm_algorithm + ")");
  if (p.bound == "compute")
    return fmt::format("compute: {:.0f} TFLOP per GPU per step (prompt chunks and {:.0f} decoding sequences)",
                       t.flops / 1e12, p.running);
  if (p.bound == "memory")
    return fmt::format("memory bandwidth: each decode step reads {:.1f} GB per GPU (weights and KV cache)",
                       t.bytes / 1e9);
  if (p.bound == "offload")
    return "KV offload: the KV cache of sequences beyond GPU memory crosses PCIe every step";
  return "kernel launches and the engine's per-step overhead";
}

}  // namespace

ServeResult ServeModel::result() const {
  ServeResult r;
  const auto& o = impl_->opt;
  r.point = o.rate > 0 ? open_loop(o.rate) : closed_loop(std::max(1, o.concurrency));
  impl_->describe(&r);
  r.load = load_time();
  r.bottleneck = bottleneck_text(r, r.point);
  return r;
}

void ServeModel::sweep(const std::vector<int>& cs, ServeResult* r) const {
  r->sweep.clear();
  r->bends.clear();
  bool kv = false, compute = false, link = false;
  for (int c : cs) {
    ServePoint p = closed_loop(c);
    if (!kv && p.kv_full) {
      r->bends.push_back({c, "KV cache full"});
      kv = true;
    }
    if (!compute && p.decode.compute > p.decode.memory) {
      r->bends.push_back({c, "compute bound"});
      compute = true;
    }
    if (!link && p.decode.comm > std::max(p.decode.compute, p.decode.memory)) {
      r->bends.push_back({c, "link bound"});
      link = true;
    }
    r->sweep.push_back(std::move(p));
  }
}

ServeResult serve(const topo::Chassis& chassis, const Model& model, const ServeOptions& options,
                  const std::vector<int>& sweep) {
  ServeModel sm(chassis, model, options);
  ServeResult r = sm.result();
  if (!sweep.empty()) sm.sweep(sweep, &r);
  return r;
}

}  // namespace linkwise::work
