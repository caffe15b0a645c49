// A finite closed-loop benchmark replayed one engine step at a time (docs/serving.md, "Replay"):
// the check behind the steady-state and first-cohort formulas of serve_loop.cc, with the order of
// work of vLLM V1's scheduler and each step timed by ServeModel::step().
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
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
  double held = 0;         ///< tokens whose KV it has computed (vLLM's num_computed_tokens): its
                           ///< prompt's so far, then one a decode step (the token sampled last)
  double blocks = 0;       ///< KV-cache blocks allocated to it
  double chunk_at = -1;    ///< when its latest streamed chunk leaves the front end
  int chunks = 0;          ///< streamed chunks so far (tokens ready together leave as one)
  // After a preemption: where its freed blocks end in the free queue (KvBlocks) and how many of
  // them were full, and so cached; 0 when it holds none there.
  double cache_end = 0, cache_full = 0;
  double reserved = 0;  ///< tokens of KV cache held for its whole life (whole-life admission)
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

// The KV-cache blocks of one replica. Admitted by prompt (vLLM V1) a request holds the blocks of
// the tokens it has computed and of those it computes in the step being scheduled; a request's
// allocation is all or nothing (vllm/v1/core/kv_cache_manager.py `allocate_slots` returns None
// when the new blocks exceed the free ones). Admitted for whole lives the replay never runs out:
// `free` is infinite and the sequence cap (fit_replica) does the admitting.
//
// The free blocks form vLLM's free queue (vllm/v1/core/block_pool.py, FreeKVCacheBlockQueue): new
// blocks are taken from its head, freed ones appended at its tail, a request's in reverse order
// ("Free blocks in reverse order so that the tail blocks are freed first",
// vllm/v1/core/single_type_kv_cache_manager.py `free`), and a freed full block keeps its hash until
// it is taken again. With prefix caching on (vLLM V1's default) a preempted request that is
// admitted again finds its first blocks still cached, as many as no one has taken since: the queue
// is kept as positions, each freeing a range [start, end) keyed by its end, so a preempted
// request's range, eaten from its front (its last blocks first), leaves its first blocks intact.
struct KvBlocks {
  double free = 0;
  bool bounded = true;             ///< false: admitted for whole lives, nothing to count
  std::map<double, double> queue;  ///< the free queue as position ranges: end -> start
  double tail = 0;                 ///< the position the next freed block takes
  void init(double total) {
    free = tail = total;
    if (total > 0) queue[total] = 0;
  }
  double need(const Request& q, double tokens) const {
    return std::max(0.0, blocks_for(q.held + tokens) - q.blocks);
  }
  /// Whether what q runs next fits, `cached` of the free blocks being its own cached ones (they
  /// leave the free blocks as it is admitted).
  bool fits(const Request& q, double tokens, double cached = 0) const {
    return !bounded || need(q, tokens) <= free - cached;
  }
  void take(double n) {  // n blocks from the queue's head
    while (n > 0 && !queue.empty()) {
      auto it = queue.begin();
      const double len = it->first - it->second;
      if (len <= n) {
        n -= len;
        queue.erase(it);
      } else {
        it->second += n;
        n = 0;
      }
    }
  }
  void grow(Request& q, double tokens) {
    if (!bounded) return;
    double n = need(q, tokens);
    free -= n;
    q.blocks += n;
    take(n);
  }
  /// Frees q's blocks to the queue's tail; returns where they end.
  double release(Request& q) {
    if (!bounded) return 0;
    free += q.blocks;
    if (q.blocks > 0) queue[tail + q.blocks] = tail;
    tail += q.blocks;
    q.blocks = 0;
    return tail;
  }
  /// A preempted request's cached blocks still in the queue, at most `cap`: its first ones, those
  /// of its range no one has taken.
  double cached(const Request& q, double cap) const {
    if (!bounded || q.cache_end <= 0) return 0;
    auto it = queue.find(q.cache_end);
    if (it == queue.end()) return 0;
    return std::max(0.0, std::min({q.cache_full, it->first - it->second, cap}));
  }
  /// Takes n of them back (the last n positions of its range) for the request.
  void reclaim(Request& q, double n) {
    auto it = queue.find(q.cache_end);
    if (n > 0 && it != queue.end()) {
      const double start = it->second, end = it->first;
      queue.erase(it);
      if (end - n > start) queue[end - n] = start;
      free -= n;
      q.blocks += n;
    }
    q.cache_end = q.cache_full = 0;
  }
};

