// work::run_serve: the serving prediction behind `linkwise serve` (options -> result, no
// rendering).
#include "linkwise/work/serve_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "linkwise/topo/chassis.h"
#include "linkwise/topo/chassis_options.h"
#include "linkwise/util/error.h"

namespace linkwise::work {

ServeOptions make_serve_options(const ServeRunOptions& o) {
  ServeOptions s;
  s.tp = o.tp;
  s.pp = o.pp;
  s.replicas = o.replicas;
  std::stringstream ss(o.gpus);
  for (std::string g; std::getline(ss, g, ',');)
    if (!g.empty()) s.gpus.push_back(g);
  if (!o.gpus.empty() && s.gpus.empty())
    throw InputError(fmt::format(
        "--gpus: '{}' names no GPU; give e.g. 0,1 or 0-3, or leave --gpus out for every GPU",
        o.gpus));
  s.input = o.input;
  s.output = o.output;
  s.concurrency = o.concurrency;
  s.rate = o.rate;
  if (!o.arrivals.empty()) s.arrivals = parse_arrivals(o.arrivals, "--arrivals");
  s.precision = parse_number_format(o.precision, "--precision");
  if (!o.kv_precision.empty()) {
    s.kv_precision = parse_number_format(o.kv_precision, "--kv-precision");
    s.kv_precision_given = true;
  }
  s.prefix_hit = o.prefix_hit;
  s.expert_parallel = o.expert_parallel;
  s.kv_offload = o.kv_offload;
  if (o.load == "gds")
    s.load = LoadPath::kGds;
  else if (o.load != "page-cache")
    throw InputError(fmt::format("--load must be page-cache or gds, not '{}'", o.load));
  s.lora_rank = o.lora_rank;
  s.max_batched_tokens = o.max_batched_tokens;
  s.max_seqs = o.max_seqs;
  s.chunked_prefill = !o.no_chunked_prefill;
  s.async_scheduling = !o.no_async_scheduling;
  s.async_output_processing = o.async_output_proc;
  s.prompt_only_steps = o.prompt_only_steps;
  if (s.prompt_only_steps && s.chunked_prefill)
    throw InputError(
        "--prompt-only-steps is vLLM V0's scheduling without chunked prefill: give "
        "--no-chunked-prefill with it");
  s.requests = o.requests;
  if (!o.front_end.empty()) s.front_end = parse_front_end(o.front_end, "--front-end");
  // The admission follows the engine behind the front end unless given: vLLM's API server fronts
  // vLLM V1, which admits by prompt (vllm/v1/core/sched/scheduler.py); the offline front end is
  // trtllm-bench's (TensorRT-LLM's GUARANTEED_NO_EVICT capacity scheduler: whole life), and NIM's
  // engine is TensorRT-LLM's by default.
  s.kv_admission =
      s.front_end == FrontEnd::kVllmApiServer ? KvAdmission::kPrompt : KvAdmission::kWholeLife;
  if (!o.kv_admission.empty())
    s.kv_admission = parse_kv_admission(o.kv_admission, "--kv-admission");
  if (o.endpoint == "chat")
    s.chat_endpoint = true;
  else if (o.endpoint != "completions")
    throw InputError(fmt::format("--endpoint must be chat or completions, not '{}'", o.endpoint));
  // The tokenizer's batch window is a wait on vLLM's API server (AsyncMicrobatchTokenizer).
  s.tokenizer_batch_wait_s = o.tokenizer_batch_wait;
  if (s.tokenizer_batch_wait_s > 0 && s.front_end != FrontEnd::kVllmApiServer)
    throw InputError(fmt::format(
        "--tokenizer-batch-wait {} is a wait on vLLM's API server; --front-end {} has none",
        s.tokenizer_batch_wait_s, o.front_end));
  // Async output processing is vLLM V0's: V0 schedules each step when the last one ends (async
  // scheduling is V1's), admits by prompt, and turns it off with pipeline parallelism
  // (ModelConfig.verify_async_output_proc); TensorRT-LLM (whole-life admission) has none.
  if (s.async_output_processing) {
    if (s.async_scheduling)
      throw InputError(
          "--async-output-proc is vLLM V0's, which schedules each step when the last one ends: "
          "give --no-async-scheduling with it");
    if (s.pp > 1)
      throw InputError(fmt::format(
          "--async-output-proc: vLLM V0 turns async output processing off with pipeline "
          "parallelism (--pp {})",
          s.pp));
    if (s.kv_admission == KvAdmission::kWholeLife)
      throw InputError(
          "--async-output-proc is vLLM V0's, which admits by prompt; whole-life admission "
          "(--kv-admission whole-life, the default with --front-end offline or nim) is "
          "TensorRT-LLM's");
  }
  return s;
}

namespace {

// Lives each client runs in the replay of a steady state: the run of 2k lives a client less the
// run of k (kSteadyLives = k) leaves k lives in the middle of a run, with the warm-up (the first
// cohort's prompts all at once) and the drain (the last requests ending with fewer clients left)
// in both runs and so out of the difference. Past the cache the preemptions come in cycles a few
// lives long, so the window must span many: Qwen3 8B on an RTX 4090, 100 in / 2000 out, 20, 29
// and 40 clients, k = 4 gives 808, 934 and 1022 output tok/s, k = 8 846, 1011, 1038, k = 16 834,
// 968, 1042 and k = 32 825, 969, 1030 (k = 16 within 1.2% of k = 32; Little's law n = X·E2E holds
// within 1.3% at k = 16 against up to 3.8% at k = 4).
constexpr int kSteadyLives = 16;

// The most request-steps (a request's visits by the scheduler: its output tokens and its prompt's
// chunks, Σ over requests) one answer replays: ~5·10^6 take ~0.2 s (40 clients of 2000 tokens,
// 2560 requests), so this bounds a point to a few seconds. Beyond it the point keeps the steady
// state, and says so.
constexpr double kMaxReplaySteps = 5e7;

// The replay sends each token at the end of its own step (ServeModel::replay has no V0 async
// output processing), so a replayed answer says so when --async-output-proc is on.
constexpr const char* kReplayWithoutAsyncOutput =
    "; the replay leaves V0 async output processing out (each token leaves at the end of its step)";
// Nor has it V0's prompt-only steps: its steps run prompts beside the decodes, as V1's do.
constexpr const char* kReplayWithoutPromptOnly =
    "; the replay runs prompts beside the decodes (V1's steps), not V0's prompt-only steps";

struct Replayed {
  double tokens = 0, duration = 0, requests = 0, ttft_sum = 0, e2e_sum = 0, itl_sum = 0, gaps = 0;
  double batch_seq_s = 0, busy_s = 0, batch_peak = 0;  // ReplayResult's
  long preemptions = 0;
};

// A replay of `requests` as sums, its requests `output` tokens long (a mean, where they end at
// EOS).
Replayed replayed_sums(const ReplayResult& r, int requests, double output) {
  Replayed x;
  x.requests = requests;
  x.tokens = r.output_tokens_per_s * r.duration_s;
  x.duration = r.duration_s;
  x.ttft_sum = r.ttft_mean_s * requests;
  x.e2e_sum = r.e2e_mean_s * requests;
  x.gaps = static_cast<double>(requests) * std::max(0.0, output - 1);
  x.itl_sum = r.itl_mean_s * x.gaps;
  x.preemptions = r.preemptions;
  x.batch_seq_s = r.batch_seq_s;
  x.busy_s = r.busy_s;
  x.batch_peak = r.batch_peak;
  return x;
}

Replayed replay_run(const ServeModel& sm, int clients, int requests, int output) {
  ReplayOptions ro;
  ro.concurrency = clients;
  ro.requests = requests;
  return replayed_sums(sm.replay(ro), requests, output);
}

// Replicas run side by side: the box's rates add theirs, its means weigh theirs by requests (ITL
// by the gaps between tokens), its batch is the replicas' mean batches over `reps` and its peak
// the most of any.
struct BoxReplay {
  Replayed sum;
  double tok_s = 0, req_s = 0, batch = 0, peak = 0;
  /// Adds `count` replicas that each ran `x`.
  void add(const Replayed& x, int count) {
    sum.requests += count * x.requests;
    sum.ttft_sum += count * x.ttft_sum;
    sum.e2e_sum += count * x.e2e_sum;
    sum.itl_sum += count * x.itl_sum;
    sum.gaps += count * x.gaps;
    sum.preemptions += count * x.preemptions;
    if (x.busy_s > 0) batch += count * x.batch_seq_s / x.busy_s;
    peak = std::max(peak, x.batch_peak);
    if (x.duration > 0) {
      tok_s += count * x.tokens / x.duration;
      req_s += count * x.requests / x.duration;
    }
  }
  /// The box's latencies, rates and batch into `p` (the wait for a slot is in the replay's TTFT,
  /// not told apart); the caller sets tokens a second a user.
  void fill(ServePoint* p, int reps) const {
    p->output_tokens_per_s = tok_s;
    p->requests_per_s = req_s;
    p->ttft_s = sum.ttft_sum / sum.requests;
    p->e2e_s = sum.e2e_sum / sum.requests;
    p->itl_s = sum.gaps > 0 ? sum.itl_sum / sum.gaps : 0;
    p->queue_s = 0;
    p->running = batch / reps;
    p->running_peak = peak;
  }
};

// One replica of `clients`: the finite run of `requests` (> 0) as it is, or else the steady
// state, the run of 2k lives a client less that of k.
Replayed replay_replica(const ServeModel& sm, int clients, int requests, int output) {
  if (requests > 0) return replay_run(sm, clients, requests, output);
  Replayed a = replay_run(sm, clients, kSteadyLives * clients, output);
  Replayed b = replay_run(sm, clients, 2 * kSteadyLives * clients, output);
  Replayed d;
  d.requests = b.requests - a.requests;
  d.tokens = b.tokens - a.tokens;
  d.duration = b.duration - a.duration;
  d.ttft_sum = b.ttft_sum - a.ttft_sum;
  d.e2e_sum = b.e2e_sum - a.e2e_sum;
  d.itl_sum = b.itl_sum - a.itl_sum;
  d.gaps = b.gaps - a.gaps;
  d.preemptions = b.preemptions - a.preemptions;
  d.batch_seq_s = b.batch_seq_s - a.batch_seq_s;
  d.busy_s = b.busy_s - a.busy_s;
  d.batch_peak = b.batch_peak;  // the longer run's, the warm-up's peak included
  return d;
}

// The replayed answer for n clients past the KV cache (vLLM V1 admits by prompt and preempts): the
// point's latencies and rates, and the preemptions. Nothing when the point is not past the cache
// (or not a closed loop of burst arrivals admitted by prompt); a note when the replay would step
// more than kMaxReplaySteps.
struct PastKv {
  ServePoint point;
  long preemptions = 0;
};
// Whether n clients run past the KV cache as vLLM V1 does: a closed loop of burst arrivals
// admitted by prompt, past the burst fit.
bool past_kv(const ServeModel& sm, const ServeOptions& so, int n, const std::string& arrivals) {
  return so.kv_admission == KvAdmission::kPrompt && so.rate <= 0 && arrivals == "burst" &&
         !so.kv_offload && sm.burst_past_kv(std::max(1, n));
}
std::optional<PastKv> replay_point(const ServeModel& sm, const ServeOptions& so, int n, int reps,
                                   const std::string& arrivals, std::vector<std::string>* notes) {
  n = std::max(1, n);
  if (!past_kv(sm, so, n, arrivals)) return std::nullopt;
  // What the replays would step: each request its output tokens and its prompt's chunks (the
  // recomputes of preempted requests come on top).
  const double per_request =
      so.output + std::ceil((1 - so.prefix_hit) * so.input / sm.max_batched_tokens());
  const double requests = so.requests > 0 ? so.requests : 3.0 * kSteadyLives * n;
  if (requests * per_request > kMaxReplaySteps) {
    notes->push_back(fmt::format(
        "at {} users, past the KV cache vLLM V1 admits by prompt and preempts; the replay that "
        "counts that would step {:.2g} request-steps, more than {:.0e}: the steady state leaves "
        "the preempted sequences out and understates throughput (docs/serving.md, \"Replay\")",
        n, requests * per_request, kMaxReplaySteps));
    return std::nullopt;
  }
  // The clients spread evenly over the replicas: `extra` replicas take one more.
  const int base = n / reps, extra = n % reps;
  const int req_base = so.requests / reps, req_extra = so.requests % reps;
  BoxReplay box;
  for (int k = 0; k < 2; ++k) {
    const int clients = base + (k == 0 ? 1 : 0), count = k == 0 ? extra : reps - extra;
    if (clients < 1 || count < 1) continue;
    // A finite run's requests follow its clients (each replica's share, at least one a client).
    int replica_requests = 0;
    if (so.requests > 0)
      replica_requests = std::max(clients, req_base + (k == 0 && req_extra > 0 ? 1 : 0));
    box.add(replay_replica(sm, clients, replica_requests, so.output), count);
  }
  PastKv out;
  ServePoint& p = out.point;
  box.fill(&p, reps);
  p.tokens_per_s_per_user = p.itl_s > 0 ? 1 / p.itl_s : so.output / p.e2e_s;
  out.preemptions = box.sum.preemptions;
  return out;
}

// The replayed figures over the steady state's: what a replay measures replaces, the rest (the
// mean step, link share, bound) stays, and so the steady state's batch it describes.
void take_replayed(const ServePoint& replayed, ServePoint* p) {
  p->steady_running = p->running;
  p->running_peak = replayed.running_peak;
  p->output_tokens_per_s = replayed.output_tokens_per_s;
  p->requests_per_s = replayed.requests_per_s;
  p->ttft_s = replayed.ttft_s;
  p->e2e_s = replayed.e2e_s;
  p->itl_s = replayed.itl_s;
  p->tokens_per_s_per_user = replayed.tokens_per_s_per_user;
  p->queue_s = replayed.queue_s;
  p->running = replayed.running;
}

}  // namespace

void replay_past_kv(const ServeModel& sm, const ServeOptions& so, ServeResult* r, bool answer) {
  // vLLM V1 admits by prompt and preempts past the KV cache; a closed loop with burst arrivals
  // (fixed lengths, clients in step) past the burst fit runs a state the steady-state formulas do
  // not describe (docs/serving.md, "Memory and admission"): replay it engine step by engine step,
  // the answer and every sweep point past the cache alike.
  const int n = std::max(1, so.concurrency);
  std::optional<PastKv> x;
  if (answer) x = replay_point(sm, so, n, r->replicas, r->arrivals, &r->notes);
  for (ServePoint& p : r->sweep) {
    if (p.concurrency == n) {  // the answer's own point: replayed (or not) above, or the caller's
      if (x) take_replayed(x->point, &p);
    } else if (auto y = replay_point(sm, so, p.concurrency, r->replicas, r->arrivals, &r->notes)) {
      take_replayed(y->point, &p);
    }
  }
  if (!x) return;
  take_replayed(x->point, &r->point);
  r->preemptions = x->preemptions;
  r->bottleneck = fmt::format(
      "KV cache: {} sequences fit at once for their whole lives ({:.1f} GiB of KV cache per GPU); "
      "vLLM admits the other clients by prompt and preempts and recomputes as they grow",
      r->max_concurrency_fit, r->memory.kv_cache / (1024.0 * 1024 * 1024));
  r->replayed = fmt::format(
      "replayed: past the KV cache, vLLM V1 admits by prompt and preempts: {} preemptions{}",
      x->preemptions,
      so.requests > 0
          ? fmt::format(" in a run of {} requests", so.requests)
          : fmt::format(" over {} lives a client after {} of warm-up", kSteadyLives, kSteadyLives));
  if (so.async_output_processing) r->replayed += kReplayWithoutAsyncOutput;
  if (so.prompt_only_steps) r->replayed += kReplayWithoutPromptOnly;
}

bool queued_at_once(const ServeOptions& o) {
  return o.rate <= 0 && o.requests > 0 && o.concurrency >= o.requests;
}

ServeOptions engine_limits(const topo::Chassis& chassis, const Model& model, ServeOptions o) {
  if (o.front_end != FrontEnd::kOffline || !queued_at_once(o) || o.max_seqs > 0 ||
      o.max_batched_tokens > 0)
    return o;
  // The engine's limits as trtllm-bench sets them from the dataset (trtllm_bench_settings): the
  // GPU's memory and the KV cache's bytes a token as the model has them, each GPU holding at least
  // one KV head.
  const ServeModel probe(chassis, model, o);
  const double kv_heads = std::max(model.kv_heads, o.tp);
  const auto s = trtllm_bench_settings(
      probe.memory().capacity, o.tp, o.pp, model.total_params() * bytes_per_value(o.precision),
      probe.memory().kv_bytes_per_token_model / model.kv_heads * kv_heads, o.input, o.output);
  o.max_seqs = s.max_batch_size;
  o.max_batched_tokens = s.max_num_tokens;
  return o;
}

namespace {

// A finite run replayed whole (queued at once, or requests that end at EOS): its requests spread
// evenly over the replicas (`extra` replicas take one more), each replica's clients capped at its
// requests; the replicas run side by side, so the box's rates add theirs and its means weigh
// theirs by requests (ITL by gaps between tokens).
void replay_finite(const ServeModel& sm, const ServeOptions& so, double mean_output,
                   ServeResult* r) {
  const int reps = std::max(1, r->replicas);
  const int base = so.requests / reps, extra = so.requests % reps;
  const int clients = std::max(1, so.concurrency);
  BoxReplay box;
  ReplayResult one;  // the replicas' run when they all run the same requests
  for (int k = 0; k < 2; ++k) {
    const int n = base + (k == 0 ? 1 : 0), count = k == 0 ? extra : reps - extra;
    if (n < 1 || count < 1) continue;
    ReplayOptions ro;
    ro.requests = n;
    ro.concurrency = reps == 1 ? clients : std::min(clients, n);
    ro.mean_output = mean_output;
    one = sm.replay(ro);
    box.add(replayed_sums(one, n, one.mean_output), count);
  }
  ServePoint& p = r->point;
  p.steady_running = p.running;
  box.fill(&p, reps);
  if (reps == 1) {  // the replay's own figures, not their sums divided again
    p.output_tokens_per_s = one.output_tokens_per_s;
    p.requests_per_s = one.requests_per_s;
    p.ttft_s = one.ttft_mean_s;
    p.itl_s = one.itl_mean_s;
    p.e2e_s = one.e2e_mean_s;
  }
  p.tokens_per_s_per_user = p.itl_s > 0 ? 1 / p.itl_s : 0;
  r->preemptions = box.sum.preemptions;
  if (extra == 0 || base == 0) {
    r->ttft_median_s = one.ttft_median_s;
    r->ttft_p99_s = one.ttft_p99_s;
  }
  for (ServePoint& q : r->sweep)
    if (q.concurrency == p.concurrency) take_replayed(p, &q);
  r->replayed =
      queued_at_once(so)
          ? fmt::format("replayed step by step: all {} requests queued at once", so.requests)
          : fmt::format(
                "replayed step by step: {} requests from {} clients, ending at EOS at a "
                "mean of {:.0f} output tokens",
                so.requests, clients, mean_output);
  if (reps > 1) r->replayed += fmt::format(", spread over {} replicas", reps);
  if (so.kv_admission == KvAdmission::kPrompt)
    r->replayed += fmt::format(" ({} preemptions)", box.sum.preemptions);
  if (so.async_output_processing) r->replayed += kReplayWithoutAsyncOutput;
  if (so.prompt_only_steps) r->replayed += kReplayWithoutPromptOnly;
}

}  // namespace

ServeResult serve_prediction(const topo::Chassis& chassis, const Model& model,
                             const ServeOptions& options, const std::vector<int>& sweep,
                             double mean_output) {
  const ServeOptions so = engine_limits(chassis, model, options);
  ServeModel sm(chassis, model, so);
  ServeResult r = sm.result();
  if (!sweep.empty()) sm.sweep(sweep, &r);
  // A client that queues every request of a finite run at once never reaches the steady state the
  // formulas describe: the engine starts with the whole run waiting, packs the waiting prompts into
  // its steps as its scheduler does, and drains at the end. The replay steps through exactly that,
  // whatever the admission (docs/serving.md, "Replay"); so does it through requests that end at
  // EOS. Sweep points stay the steady state (or vLLM's replay past the KV cache).
  bool whole = queued_at_once(so) || (mean_output > 0 && so.requests > 0);
  // What the replay would step (as replay_point counts it): beyond kMaxReplaySteps the point keeps
  // the steady state, and says so.
  const double steps =
      static_cast<double>(so.requests) *
      (so.output + std::ceil((1 - so.prefix_hit) * so.input / sm.max_batched_tokens()));
  if (whole && so.kv_offload) {  // the replay keeps the KV cache on the GPUs (ServeModel::replay)
    r.notes.push_back(
        "the replay of a finite run leaves KV offload out: the point is the steady state, not the "
        "run's ramp and drain (docs/serving.md, \"Replay\")");
    whole = false;
  } else if (whole && steps > kMaxReplaySteps) {
    // One note: the replay past the KV cache (replay_point) would step the same run, so the
    // answer's point is left to the steady state here, once.
    r.notes.push_back(fmt::format(
        "a run of {} requests would replay {:.2g} request-steps, more than {:.0e}: the point is "
        "the steady state, not the run's ramp and drain{} (docs/serving.md, \"Replay\")",
        so.requests, steps, kMaxReplaySteps,
        past_kv(sm, so, so.concurrency, r.arrivals)
            ? ", and past the KV cache, where vLLM V1 admits by prompt and preempts, it leaves "
              "the preempted sequences out and understates throughput"
            : ""));
    replay_past_kv(sm, so, &r, false);
    return r;
  }
  replay_past_kv(sm, so, &r, !whole);
  if (whole) replay_finite(sm, so, mean_output, &r);
  return r;
}

ServeRun run_serve(const ServeRunOptions& o) {
  ServeRun run;
  if (o.validation) {
    if (!o.chassis.empty() || !o.model.empty())
      throw InputError(
          "--validation runs each published case on its own machine; it takes no CHASSIS or "
          "--model");
    run.validation = true;
    run.rows = run_serve_validation();
    return run;
  }
  if (o.chassis.empty())
    throw InputError("serve needs a CHASSIS (a preset name or a chassis file)");
  if (o.model.empty())
    throw InputError("serve needs --model (a preset such as llama3.1-70b, or a model YAML file)");
  if (!o.sweep.empty() && o.sweep != "concurrency")
    throw InputError(fmt::format("--sweep takes 'concurrency', not '{}'", o.sweep));
  if (!o.sweep.empty() && o.rate > 0)
    throw InputError("--sweep concurrency is a closed loop; it takes no --rate");
  auto chassis = topo::load_chassis(o.chassis, 0, topo::link_rates(o.as_designed));
  return run_serve(o, chassis);
}

ServeRun run_serve(const ServeRunOptions& o, const topo::Chassis& chassis) {
  ServeRun run;
  if (o.model.empty())
    throw InputError("serve needs --model (a preset such as llama3.1-70b, or a model YAML file)");
  if (!o.sweep.empty() && o.sweep != "concurrency")
    throw InputError(fmt::format("--sweep takes 'concurrency', not '{}'", o.sweep));
  if (!o.sweep.empty() && o.rate > 0)
    throw InputError("--sweep concurrency is a closed loop; it takes no --rate");
  auto model = find_model(o.model);
  std::vector<int> points = o.sweep.empty() ? std::vector<int>{} : sweep_concurrencies(o.sweep_max);
  run.sweep = !points.empty();
  run.result = serve_prediction(chassis, model, make_serve_options(o), points);
  if (auto links = topo::link_rates_note(chassis); !links.empty())
    run.result.notes.push_back(links);
  return run;
}

const std::vector<OptionSpec<ServeRunOptions>>& serve_options() {
  using S = ServeRunOptions;
  using Spec = OptionSpec<S>;
  static const std::vector<Spec> specs = {
      topo::chassis_option(at<&S::chassis>),
      {"--model", at<&S::model>,
       "Model preset (llama3.1-70b, llama3.1-8b, qwen2.5-coder-32b, ...) or YAML file"},
      Spec{"--tp", at<&S::tp>, "Tensor-parallel GPUs per replica"}.range(1, 1024),
      Spec{"--pp", at<&S::pp>, "Pipeline stages per replica"}.range(1, 1024),
      Spec{"--replicas", at<&S::replicas>,
           "Independent copies of the model (default: as many as the GPUs hold)"}
          .range(1, 1 << 16),
      {"--gpus", at<&S::gpus>, "GPUs to use, e.g. 0,1 or 0-3 or GPU0,GPU1 (default: all)"},
      Spec{"--input", at<&S::input>, "Prompt tokens per request"}.range(1, 1 << 24),
      Spec{"--output", at<&S::output>, "Output tokens per request"}.range(1, 1 << 24),
      Spec{"--concurrency", at<&S::concurrency>,
           "Closed loop: this many users, each sending its next request when the last ends"}
          .range(1, 1 << 20),
      Spec{"--rate", at<&S::rate>, "Open loop: requests per second arriving"}.positive_number(),
      {"--arrivals", at<&S::arrivals>,
       "Closed loop: burst (clients start together, equal lengths: benchmark clients; default) "
       "or poisson (independent arrivals)"},
      {"--precision", at<&S::precision>, "Weights: bf16, fp8 or int4 (AWQ/GPTQ, group 128)"},
      {"--kv-precision", at<&S::kv_precision>,
       "KV cache: bf16 or fp8 (default: fp8 with fp8 weights, else bf16)"},
      Spec{"--prefix-cache", at<&S::prefix_hit>,
           "Fraction of each prompt found in the prefix cache (shared context)"}
          .range(0.0, 0.999999)
          .python("prefix_hit"),
      {"--expert-parallel", at<&S::expert_parallel>,
       "MoE: experts whole on each GPU, tokens sent by all-to-all"},
      {"--kv-offload", at<&S::kv_offload>,
       "Keep the KV cache that does not fit in host memory (over PCIe each step)"},
      {"--load", at<&S::load>,
       "How weights reach the GPUs at start: page-cache or gds (GPUDirect Storage)"},
      Spec{"--lora-rank", at<&S::lora_rank>,
           "Also show the swap time of one LoRA adapter of this rank"}
          .range(1, 1 << 16),
      Spec{"--max-batched-tokens", at<&S::max_batched_tokens>,
           "Token budget per engine step (default: vLLM's)"}
          .range(1, 1 << 24),
      Spec{"--max-seqs", at<&S::max_seqs>, "Most sequences per engine step (default: vLLM's)"}
          .range(1, 1 << 20),
      {"--front-end", at<&S::front_end>,
       "What requests pass through before the engine: vllm (its OpenAI API server; default), "
       "offline (the engine in-process, as trtllm-bench runs it) or nim"},
      {"--endpoint", at<&S::endpoint>,
       "The API endpoint requests use: completions (default) or chat (the chat template rendered "
       "on vLLM's API server, ~12 ms of its CPU a request)"},
      {"--kv-admission", at<&S::kv_admission>,
       "When a request is admitted against the KV cache: whole-life (its prompt and whole "
       "output fit: TensorRT-LLM; default with --front-end offline or nim) or prompt (its first "
       "chunk fits, preempting the latest admitted when any running request's tokens find too "
       "few blocks: vLLM V1; default with --front-end vllm)"},
      {"--no-chunked-prefill", at<&S::no_chunked_prefill>,
       "Each prompt runs whole in one step (TensorRT-LLM's default); vLLM chunks it"},
      {"--no-async-scheduling", at<&S::no_async_scheduling>,
       "The engine schedules each step when the last one ends (vLLM before v0.14); by default "
       "it schedules a step ahead while the GPU runs"},
      {"--async-output-proc", at<&S::async_output_proc>,
       "vLLM V0's async output processing: each step's tokens leave during the next step, once "
       "it is scheduled and launched (V0's default); V1 sends them at the end of their step"},
      Spec{"--tokenizer-batch-wait", at<&S::tokenizer_batch_wait>,
           "Seconds vLLM's API server waits to batch a prompt with others before tokenizing it "
           "(0.002 in the releases with AsyncMicrobatchTokenizer, vLLM PR #19334 until #45759; "
           "default 0)"}
          .range(0.0, 10.0),
      {"--prompt-only-steps", at<&S::prompt_only_steps>,
       "vLLM V0 without chunked prefill: a step with prompts runs prompts only, the decodes wait "
       "(needs --no-chunked-prefill); V1 and TensorRT-LLM run prompts beside the decodes"},
      Spec{"--requests", at<&S::requests>, "Closed loop: a finite benchmark of this many requests"}
          .range(1, 1 << 30),
      {"--sweep", at<&S::sweep>,
       "concurrency: the latency/throughput curve from 1 user up, and where it bends"},
      Spec{"--sweep-max", at<&S::sweep_max>, "Highest concurrency of the sweep"}.range(1, 1 << 16),
      {"--validation", at<&S::validation>,
       "Compare predictions with published serving measurements (docs/VALIDATION.md)"},
      topo::as_designed_option(at<&S::as_designed>),
  };
  return specs;
}

}  // namespace linkwise::work
