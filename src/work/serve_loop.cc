// The steady state of continuous batching under a closed or open loop, the concurrency sweep and
// the result of ServeModel (docs/serving.md, "The scheduler's steady state").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"
#include "linkwise/util/verbosity.h"
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

// TTFT of a phase-locked closed loop (docs/serving.md, "Arrivals"): n clients that start together
// with equal prompt (P) and output lengths finish and come back in the order the engine took their
// prompts. The engine (vLLM V1, vllm/v1/core/sched/scheduler.py) gives each step's token budget B
// first to the running sequences (one token each) and then to the waiting prompts in arrival order,
// the last one chunked, up to max_num_seqs; so a cohort's n·P prompt tokens run as a train of steps
// of c = B - (decoding sequences) prompt tokens each.
//  - n·P <= c: the whole cohort fits one step. All n finish in the same step and come back to an
//    idle engine: TTFT = one step of n·P prompt tokens and no decodes.
//  - otherwise each client comes back during the step after its last token and waits for that
//    step to end (the engine scheduled it before the request arrived); its prompt then completes
//    ceil(P / c) train steps later, at the same offset in the next cycle's train as in the last.
//    The step it waits for is the train step of the prompts ahead of it, or, for the prompts of
//    the train's first step, a decode step: TTFT = wait + ceil(P / c) train steps. Without chunked
//    prefill (TensorRT-LLM's default) a train step holds floor(c / P) whole prompts (at least one)
//    and a prompt completes in one. The client's round trip (its last token's way to the client
//    and the re-sent request's way back) cancels out of a train follower's TTFT as long as it is
//    shorter than the step ahead: the follower sends d_out after that step starts, so it waits
//    t_train - d_out for it, and its first token reaches it d_out after its own step, 2 t_train
//    from its send. The first prompts of a train likewise wait for the end of the decode step
//    they return in. So `fe`, the front end's time a request (its latency and CPU time), counts
//    only where it is longer than the step the request waits for: max(wait, fe) (a request that
//    misses that step waits for a later one; the next boundary is left out).
// With async scheduling (ServeOptions::async_scheduling) the engine chose the step after the
// running one before the request arrived, so a request that comes back to a busy engine waits for
// both: two steps where it waited for one. A cohort that fits one step ends at its length cap in
// that step, which the scheduler knows ahead (it schedules no step past max_tokens,
// vllm/v1/core/sched/scheduler.py), so it comes back to an idle engine as before.
double ServeModel::Impl::burst_ttft(double n, double P, double D, double ctx_d, double ctx_p,
                                    double fe) const {
  const double B = engine.max_batched_tokens;
  double decoding = std::min(D, std::max(0.0, n - 1));
  // vLLM V0's prompt-only steps (ServeOptions::prompt_only_steps): the train's steps hold prompts
  // alone, the decodes waiting.
  const double beside = opt.prompt_only_steps ? 0 : decoding;
  double c = std::max(1.0, B - std::round(beside));
  const double offload = offload_time(n, ctx_d);
  const double ahead = opt.async_scheduling ? 1 : 0;
  if (n * P <= c) return step(0, ctx_d, n * P, ctx_p).total + offload;
  // Prompts of one train step (whole ones without chunking), the train step, and the steps from a
  // prompt's first to its last token.
  double per_step = std::max(1.0, std::floor(c / P));
  double t_train =
      step(beside, ctx_d, opt.chunked_prefill ? c : per_step * P, ctx_p).total + offload;
  double own = opt.chunked_prefill ? std::ceil(P / c) : 1;
  // The first step's prompts come back during a decode step (the train of the cycle before has
  // ended), the others during the train step of the prompts ahead of them.
  double first = std::min(n, per_step) / n;
  double t_dec = step(std::max(1.0, D), ctx_d, 0, 0).total + offload;
  return first * std::max((1 + ahead) * t_dec, fe) +
         (1 - first) * std::max((1 + ahead) * t_train, fe) + own * t_train;
}