// The running requests in the order the engine admitted them. They stay where they were put (a
// pool whose freed places are reused) and only their order, a list of places, moves: a step that
// ends the oldest of thousands shifts small indices, not the requests.
class Running {
 public:
  std::size_t size() const { return order_.size(); }
  bool empty() const { return order_.empty(); }
  Request& operator[](std::size_t i) { return pool_[order_[i]]; }
  const Request& operator[](std::size_t i) const { return pool_[order_[i]]; }
  Request& back() { return pool_[order_.back()]; }
  void push_back(const Request& q) {
    if (free_.empty()) {
      order_.push_back(static_cast<std::uint32_t>(pool_.size()));
      pool_.push_back(q);
    } else {
      order_.push_back(free_.back());
      free_.pop_back();
      pool_[order_.back()] = q;
    }
  }
  void pop_back() {
    free_.push_back(order_.back());
    order_.pop_back();
  }
  /// Compaction after a step: the i-th stays as the kept-th (kept <= i), or leaves.
  void keep(std::size_t kept, std::size_t i) { order_[kept] = order_[i]; }
  void leave(std::size_t i) { free_.push_back(order_[i]); }
  void truncate(std::size_t kept) { order_.resize(kept); }

 private:
  std::vector<Request> pool_;
  std::vector<std::uint32_t> order_, free_;
};

// One replayed run: its clients, the engine's queues and KV cache, the step being scheduled and the
// tallies `vllm bench serve` reports.
class Replay {
 public:
  Replay(const ServeModel::Impl& m, const ReplayOptions& o);
  ReplayResult run();

 private:
  int draw();
  void send(double at);
  void begin_step(bool ahead);
  void schedule(std::size_t i, double tokens, bool decode);
  void preempt_latest();
  void schedule_running();
  void admit_waiting();
  void finish_step();
  bool fast_forward();
  ReplayResult summary();

  const ServeModel::Impl& m_;
  const ServeOptions& opt_;
  const ReplayOptions& o_;
  int O_ = 1;
  double P_ = 1, hit_prefix_ = 0, B_ = 1, front_ = 0, p_ = 0;
  double fe_req_ = 0, fe_detok_ = 0,
         fe_chunk_ = 0;  // the front end's CPU time a request, token, chunk
  bool eos_ = false;
  std::size_t cap_ = 1;
  // Whole-life admission with lengths that differ (eos_): each request holds its prompt and its own
  // length of KV cache from admission to its end; the tokens not held.
  bool lives_ = false;
  double life_free_ = 0;
  std::mt19937_64 rng_;

  std::deque<Request> waiting_;
  Running running_;  // in the order the engine admitted them
  KvBlocks kv_;
  int sent_ = 0;

  // The step being scheduled: chosen at `decided_`, its decode and prompt tokens and their mean
  // contexts, what each running request runs in it.
  double decided_ = 0, budget_ = 0, D_ = 0, ctx_d_ = 0, C_ = 0, ctx_p_ = 0;
  int prefills_ = 0;  // sequences running a chunk of their prompt in this step
  bool preempted_ = false;
  std::vector<double> take_;
  std::vector<char> decoding_;

  // Async scheduling (ServeOptions::async_scheduling; vLLM's EngineCore.step_with_batch_queue with
  // two batches in flight): while the engine runs back to back, step k+1 is scheduled when step k
  // starts, from the requests that had reached the engine by then, and the sequences that end at
  // EOS in step k still hold their slot in it (the scheduler learns of their end after step k;
  // one that reaches its max_tokens is not scheduled again, vllm/v1/core/sched/scheduler.py). An
  // idle engine schedules a request as soon as it arrives.
  double t_ = 0, last_start_ = 0, ghost_ctx_ = 0;
  bool busy_ = false;  // the last step ended at t_ and the engine went straight on
  int ghosts_ = 0;     // sequences that ended in the last step, still in this one (async)

