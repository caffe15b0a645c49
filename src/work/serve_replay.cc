// A finite closed-loop benchmark replayed one engine step at a time (docs/serving.md, "Replay"):
// the check behind the steady-state and first-cohort formulas of serve_loop.cc, with the order of
// work of vLLM V1's scheduler and each step timed by ServeModel::step().
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <random>
#include <vector>

#include "linkwise/util/error.h"
#include "linkwise/work/serve.h"
#include "work/serve_impl.h"

namespace linkwise::work {

namespace {

struct Request {
  double arrival = 0;  ///< when its client sent it
  double ready = 0;    ///< when it reaches the engine, past the front end
  double left = 0;     ///< prompt tokens still to run
  int length = 1;      ///< output tokens it ends at
  int generated = 0;
  double first_token = 0;  ///< when its first token came
  double prompt = 0;       ///< tokens its prefill computes: the prompt, or after a preemption the
                           ///< prompt and the tokens generated so far (recomputed)
  double held = 0;         ///< tokens of KV cache it has computed
  double blocks = 0;       ///< KV-cache blocks allocated to it (KvAdmission::kPrompt)
  double chunk_at = -1;    ///< when its latest streamed chunk leaves the front end
  int chunks = 0;          ///< streamed chunks so far (tokens ready together leave as one)
};

// vLLM's KV-cache block: 16 tokens, CacheConfig's default block_size on CUDA
// (vllm/config/cache.py); the scheduler allocates whole blocks (vllm/v1/core/kv_cache_manager.py,
// allocate_slots).
constexpr double kBlockTokens = 16;
double blocks_for(double tokens) { return std::ceil(tokens / kBlockTokens); }

// The chance p of ending after each token that gives outputs capped at `cap` the mean `mean`:
// E[min(G, cap)] = sum_{k<cap} (1-p)^k = (1 - (1-p)^cap) / p for G geometric on 1, 2, ... It falls
// from cap (p -> 0) to 1 (p = 1); bisection.
double stop_chance(double mean, int cap) {
  double lo = 0, hi = 1;
  for (int it = 0; it < 200; ++it) {
    double p = 0.5 * (lo + hi);
    double m = (1 - std::pow(1 - p, cap)) / p;
    (m > mean ? lo : hi) = p;
  }
  return 0.5 * (lo + hi);
}

// numpy.percentile's linear interpolation (what vllm bench serve reports), q in [0, 100].
double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q / 100 * static_cast<double>(sorted.size() - 1);
  auto i = static_cast<std::size_t>(std::floor(pos));
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (pos - static_cast<double>(i)) * (sorted[i + 1] - sorted[i]);
}

}  // namespace