// Mean TTFT of the first cohort of a finite closed-loop benchmark: `vllm bench serve
// --max-concurrency N` (vllm/benchmarks/serve.py) and genai-perf start all N clients at t = 0, so
// the engine finds n prompts waiting at once. It runs them as a train of steps: each step gives its
// budget B first to the sequences already decoding (one token each) and then to the waiting prompts
// in arrival order, the last one chunked (vLLM V1, vllm/v1/core/sched/scheduler.py); without
// chunked prefill only whole prompts that fit (at least one). A prompt's TTFT is the time to the
// end of the step that holds its last token. Stepped one engine step at a time, the steps that
// carry only chunks of one prompt taken together: about one step per prompt.
double ServeModel::Impl::first_cohort_ttft(double n_in) const {
  const int n = static_cast<int>(std::round(n_in));
  if (n < 1) return 0;
  const double P = std::max(1.0, std::round(opt.input * (1 - opt.prefix_hit)));
  const double B = engine.max_batched_tokens;
  const double ctx_d = opt.input + opt.output / 2.0;
  const double ctx_p = opt.input * opt.prefix_hit + P / 2;
  const double offload = offload_time(n, ctx_d);
  // The front end passes the cohort's requests one at a time (work/serve_front.cc): the k-th
  // (k = 0 .. n-1) reaches the engine after k + 1 requests' CPU time and the front end's latency.
  const double fe_req = detail::front_end_request_cpu_s(opt);
  const double fe_lat = detail::front_end_latency_s(opt);
  auto ready = [&](int k) { return fe_lat + (k + 1) * fe_req; };
  // vLLM V0's async output processing: a step's first tokens leave during the next step, once it
  // is scheduled and launched (ServeOptions::async_output_processing).
  const double defer = opt.async_output_processing ? step(1, ctx_d, 0, 0).overhead : 0;
  double t = 0, sum = 0, left = P;  // `left`: tokens of the first waiting prompt still to run
  int done = 0;
  while (done < n) {
    // Prompts done decode beside the train (a one-token request ends with its prompt).
    double decoding = opt.output > 1 ? done : 0, tokens = 0;
    // vLLM V0's prompt-only steps: a step with prompts holds no decodes.
    const double beside = opt.prompt_only_steps ? 0 : decoding;
    double budget = std::max(1.0, B - beside);
    if (left >= P && ready(done) > t) {
      // The next prompt is still in the front end: the engine decodes the prompts done meanwhile,
      // or idles until it is through.
      t = decoding > 0 ? t + step(decoding, ctx_d, 0, 0).total + offload : ready(done);
      continue;
    }
    // Chunks of the first prompt that fill whole steps alone are alike: take them at once, so the
    // loop runs at most about one step per prompt whatever the budget.
    if (opt.chunked_prefill && left > budget) {
      double alike = std::ceil(left / budget) - 1;
      t += alike * (step(beside, ctx_d, budget, ctx_p).total + offload);
      left -= alike * budget;
    }
    int finished = 0;
    while (done + finished < n) {
      if (left >= P && ready(done + finished) > t) break;  // not through the front end yet
      if (opt.chunked_prefill) {
        double take = std::min(left, budget - tokens);
        if (take <= 0) break;
        tokens += take;
        left -= take;
        if (left > 0) break;  // chunked: the rest of this prompt runs in the next step
      } else {
        if (tokens > 0 && tokens + P > budget) break;  // whole prompts only, at least one
        tokens += P;
        left = 0;
      }
      ++finished;
      left = P;
    }
    t += step(tokens > 0 ? beside : decoding, ctx_d, tokens, ctx_p).total + offload;
    sum += finished * (t + defer);
    done += finished;
  }
  return sum / n;
}