  // The front end's process (work/serve_front.cc).
  double fe_free_ = 0;  // when it has done the work given it so far
  double last_chunk_ = 0;
  std::vector<double> finish_at_;  // when the requests that ended in the last step reach clients

  std::vector<double> ttft_;
  double out_ = 0, gaps_ = 0, gap_count_ = 0, e2e_ = 0;
  ReplayResult r_;
};

Replay::Replay(const ServeModel::Impl& m, const ReplayOptions& o)
    : m_(m), opt_(m.opt), o_(o), rng_(o.seed) {
  if (o.concurrency < 1)
    throw InputError(fmt::format("replay: concurrency must be at least 1, not {}", o.concurrency));
  if (o.requests < 1)
    throw InputError(fmt::format("replay: requests must be at least 1, not {}", o.requests));
  if (!(o.mean_output == 0 || o.mean_output >= 1) || !std::isfinite(o.mean_output))
    throw InputError(
        fmt::format("replay: the mean output must be at least 1 token, not {}", o.mean_output));
  O_ = opt_.output;
  P_ = std::max(1.0, std::round(opt_.input * (1 - opt_.prefix_hit)));
  hit_prefix_ = opt_.input * opt_.prefix_hit;
  B_ = m.engine.max_batched_tokens;
  const bool by_prompt = opt_.kv_admission == KvAdmission::kPrompt;
  if (by_prompt) {
    // The shared prefix's blocks stay in the cache; the rest is the requests'. A request computes
    // the KV of at most P + O - 1 tokens (its last token is sampled, never fed back). One whose
    // blocks exceed the whole cache could never finish; vLLM refuses it before serving (it checks
    // at start that max_model_len's blocks fit the cache, vllm/v1/core/kv_cache_utils.py
    // `check_enough_kv_cache_memory`). The constructor's check counts tokens, not whole blocks:
    // this is the 16-token window it leaves.
    const double total = std::floor(std::max(0.0, m.mem.kv_tokens - hit_prefix_) / kBlockTokens);
    if (blocks_for(P_ + O_ - 1) > total)
      throw InputError(fmt::format(
          "replay: one request of {} + {} tokens needs {:.0f} KV-cache blocks of {:.0f} "
          "tokens, more than the {:.0f} the cache holds",
          opt_.input, O_, blocks_for(P_ + O_ - 1), kBlockTokens, total));
    kv_.init(total);
  } else {
    kv_.free = std::numeric_limits<double>::infinity();
    kv_.bounded = false;
  }
  eos_ = o.mean_output > 0 && o.mean_output < O_;
  p_ = eos_ ? stop_chance(o.mean_output, O_) : 0;
  // Admitted for whole lives (TensorRT-LLM's GUARANTEED_NO_EVICT reserves each request's prompt
  // and its max_tokens; SGLang's share of them is taken as whole), a request runs when its own
  // life fits what the others leave. With one length for all that is the fit_replica cap; with
  // lengths that differ (a client that sends each request its own max_tokens, `vllm bench serve
  // --dataset-name sharegpt`), each holds its own: its drawn length, taken as its cap (the request
  // is taken to run to it).
  lives_ = !by_prompt && eos_;
  life_free_ = std::max(0.0, m.mem.kv_tokens - hit_prefix_);
  cap_ = static_cast<std::size_t>(std::max(
      1, by_prompt || lives_ ? m.engine.max_seqs : std::min(m.engine.max_seqs, m.fit_replica)));
  // The front end (work/serve_front.cc): one process that takes each request's CPU time in the
  // order they come and every streamed token's and chunk's, as a FIFO queue; its latency (HTTP, the
  // hop to the engine and back) all taken on the way in. A request reaches the engine when its own
  // processing is done, plus that latency.
  front_ = detail::front_end_latency_s(opt_);
  fe_req_ = detail::front_end_request_cpu_s(opt_);
  fe_detok_ = detail::front_end_token_cpu_s(opt_.front_end);
  fe_chunk_ = detail::front_end_chunk_cpu_s(opt_.front_end);
  ttft_.reserve(static_cast<std::size_t>(o.requests));
}

int Replay::draw() {
  int length = 1;
  // 53 random bits as a double in [0, 1): the same run for the same seed on every platform.
  while (length < O_ && (!eos_ || static_cast<double>(rng_() >> 11) * 0x1.0p-53 >= p_)) ++length;
  return length;
}