ReplayResult ServeModel::replay(const ReplayOptions& o) const {
  const Impl& m = *impl_;
  const ServeOptions& opt = m.opt;
  if (o.concurrency < 1)
    throw InputError(fmt::format("replay: concurrency must be at least 1, not {}", o.concurrency));
  if (o.requests < 1)
    throw InputError(fmt::format("replay: requests must be at least 1, not {}", o.requests));
  if (!(o.mean_output == 0 || o.mean_output >= 1) || !std::isfinite(o.mean_output))
    throw InputError(
        fmt::format("replay: the mean output must be at least 1 token, not {}", o.mean_output));
  const int O = opt.output;
  const double P = std::max(1.0, std::round(opt.input * (1 - opt.prefix_hit)));
  const double hit_prefix = opt.input * opt.prefix_hit;
  const double B = m.engine.max_batched_tokens;
  // Admission against the KV cache (ServeOptions::kv_admission). Whole lives: at most the
  // sequences whose input + output fit (fit_replica), never preempted. By prompt (vLLM V1,
  // vllm/v1/core/sched/scheduler.py `schedule`): blocks are allocated for the tokens each step
  // schedules, the running requests' first, in the order they were admitted; when a running
  // request finds no free block the latest admitted one is preempted (`self.running.pop()`,
  // `_preempt_request`: its blocks freed, back to the head of the waiting queue, its prompt and the
  // tokens it had generated computed again when it is scheduled next; V1 has no swap to host), and
  // a step that preempted admits no waiting request. A waiting request is admitted when the blocks
  // of its first chunk fit.
  const bool by_prompt = opt.kv_admission == KvAdmission::kPrompt;
  const double total_blocks =
      std::floor(std::max(0.0, m.mem.kv_tokens - hit_prefix) / kBlockTokens);
  if (by_prompt && blocks_for(opt.input * (1 - opt.prefix_hit) + O) > total_blocks)
    throw InputError(fmt::format(
        "replay: one request of {} + {} tokens needs more than the {:.0f} tokens of KV cache",
        opt.input, O, total_blocks * kBlockTokens));
  const std::size_t cap = static_cast<std::size_t>(
      std::max(1, by_prompt ? m.engine.max_seqs : std::min(m.engine.max_seqs, m.fit_replica)));
  const bool eos = o.mean_output > 0 && o.mean_output < O;
  const double p = eos ? stop_chance(o.mean_output, O) : 0;
  // The front end (work/serve_front.cc): one process that takes each request's CPU time in the
  // order they come and every streamed token's and chunk's, as a FIFO queue; its latency (HTTP, the
  // hop to the engine and back) all taken on the way in. A request reaches the engine when its own
  // processing is done, plus that latency.
  const double front = detail::front_end_latency_s(opt.front_end);
  const double fe_req = detail::front_end_request_cpu_s(opt);
  const double fe_detok = detail::front_end_token_cpu_s(opt.front_end);
  const double fe_chunk = detail::front_end_chunk_cpu_s(opt.front_end);
  std::vector<double> finish_at;
  double last_chunk = 0;
  double fe_free = 0;  // when the front end's process has done the work given it so far
  std::mt19937_64 rng(o.seed);
  auto draw = [&]() {
    int length = 1;
    // 53 random bits as a double in [0, 1): the same run for the same seed on every platform.
    while (length < O && (!eos || static_cast<double>(rng() >> 11) * 0x1.0p-53 >= p)) ++length;
    return length;
  };

  std::deque<Request> waiting;
  std::vector<Request> running;  // in the order the engine admitted them
  int sent = 0;
  auto send = [&](double at) {
    fe_free = std::max(fe_free, at) + fe_req;
    Request q;
    q.arrival = at;
    q.ready = fe_free + front;
    q.left = q.prompt = P;
    q.length = draw();
    waiting.push_back(q);
    ++sent;
  };
  for (int i = 0; i < std::min(o.concurrency, o.requests); ++i) send(0);

  ReplayResult r;
  std::vector<double> ttft;
  ttft.reserve(static_cast<std::size_t>(o.requests));
  double t = 0, out = 0, gaps = 0, gap_count = 0, e2e = 0;
  std::vector<double> take;
  std::vector<char> decoding;
  // Async scheduling (ServeOptions::async_scheduling; vLLM's EngineCore.step_with_batch_queue with
  // two batches in flight): while the engine runs back to back, step k+1 is scheduled when step k
  // starts, from the requests that had reached the engine by then, and the sequences that end at
  // EOS in step k still hold their slot in it (the scheduler learns of their end after step k;
  // one that reaches its max_tokens is not scheduled again, vllm/v1/core/sched/scheduler.py). An
  // idle engine schedules a request as soon as it arrives.
  bool busy = false;  // the last step ended at t and the engine went straight on
  double last_start = 0, ghost_ctx = 0;
  int ghosts = 0;  // sequences that ended in the last step, still in this one (async)
  while (!waiting.empty() || !running.empty()) {
    const bool ahead = opt.async_scheduling && busy;
    const double decided = ahead ? last_start : t;  // when this step's work was chosen
    // The running sequences past their prompt decode one token each; the budget left goes to the
    // prompts already started, then to the waiting ones in arrival order.
    double D = 0, ctx_d = 0, C = 0, ctx_p = 0;
    if (ahead && ghosts > 0) {
      D += ghosts;
      ctx_d += ghost_ctx;
    }
    // By prompt: the decoding requests' next tokens take their blocks in admission order,
    // preempting the latest admitted request while they do not fit.
    double free_blocks = total_blocks;
    bool preempted = false;
    auto preempt_latest = [&]() {
      Request q = running.back();
      running.pop_back();
      free_blocks += q.blocks;
      q.left = q.prompt = P + q.generated;
      q.held = q.blocks = 0;
      q.ready = decided;
      waiting.push_front(q);
      ++r.preemptions;
      preempted = true;
    };
    if (by_prompt) {
      for (const Request& q : running) free_blocks -= q.blocks;
      for (std::size_t i = 0; i < running.size(); ++i) {
        if (running[i].left > 0) continue;  // prompts take theirs from the budget, below
        double need = blocks_for(running[i].held + 1) - running[i].blocks;
        while (need > free_blocks && running.size() > i) preempt_latest();
        if (i >= running.size()) break;  // it preempted itself: nothing left to run after it
        free_blocks -= need;
        running[i].blocks += need;
      }
    }
    decoding.assign(running.size(), 0);
    take.assign(running.size(), 0);
    for (std::size_t i = 0; i < running.size(); ++i)
      if (running[i].left <= 0) {
        decoding[i] = 1;
        ++D;
        ctx_d += opt.input + running[i].generated;
      }
    double budget = std::max(0.0, B - D);
    auto schedule = [&](std::size_t i) {
      Request& q = running[i];
      double done = q.prompt - q.left;
      take[i] = opt.chunked_prefill ? std::min(q.left, budget) : q.left;
      if (by_prompt) {  // only the tokens whose blocks fit; without chunking the whole prompt
        // A prompt already running that finds too few blocks preempts the latest admitted too,
        // while that one has no token in this step (the decodes above took theirs).
        while (running.size() > i + 1 && !decoding.back() &&
               (q.blocks + free_blocks) * kBlockTokens - q.held < take[i]) {
          preempt_latest();
          decoding.pop_back();
          take.pop_back();
        }
        double fit = std::max(0.0, (q.blocks + free_blocks) * kBlockTokens - q.held);
        if (take[i] > fit) take[i] = opt.chunked_prefill ? fit : 0;
        double need = std::max(0.0, blocks_for(q.held + take[i]) - q.blocks);
        free_blocks -= need;
        q.blocks += need;
      }
      budget -= take[i];
      C += take[i];
      ctx_p += take[i] * (hit_prefix + done + take[i] / 2);
    };
    for (std::size_t i = 0; i < running.size() && budget > 0; ++i)
      if (!decoding[i]) schedule(i);
    while (!waiting.empty() && waiting.front().ready <= decided && budget > 0 &&
           running.size() < cap && !preempted) {
      const Request& next = waiting.front();
      // Without chunked prefill only whole prompts that fit, but at least one per step.
      if (!opt.chunked_prefill && next.left > budget && C > 0) break;
      // By prompt: the blocks of the chunk it would run now must be free.
      if (by_prompt &&
          blocks_for(opt.chunked_prefill ? std::min(next.left, budget) : next.left) > free_blocks)
        break;
      running.push_back(waiting.front());
      waiting.pop_front();
      decoding.push_back(0);
      take.push_back(0);
      schedule(running.size() - 1);
    }
    if (D == 0 && C == 0 && !waiting.empty() && (ahead || waiting.front().ready > t)) {
      // The engine idles until the next request is through, and then schedules it at once.
      t = std::max(t, waiting.front().ready);
      busy = false;
      ghosts = 0;
      continue;
    }
    if (D == 0 && C == 0)
      throw RuntimeError("replay: the engine has nothing to run while requests wait");
    StepTime st = step(D, D > 0 ? ctx_d / D : 0, C, C > 0 ? ctx_p / C : 0);
    last_start = t;
    t += st.total;
    busy = true;
    ++r.steps;
    // The step's outputs: a token for every decoding sequence and for every prompt it completed.
    std::size_t kept = 0;

    ghosts = 0;
    // The front end's process takes the step's tokens as soon as the request it is processing
    // (if any) is done: its loop runs the output handler between two requests' preprocessing, so
    // the requests queued behind that one wait for the tokens, not the tokens for them (the
    // backlog taken as back-to-back requests of fe_req each). Each token's detokenization, and a
    // chunk for each request whose last chunk has left; a token whose request still has a chunk
    // waiting joins it (RequestOutputCollector) and leaves with it.
    const double in_service =
        fe_free > t && fe_req > 0 ? std::fmod(fe_free - t, fe_req) : std::max(0.0, fe_free - t);
    const double fe_start = t + in_service;
    double fe_at = fe_start;
    finish_at.clear();
    ghost_ctx = 0;
    for (std::size_t i = 0; i < running.size(); ++i) {
      Request& q = running[i];
      bool token = decoding[i] != 0;
      q.held += take[i] + (token ? 1 : 0);
      if (!token && take[i] > 0) {
        q.left -= take[i];
        if (q.left <= 0) {
          token = true;
        }
      }
      if (token) {
        fe_at += fe_detok;
        if (!(q.chunk_at > t)) {  // a chunk of its own
          fe_at += fe_chunk;
          q.chunk_at = fe_at;
          ++q.chunks;
        }
        if (q.generated == 0) {  // a recomputed request's next token is not its first
          ttft.push_back(q.chunk_at - q.arrival);
          q.first_token = q.chunk_at;
        }
        ++q.generated;
        ++out;
      }
      if (q.generated >= q.length) {
        if (q.length < O) {  // ended at EOS: the scheduler knew only of a length cap
          ++ghosts;
          ghost_ctx += opt.input + q.generated;
        }
        gaps += q.chunk_at - q.first_token;  // vllm bench serve: a gap per chunk
        e2e += q.chunk_at - q.arrival;
        gap_count += q.chunks - 1;
        finish_at.push_back(q.chunk_at);
        last_chunk = std::max(last_chunk, q.chunk_at);
      } else {
        if (kept != i) running[kept] = q;
        ++kept;
      }
    }
    running.resize(kept);
    fe_free = std::max(fe_free, t) + (fe_at - fe_start);  // the queued requests wait for it
    // Each finished request's client sends its next one as its last chunk arrives, while the run
    // lasts.
    std::sort(finish_at.begin(), finish_at.end());
    for (double at : finish_at)
      if (sent < o.requests) send(at);
  }
  std::sort(ttft.begin(), ttft.end());
  double sum = 0;
  for (double x : ttft) sum += x;
  r.ttft_mean_s = ttft.empty() ? 0 : sum / static_cast<double>(ttft.size());
  r.ttft_median_s = percentile(ttft, 50);
  r.ttft_p99_s = percentile(ttft, 99);
  r.itl_mean_s = gap_count > 0 ? gaps / gap_count : 0;
  r.e2e_mean_s = e2e / o.requests;
  // The run ends when its last chunk reaches its client.
  const double end = std::max(t, last_chunk);
  r.duration_s = end;
  r.output_tokens_per_s = end > 0 ? out / end : 0;
  r.requests_per_s = end > 0 ? o.requests / end : 0;
  r.mean_output = out / o.requests;
  return r;
}

}  // namespace linkwise::work