// The steady state at X requests/s per replica with n sequences admitted: the step time tau is the
// fixed point of tau = 1 / ((1 - rho)/t_decode(D) + X·k), D = min(n, X·(O-1)·tau) (Little's law
// over the decode phase), rho = X·k·t_prompt the share of time in prompt steps. Iterated from below
// it rises to the least fixed point; rho >= 1 means prompts arrive faster than the engine takes
// them.
ServeModel::Impl::Eval ServeModel::Impl::evaluate(double X, double n, bool burst, bool open) const {
  const double P = std::max(1.0, std::round(opt.input * (1 - opt.prefix_hit)));
  const double O = opt.output;
  const double B = engine.max_batched_tokens;
  const double ctx_d = opt.input + O / 2;                   // mean context of a decoding sequence
  const double ctx_p = opt.input * opt.prefix_hit + P / 2;  // mean prefix of a prompt token
  Eval e;
  // The front end's one process (work/serve_front.cc): its CPU time per request and the share of
  // its time busy with the work no merging saves, each request's and each token's detokenization;
  // at u >= 1 requests arrive faster than it takes them. The chunks' own part is left out: while
  // the process is behind, a stream's ready tokens leave merged in one chunk, so that part shrinks
  // to the time left over (vllm/v1/engine/output_processor.py, RequestOutputCollector), and the
  // engine, a process of its own, steps on meanwhile.
  const double fe_req = detail::front_end_request_cpu_s(opt);
  const double fe_u = X * (fe_req + O * detail::front_end_token_cpu_s(opt.front_end));
  if (fe_u >= 1) return e;  // infeasible
  // Requests per second of the other clients (all of an open loop's): their prompts are the ones
  // that stretch a sequence's inter-token gaps (its own prompt step yields its first token, no
  // gap), and the ones it waits behind at the front end.
  const double X_o = open || opt.rate > 0 ? X : (n > 0 ? X * std::max(0.0, n - 1) / n : 0);
  // tau: the engine's mean step; gap: the mean gap between one sequence's tokens.
  double tau = 0, gap = 0, D = 0, t_pf = 0, k = 1;
  StepTime pf, dec;
  for (int it = 0; it < 100; ++it) {
    D = O > 1 ? std::min(n, X * (O - 1) * gap) : 0;
    // Sequences decoding beside a prompt: none in vLLM V0's prompt-only steps.
    double others = n > 1 && !opt.prompt_only_steps ? D * (n - 1) / n : 0;
    // The prompt in chunks of the budget left beside the decoding sequences, the last one shorter.
    // Without chunked prefill the prompt runs whole in one step.
    double left = opt.chunked_prefill ? std::max(1.0, B - std::round(others)) : P;
    double full = std::floor(P / left), rem = P - full * left;
    k = full + (rem > 0 ? 1 : 0);
    StepTime pf_full = full > 0 ? step(others, ctx_d, left, ctx_p) : StepTime{};
    StepTime pf_rem = rem > 0 ? step(others, ctx_d, rem, ctx_p) : StepTime{};
    pf = StepTime{};
    for (auto [dst, a, b] : {std::tuple{&pf.compute, pf_full.compute, pf_rem.compute},
                             std::tuple{&pf.memory, pf_full.memory, pf_rem.memory},
                             std::tuple{&pf.comm, pf_full.comm, pf_rem.comm},
                             std::tuple{&pf.kernels, pf_full.kernels, pf_rem.kernels},
                             std::tuple{&pf.overhead, pf_full.overhead, pf_rem.overhead},
                             std::tuple{&pf.pp_send, pf_full.pp_send, pf_rem.pp_send},
                             std::tuple{&pf.flops, pf_full.flops, pf_rem.flops},
                             std::tuple{&pf.bytes, pf_full.bytes, pf_rem.bytes}})
      *dst = (full * a + b) / k;  // the mean prompt step
    dec = step(std::max(D, O > 1 ? 1.0 : 0.0), ctx_d, 0, 0);
    pf.offload = dec.offload = offload_time(n, ctx_d);
    pf.total = pf.compute + pf.memory + pf.comm + pf.kernels + pf.overhead + pf.offload;
    dec.total += dec.offload;
    t_pf = k * pf.total;
    e.rho = X * t_pf;
    if (e.rho >= 1) return e;  // infeasible
    tau = 1 / ((1 - e.rho) / dec.total + X * k);
    // One sequence's gaps: the decode steps and the other clients' prompt steps of its decode
    // phase, X_o·k a second taking rho_o of the time. Beside the decodes, each prompt step is a
    // gap of its own (a token for every decoding sequence); in V0's prompt-only steps the decodes
    // wait through them, a gap longer.
    const double rho_o = X_o * t_pf;
    double next =
        opt.prompt_only_steps ? dec.total / (1 - rho_o) : 1 / ((1 - rho_o) / dec.total + X_o * k);
    bool done = std::abs(next - gap) <= 1e-9 * next;
    gap = next;
    if (done) break;
  }
  e.feasible = true;
  e.tau = tau;
  e.D = D;
  // The front end's latency (its CPU time a request, fe_req, above).
  const double fe_lat = detail::front_end_latency_s(opt);
  const double together_budget = std::max(1.0, B - std::round(std::min(D, std::max(0.0, n - 1))));
  // A phase-locked closed loop whose cohort does not fit one step runs as a train, where each
  // request's front-end time passes while it waits for the step ahead (burst_ttft).
  const bool train = burst && n > 1 && n * P > together_budget;
  if (burst && n > 1) {
    e.ttft = burst_ttft(n, P, D, ctx_d, ctx_p, fe_lat + fe_req);
  } else {
    // TTFT: the prompt's own steps, the step running when it arrives (when others are decoding),
    // with async scheduling also the step the engine scheduled after it (a mean step), and the
    // wait behind the other clients' prompts (M/D/1: rho / (2(1 - rho)) of a prompt's time).
    double busy = std::min(1.0, std::max(0.0, n - 1));
    double residual = busy * dec.total / 2 + (opt.async_scheduling ? busy * tau : 0);
    double rho_others = n > 0 ? e.rho * std::max(0.0, n - 1) / n : 0;
    e.ttft = t_pf + residual + rho_others / (2 * (1 - rho_others)) * t_pf;
  }
  // The front end before the first token: its latency (HTTP, the hop to the engine and back), the
  // request's own CPU time on its process and the wait for the work ahead of it there: the whole
  // cohort's requests at once when a phase-locked closed loop's clients come back together (its
  // prompts fit one step, burst_ttft), else independent arrivals of the other clients.
  const double fe_wait = burst && n > 1 && !train
                             ? detail::front_end_burst_wait_s(n, fe_req)
                             : detail::front_end_poisson_wait_s(X_o, fe_req, fe_u);
  if (!train) e.ttft += fe_lat + fe_req + fe_wait;
  // vLLM V0's async output processing: a step's tokens leave the engine during the next step,
  // once it is scheduled and launched (its host time), the first token as every later one.
  if (opt.async_output_processing) e.ttft += dec.overhead;
  e.e2e = e.ttft + (O - 1) * gap;
  // The ITL a streaming client measures, per chunk: the other streams' requests hold the loop
  // while the engine steps on, and tokens ready meanwhile leave merged.
  e.itl = detail::front_end_chunk_itl_s(gap, fe_req, X_o);
  // The mean step: prompt steps are X·k·tau of all steps, decode steps the rest.
  double w = std::min(1.0, X * k * tau);
  StepTime& m = e.mean;
  for (auto [dst, a, b] :
       {std::tuple{&m.compute, pf.compute, dec.compute},
        std::tuple{&m.memory, pf.memory, dec.memory}, std::tuple{&m.comm, pf.comm, dec.comm},
        std::tuple{&m.kernels, pf.kernels, dec.kernels},
        std::tuple{&m.overhead, pf.overhead, dec.overhead},
        std::tuple{&m.offload, pf.offload, dec.offload},
        std::tuple{&m.pp_send, pf.pp_send, dec.pp_send}, std::tuple{&m.flops, pf.flops, dec.flops},
        std::tuple{&m.bytes, pf.bytes, dec.bytes}})
    *dst = w * a + (1 - w) * b;
  m.total = m.compute + m.memory + m.comm + m.kernels + m.overhead + m.offload;
  return e;
}