void Replay::send(double at) {
  fe_free_ = std::max(fe_free_, at) + fe_req_;
  Request q;
  q.arrival = at;
  q.ready = fe_free_ + front_;
  q.left = q.prompt = P_;
  q.length = draw();
  waiting_.push_back(q);
  ++sent_;
}

void Replay::begin_step(bool ahead) {
  decided_ = ahead ? last_start_ : t_;  // when this step's work is chosen
  D_ = ctx_d_ = C_ = ctx_p_ = 0;
  prefills_ = 0;
  if (ahead && ghosts_ > 0) {
    D_ += ghosts_;
    ctx_d_ += ghost_ctx_;
  }
  budget_ = std::max(0.0, B_ - D_);
  preempted_ = false;
  take_.assign(running_.size(), 0);
  decoding_.assign(running_.size(), 0);
}

// Running request i runs `tokens` in this step: its next decode, or the next chunk of its prompt.
void Replay::schedule(std::size_t i, double tokens, bool decode) {
  Request& q = running_[i];
  kv_.grow(q, tokens);
  budget_ -= tokens;
  if (decode) {
    decoding_[i] = 1;
    ++D_;
    ctx_d_ += opt_.input + q.generated;
  } else {
    take_[i] = tokens;
    ++prefills_;
    C_ += tokens;
    r_.prompt_tokens += tokens;
    ctx_p_ += tokens * (hit_prefix_ + (q.prompt - q.left) + tokens / 2);
  }
}

// vLLM V1's preemption (`self.running.pop()`, `_preempt_request`): the latest admitted request
// frees its blocks and goes back to the head of the waiting queue; its prompt and the tokens it had
// generated are computed again when it is scheduled next (V1 has no swap to host).
void Replay::preempt_latest() {
  Request q = running_.back();
  running_.pop_back();
  take_.pop_back();
  decoding_.pop_back();
  q.cache_full = std::floor(q.held / kBlockTokens);  // its full blocks keep their hashes
  q.cache_end = kv_.release(q);
  q.left = q.prompt = P_ + q.generated;
  q.held = 0;
  q.ready = decided_;
  waiting_.push_front(q);
  ++r_.preemptions;
  preempted_ = true;
}

// One pass over the running requests in the order they were admitted (vllm/v1/core/sched/
// scheduler.py `schedule`: "There's no decoding phase nor prefill phase"): each asks for its next
// tokens, a decode's one or its prompt's next chunk up to the budget left, never fewer; while
// their blocks do not fit, the latest admitted request is preempted, and one that preempts itself
// ends the pass.
void Replay::schedule_running() {
  for (std::size_t i = 0; i < running_.size() && budget_ > 0; ++i) {
    const bool decode = running_[i].left <= 0;
    const double n = decode ? 1 : std::min(running_[i].left, budget_);
    while (!kv_.fits(running_[i], n)) {
      const bool itself = running_.size() == i + 1;
      preempt_latest();
      if (itself) return;
    }
    schedule(i, n, decode);
  }
}

// Waiting requests first come first served, while the budget, the sequence cap and the cache allow
// and nothing was preempted in this step (vLLM admits none then): with chunked prefill the last
// one's prompt is chunked to the budget; without, whole prompts that fit, but at least one a step.
// A request is admitted when the blocks of what it runs now fit. A preempted one first finds its
// own first blocks still cached (KvBlocks::cached; vllm/v1/core/sched/scheduler.py asks
// `get_computed_blocks` for a request with nothing computed, and a hit stops one token short of
// all its tokens) and computes only the rest; the cached blocks leave the free ones as it is
// admitted (`allocate_slots` counts them against the free blocks).
void Replay::admit_waiting() {
  while (!waiting_.empty() && waiting_.front().ready <= decided_ && budget_ > 0 &&
         running_.size() < cap_ && !preempted_) {
    Request next = waiting_.front();
    const double hit = kv_.cached(next, std::floor((next.prompt - 1) / kBlockTokens));
    if (hit > 0) {  // as it would run with its cached blocks
      next.held = hit * kBlockTokens;
      next.left = next.prompt - next.held;
      next.blocks = hit;
    }
    if (!opt_.chunked_prefill && next.left > budget_ && C_ > 0) break;
    const double n = opt_.chunked_prefill ? std::min(next.left, budget_) : next.left;
    if (!kv_.fits(next, n, hit)) break;
    if (lives_) {
      next.reserved = P_ + next.length;
      // One whose life is more than the whole cache runs alone (the engine refuses none of these
      // rows' requests: the draw is capped at the row's cap).
      if (next.reserved > life_free_ && !running_.empty()) break;
      life_free_ -= next.reserved;
    }
    if (next.cache_end > 0) {
      next.blocks = 0;
      kv_.reclaim(next, hit);
    }
    running_.push_back(next);
    waiting_.pop_front();
    take_.push_back(0);
    decoding_.push_back(0);
    schedule(running_.size() - 1, n, false);
  }
}