// Closed loop: the X with X · e2e(X) = n (Little's law over the admitted sequences), by bisection;
// X · e2e(X) rises with X.
ServeModel::Impl::Eval ServeModel::Impl::closed(double n, double* X_out, bool burst,
                                                bool open) const {
  Eval e0 = evaluate(0, n, burst, open);
  double lo = 0, hi = n / e0.e2e;
  Eval best = e0;
  double X = 0;
  for (int it = 0; it < 60; ++it) {
    double mid = 0.5 * (lo + hi);
    Eval e = evaluate(mid, n, burst, open);
    if (e.feasible && mid * e.e2e <= n) {
      lo = mid;
      best = e;
      X = mid;
    } else {
      hi = mid;
    }
    if (hi - lo <= 1e-9 * hi) break;
  }
  *X_out = X;
  return best;
}

bool ServeModel::Impl::burst_arrivals() const { return opt.arrivals != Arrivals::kPoisson; }

// clients > 0: closed loop with that many clients per replica; else open loop at `rate` per
// replica.
ServePoint ServeModel::Impl::solve(double clients, double rate) const {
  const double O = opt.output;
  const double cap = opt.kv_offload ? engine.max_seqs : fit_replica;
  double n = 0, X = 0;
  bool overloaded = false;
  Eval e;
  if (clients > 0) {
    n = std::min(clients, cap);
    e = closed(n, &X, burst_arrivals());
  } else {
    X = rate;
    n = 1;
    for (int it = 0; it < 100; ++it) {
      e = evaluate(X, n, false, true);
      double next = e.feasible ? X * e.e2e : 2 * cap;
      if (next > cap) {
        overloaded = true;
        break;
      }
      bool done = std::abs(next - n) <= 1e-9 * next;
      n = next;
      if (done) break;
    }
    if (overloaded) {  // the box runs full: as many sequences as it admits, the rest queue
      n = cap;
      e = closed(n, &X, false, true);  // arrivals of an open loop stay independent
    }
  }
  ServePoint p;
  p.running = n;
  p.decode = e.mean;
  p.itl_s = O > 1 ? e.itl : 0;
  p.ttft_s = e.ttft;
  p.e2e_s = e.e2e;
  if (clients > n) {  // the rest wait for a free slot: Little's law over all clients
    double client_e2e = clients / X;
    p.queue_s = client_e2e - e.e2e;
    p.ttft_s += p.queue_s;
    p.e2e_s = client_e2e;
    p.kv_full = !opt.kv_offload || n >= engine.max_seqs;
  }
  if (overloaded) p.kv_full = n >= fit_replica;
  p.overloaded = overloaded;
  // A finite benchmark of R requests (ServeOptions::requests) averages its first cohort in: the n
  // clients' first prompts all wait at t = 0 (first_cohort_ttft) where the steady state's wait
  // for one. Each client's chain of requests is longer by the difference d, so the run takes
  // R/X + d (X the steady rate) and its rate, total output / duration as vllm bench serve
  // computes it, falls to R / (R/X + d).
  if (clients > 0 && opt.requests > 0 && X > 0) {
    double R = opt.requests / static_cast<double>(replicas);
    double first = std::min(n, R);
    double d = std::max(0.0, first_cohort_ttft(first) - e.ttft);
    p.ttft_s += first / R * d;
    p.e2e_s += first / R * d;
    X = R / (R / X + d);
  }
  p.requests_per_s = X * replicas;
  p.output_tokens_per_s = X * O * replicas;
  p.tokens_per_s_per_user = p.itl_s > 0 ? 1 / p.itl_s : O / p.e2e_s;
  p.comm_fraction = e.mean.total > 0 ? e.mean.comm / e.mean.total : 0;
  p.bound = p.kv_full ? "kv-cache" : classify(e.mean);
  return p;
}

ServePoint ServeModel::closed_loop(int concurrency) const {
  if (concurrency < 1)
    throw InputError(fmt::format("--concurrency must be at least 1, not {}", concurrency));
  ServePoint p = impl_->solve(static_cast<double>(concurrency) / impl_->replicas, 0);
  p.concurrency = concurrency;
  return p;
}

ServePoint ServeModel::open_loop(double rate) const {
  if (!(rate > 0) || !std::isfinite(rate))
    throw InputError(fmt::format("--rate must be positive, not {}", rate));
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
  r->engine = fmt::format("continuous batching, {} of {} tokens per step, at most {} sequences{}",
                          opt.chunked_prefill     ? "chunked prefill"
                          : opt.prompt_only_steps ? "prompt-only steps (decodes wait, vLLM V0)"
                                                  : "whole prompts",
                          engine.max_batched_tokens, engine.max_seqs,
                          opt.rate > 0 ? "; poisson arrivals"
                                       : (burst_arrivals() ? "; burst arrivals (clients in phase)"
                                                           : "; poisson arrivals"));
  if (opt.requests > 0)
    r->engine += opt.concurrency >= opt.requests
                     ? fmt::format("; a run of {} requests, all queued at once", opt.requests)
                     : fmt::format("; a run of {} requests, the first cohort's wait averaged in",
                                   opt.requests);
  if (opt.async_scheduling) r->engine += "; async scheduling (a step scheduled ahead)";
  if (opt.async_output_processing)
    r->engine += "; V0 async output processing (a step's tokens leave during the next step)";
  r->engine += fmt::format("; front end: {}, {:.0f} ms a request", to_string(opt.front_end),
                           detail::front_end_latency_s(opt) * 1e3);
  if (opt.front_end == FrontEnd::kVllmApiServer && opt.tokenizer_batch_wait_s > 0)
    r->engine += fmt::format(" ({:.1f} ms of it the tokenizer's batch wait)",
                             opt.tokenizer_batch_wait_s * 1e3);
  if (double cpu = detail::front_end_request_cpu_s(opt); cpu > 0)
    r->engine += fmt::format(" and {:.1f} ms of its one process's CPU ({} endpoint), queued",
                             cpu * 1e3, opt.chat_endpoint ? "chat" : "completions");
  if (opt.kv_admission == KvAdmission::kPrompt)
    r->engine += "; admitted when the prompt fits (preemption past the KV cache)";
  r->arrivals = opt.rate > 0 || !burst_arrivals() ? "poisson" : "burst";
  r->chunked_prefill = opt.chunked_prefill;
  r->async_scheduling = opt.async_scheduling;
  r->kv_admission = to_string(opt.kv_admission);
  r->memory = mem;
  r->max_concurrency_fit = fit_box;
  r->notes = notes;
  if (opt.tp > 1) {
    r->allreduces_per_token = opt.expert_parallel ? m.layers : 2.0 * m.layers;
    r->allreduce_bytes_per_token = 2.0 * m.hidden;
    double D = std::max(1.0, r->point.decode.total > 0 ? r->point.running : 1.0);
    collective(*reps[0].tp[0], comm::Op::kAllReduce, D * m.hidden * 2.0, &r->comm_link,
               &r->comm_algorithm);
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
    return fmt::format(
        "overloaded: the box completes {:.2f} requests/s; requests beyond that queue without bound",
        p.requests_per_s);
  if (p.bound == "kv-cache")
    return fmt::format(
        "KV cache: {} sequences fit at once ({:.1f} GiB of KV cache per GPU); the other clients "
        "wait",
        r.max_concurrency_fit, r.memory.kv_cache / kGiB);
  if (p.bound == "link")
    return fmt::format("links: {:.0f}% of each decode step is {} over {}{}", 100 * p.comm_fraction,
                       r.tp > 1 ? "tensor-parallel all-reduces" : "pipeline sends", r.comm_link,
                       r.comm_algorithm.empty() ? "" : " (" + r.comm_algorithm + ")");
  if (p.bound == "compute")
    return fmt::format(
        "compute: {:.0f} TFLOP per GPU per step (prompt chunks and {:.0f} decoding sequences)",
        t.flops / 1e12, p.running);
  if (p.bound == "memory")
    return fmt::format(
        "memory bandwidth: each decode step reads {:.1f} GB per GPU (weights and KV cache)",
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
  Progress progress("serve: concurrency sweep", cs.size());
  for (int c : cs) {
    ServePoint p = closed_loop(c);
    progress.update(r->sweep.size() + 1);
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