// The step's outputs: a token for every decoding sequence and for every prompt it completed,
// streamed through the front end; the finished requests free their blocks and their clients send
// their next ones.
void Replay::finish_step() {
  std::size_t kept = 0;
  ghosts_ = 0;
  ghost_ctx_ = 0;
  // The front end's process takes the step's tokens as soon as the request it is processing (if
  // any) is done: its loop runs the output handler between two requests' preprocessing, so the
  // requests queued behind that one wait for the tokens, not the tokens for them (the backlog taken
  // as back-to-back requests of fe_req each). Each token's detokenization, and a chunk for each
  // request whose last chunk has left; a token whose request still has a chunk waiting joins it
  // (RequestOutputCollector) and leaves with it.
  const double in_service = fe_free_ > t_ && fe_req_ > 0 ? std::fmod(fe_free_ - t_, fe_req_)
                                                         : std::max(0.0, fe_free_ - t_);
  const double fe_start = t_ + in_service;
  double fe_at = fe_start;
  finish_at_.clear();
  for (std::size_t i = 0; i < running_.size(); ++i) {
    Request& q = running_[i];
    bool token = decoding_[i] != 0;
    q.held += take_[i] + (token ? 1 : 0);  // a decode computes the KV of the token sampled last
    if (!token && take_[i] > 0) {
      q.left -= take_[i];
      if (q.left <= 0) token = true;
    }
    if (token) {
      fe_at += fe_detok_;
      if (!(q.chunk_at > t_)) {  // a chunk of its own
        fe_at += fe_chunk_;
        q.chunk_at = fe_at;
        ++q.chunks;
      }
      if (q.generated == 0) {  // a recomputed request's next token is not its first
        ttft_.push_back(q.chunk_at - q.arrival);
        q.first_token = q.chunk_at;
      }
      ++q.generated;
      ++out_;
    }
    if (q.generated >= q.length) {
      if (q.length < O_) {  // ended at EOS: the scheduler knew only of a length cap
        ++ghosts_;
        ghost_ctx_ += opt_.input + q.generated;
      }
      gaps_ += q.chunk_at - q.first_token;  // vllm bench serve: a gap per chunk
      e2e_ += q.chunk_at - q.arrival;
      gap_count_ += q.chunks - 1;
      finish_at_.push_back(q.chunk_at);
      last_chunk_ = std::max(last_chunk_, q.chunk_at);
      kv_.release(q);
      life_free_ += q.reserved;
      running_.leave(i);
    } else {
      if (kept != i) running_.keep(kept, i);
      ++kept;
    }
  }
  running_.truncate(kept);
  fe_free_ = std::max(fe_free_, t_) + (fe_at - fe_start);  // the queued requests wait for it
  // Each finished request's client sends its next one as its last chunk arrives, while the run
  // lasts.
  std::sort(finish_at_.begin(), finish_at_.end());
  for (double at : finish_at_)
    if (sent_ < o_.requests) send(at);
}

// Runs of decode steps alike in all but their contexts, taken at once: while every running request
// decodes, none ends, none can be admitted (nothing waits, or the sequence cap is reached) and the
// front end costs nothing a token, the steps up to the one before the next request ends hold the
// same sequences, each one token longer than the last. They are timed one by one as the loop would
// (each step() at its own mean context) and only the requests' tallies are advanced together, so a
// run of thousands of requests and outputs steps in time proportional to its steps, not to its
// steps times its batch. Returns whether it advanced.
bool Replay::fast_forward() {
  if (running_.empty() || ghosts_ > 0 || fe_detok_ > 0 || fe_chunk_ > 0 || fe_free_ > t_ ||
      static_cast<double>(running_.size()) > B_)
    return false;
  if (!waiting_.empty() && running_.size() < cap_) return false;
  int steps = std::numeric_limits<int>::max();
  double ctx = 0, need = 0;
  for (std::size_t i = 0; i < running_.size(); ++i) {
    const Request& q = running_[i];
    if (q.left > 0) return false;
    steps = std::min(steps, q.length - q.generated);
    ctx += opt_.input + q.generated;
  }
  const int k = steps - 1;  // the k-th step after these ends a request: stepped as usual
  if (k < 2) return false;
  if (kv_.bounded) {
    for (std::size_t i = 0; i < running_.size(); ++i) need += kv_.need(running_[i], k);
    if (need > kv_.free) return false;  // a preemption on the way: stepped as usual
  }
  const double D = static_cast<double>(running_.size());
  for (int j = 0; j < k; ++j) {
    StepTime st = m_.step(D, ctx / D + j, 0, 0);
    last_start_ = t_;
    t_ += st.total;
    r_.busy_s += st.total;
    r_.batch_seq_s += D * st.total;
  }
  r_.batch_peak = std::max(r_.batch_peak, static_cast<int>(running_.size()));
  for (std::size_t i = 0; i < running_.size(); ++i) {
    Request& q = running_[i];
    kv_.grow(q, k);
    q.held += k;
    q.generated += k;
    q.chunks += k;
    q.chunk_at = t_;
  }
  out_ += D * k;
  r_.steps += k;
  busy_ = true;
  return true;
}

ReplayResult Replay::run() {
  for (int i = 0; i < std::min(o_.concurrency, o_.requests); ++i) send(0);
  while (!waiting_.empty() || !running_.empty()) {
    if (fast_forward()) continue;
    const bool ahead = opt_.async_scheduling && busy_;
    begin_step(ahead);
    schedule_running();
    admit_waiting();
    if (D_ == 0 && C_ == 0 && !waiting_.empty() && (ahead || waiting_.front().ready > t_)) {
      // The engine idles until the next request is through, and then schedules it at once.
      t_ = std::max(t_, waiting_.front().ready);
      busy_ = false;
      ghosts_ = 0;
      continue;
    }
    if (D_ == 0 && C_ == 0)
      throw RuntimeError("replay: the engine has nothing to run while requests wait");
    StepTime st = m_.step(D_, D_ > 0 ? ctx_d_ / D_ : 0, C_, C_ > 0 ? ctx_p_ / C_ : 0);
    last_start_ = t_;
    t_ += st.total;
    busy_ = true;
    ++r_.steps;
    const double seqs = D_ + prefills_;  // the ghosts of the last step hold their slots (D_)
    r_.busy_s += st.total;
    r_.batch_seq_s += seqs * st.total;
    r_.batch_peak = std::max(r_.batch_peak, static_cast<int>(seqs));
    finish_step();
  }
  return summary();
}

ReplayResult Replay::summary() {
  ReplayResult r = r_;
  std::sort(ttft_.begin(), ttft_.end());
  double sum = 0;
  for (double x : ttft_) sum += x;
  r.first_tokens = static_cast<long>(ttft_.size());
  r.ttft_mean_s = ttft_.empty() ? 0 : sum / static_cast<double>(ttft_.size());
  r.ttft_median_s = percentile(ttft_, 50);
  r.ttft_p99_s = percentile(ttft_, 99);
  r.itl_mean_s = gap_count_ > 0 ? gaps_ / gap_count_ : 0;
  r.e2e_mean_s = e2e_ / o_.requests;
  // The run ends when its last chunk reaches its client.
  const double end = std::max(t_, last_chunk_);
  r.duration_s = end;
  r.output_tokens_per_s = end > 0 ? out_ / end : 0;
  r.requests_per_s = end > 0 ? o_.requests / end : 0;
  r.mean_output = out_ / o_.requests;
  return r;
}

}  // namespace

ReplayResult ServeModel::replay(const ReplayOptions& o) const { return Replay(*impl_, o).run(); }

}  // namespace linkwise::work
