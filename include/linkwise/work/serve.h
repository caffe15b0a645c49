// Serving a model on a chassis: continuous batching with chunked prefill, KV-cache admission,
// tensor and pipeline parallelism over the chassis links, cold start from the box's NVMe drives.
//
// A replica is tp x pp GPUs (stage s holds layers [s·L/pp, (s+1)·L/pp) split tp ways); `replicas`
// copies share the box and the clients evenly. Each engine step (vLLM V1, SGLang and TensorRT-LLM
// schedule the same way) batches one token of every decoding sequence with up to B - D prompt
// tokens of waiting requests (chunked prefill, B the token budget, D the decoding sequences). One
// step on one GPU of stage s, M = D + C tokens (C prompt tokens), with the roofline of the shared
// compute model (work/compute.h: peak P, GEMM efficiency η, memory bandwidth W):
//
//   t_linear  = max( M · 2·N_active/(tp·pp) / (P·η),  weight bytes of the GPU / (W·η_mem) )
//   t_attn    = max( 4·(a/tp)·d·(D·ctx_dec + C·ctx_pre)·L_s / (P·η·φ),  KV bytes read / (W·η_mem) )
//   t_comm    = 2·L_s · all-reduce(M·h·2 bytes)   (comm::Communicator::predict: ring/tree latency
//   terms,
//                                                  the chassis path: NVLink, PCIe P2P or through
//                                                  the host)
//   t_kernels = L_s · kernels per layer · gap     (one CUDA graph of the step)
//   step      = t_linear + t_attn + t_elementwise + t_kernels + t_comm + the framework's per-step
//   overhead
//
// Decode reads every weight once per step and every active sequence's KV cache (KV bytes per token
// and layer: 2·g·d·bytes, g KV heads — grouped-query attention), so it is memory-bound until
// M·2·N/bytes reaches P·η/W FLOP per byte; a prompt chunk of thousands of tokens is compute-bound.
// Mixture-of-experts reads only the experts its M tokens visit: E·(1 - (1 - k/E)^M) of E. Pipeline
// stages pass M·h·2 bytes (send/recv) and run pp micro-batches of D/pp sequences in flight: ITL =
// pp · max_s t_s + Σ sends.
//
// Memory per GPU (vLLM's accounting): weights, the activation peak of a B-token step, the runtime
// (CUDA context, graphs, NCCL buffers) and the share the engine leaves free (1 -
// gpu_memory_utilization); the rest is KV cache. Admission: a request holds (input·(1 - hit) +
// output) tokens of KV cache (the hit fraction of the prompt is a shared prefix held once); no more
// sequences run than fit, and no more than the engine's max_num_seqs. The rest wait (closed loop)
// or, with KV offload, keep their cache in host memory and bring it over the GPU's PCIe link every
// step.
//
// Closed loop (N clients, each sends its next request when the last ends) and open loop (R
// requests/s) are solved as a steady state: throughput X, the engine's mean step τ over decode
// steps and prompt steps (X·k a second), a sequence's gap (ITL) over decode steps and the other
// clients' prompt steps only (X·(n-1)/n a second: its own prompt yields its first token),
// decoding sequences D = X·(O-1)·ITL, TTFT = prefill steps · step(D, chunk) + queueing,
// E2E = TTFT + (O-1)·ITL, and Little's law n = X·E2E closes the loop (docs/serving.md).
//
//   auto chassis = linkwise::topo::load_chassis("inference-appliance");
//   linkwise::work::ServeOptions o;
//   o.tp = 4; o.input = 8192; o.output = 512; o.concurrency = 32;
//   auto r = linkwise::work::serve(chassis, linkwise::work::find_model("llama3.1-70b"), o);
//   fmt::print("TTFT {:.2f} s, ITL {:.1f} ms\n", r.point.ttft_s, 1e3 * r.point.itl_s);
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "linkwise/work/model.h"

namespace linkwise::topo {
class Chassis;
}

namespace linkwise::work {

/// Number format of weights or of the KV cache: bf16 (2 bytes), fp8 (1 byte), int4 (weights only:
/// 4 bits plus one bf16 scale per group of 128, AWQ/GPTQ's layout).
enum class NumberFormat { kBf16, kFp8, kInt4 };
const char* to_string(NumberFormat f);
/// "bf16" / "fp8" / "int4"; InputError naming `flag` otherwise.
NumberFormat parse_number_format(const std::string& s, const std::string& flag = "--precision");
double bytes_per_value(NumberFormat f);

/// How weights reach the GPUs at start: read into the page cache and copied (safetensors' default),
/// or DMA'd from the drives straight into GPU memory (GPUDirect Storage).
enum class LoadPath { kPageCache, kGds };

/// How a closed loop's clients send their requests (docs/serving.md, "Arrivals"). kBurst: all
/// clients start at once with equal lengths, as benchmark clients do (vllm bench serve
/// --max-concurrency, genai-perf/AIPerf --concurrency), so the loop stays phase-locked in cohorts;
/// kPoisson: requests arrive independently (lengths that vary, or an open loop). kDefault: burst
/// for a closed loop, Poisson for an open one.
enum class Arrivals { kDefault, kBurst, kPoisson };
const char* to_string(Arrivals a);
/// "burst" / "poisson"; InputError naming `flag` otherwise.
Arrivals parse_arrivals(const std::string& s, const std::string& flag = "--arrivals");

/// What stands between the client and the engine (docs/serving.md, "The front end"), each with a
/// latency per request and the CPU time of its process, queued (work/serve_impl.h,
/// work/serve_front.cc): kVllmApiServer: vLLM's OpenAI-compatible HTTP server (uvicorn, the ZMQ hop
/// to the engine core process and back; tokenization, the chat template and every streamed token
/// on its one process), what `vllm serve` runs; kOffline: the
/// engine driven in-process with no HTTP (`trtllm-bench`, `vllm bench latency`); kNim: NVIDIA
/// NIM's front end; kSglang: SGLang's HTTP server with its tokenizer-manager and detokenizer
/// processes (`python -m sglang.launch_server`); kTrtllmServe: TensorRT-LLM's OpenAI server
/// (`trtllm-serve`). The last three have no public figure for their latency or CPU time: taken as
/// none, which the report names.
enum class FrontEnd { kVllmApiServer, kOffline, kNim, kSglang, kTrtllmServe };
const char* to_string(FrontEnd f);
/// "vllm" / "offline" / "nim"; InputError naming `flag` otherwise.
FrontEnd parse_front_end(const std::string& s, const std::string& flag = "front_end");

/// When the engine admits a request past the KV-cache bend (docs/serving.md, "Memory and
/// admission"): kWholeLife when its prompt and its whole output fit (TensorRT-LLM's
/// GUARANTEED_NO_EVICT capacity scheduler); kPrompt when the blocks of its first chunk fit,
/// preempting the latest running request (to recompute later) when any running request's next
/// tokens find too few blocks (vLLM V1's scheduler).
enum class KvAdmission { kWholeLife, kPrompt };
const char* to_string(KvAdmission a);
/// "whole-life" / "prompt"; InputError naming `flag` otherwise.
KvAdmission parse_kv_admission(const std::string& s, const std::string& flag = "--kv-admission");

struct ServeOptions {
  int tp = 1, pp = 1;
  int replicas = 0;                        ///< 0: as many as the GPUs hold
  std::vector<std::string> gpus;           ///< "GPU0", "gpu3", ...; empty: every GPU of the chassis
  int input = 1024, output = 256;          ///< tokens per request
  int concurrency = 0;                     ///< closed loop clients (0 with rate 0: 1 client)
  double rate = 0;                         ///< open loop requests/s
  Arrivals arrivals = Arrivals::kDefault;  ///< how a closed loop's requests arrive
  NumberFormat precision = NumberFormat::kBf16;
  NumberFormat kv_precision = NumberFormat::kBf16;
  bool kv_precision_given =
      false;              ///< false: the KV cache takes `precision` (int4 weights: bf16 KV)
  double prefix_hit = 0;  ///< fraction of each prompt found in the prefix cache
  bool expert_parallel =
      false;  ///< MoE: experts spread whole over the tp GPUs, tokens sent by all-to-all
  bool kv_offload = false;  ///< KV cache beyond GPU memory lives in host memory
  LoadPath load = LoadPath::kPageCache;
  int lora_rank = 0;  ///< > 0: report the swap time of one adapter of this rank (all matrices)
  int max_batched_tokens = 0;  ///< B; 0: the engine's default for the GPU
  int max_seqs = 0;            ///< 0: the engine's default for the GPU
  /// false: a prompt runs whole in one step (TensorRT-LLM's default: enable_chunked_prefill off);
  /// true: split over steps in the budget left beside the decoding sequences (vLLM V1)
  bool chunked_prefill = true;
  /// true: the engine schedules step k+1 while step k runs on the GPU (vLLM's async scheduling,
  /// its default since v0.14; TensorRT-LLM's overlap scheduler), so a request that arrives while
  /// the engine is busy joins the step after the one already scheduled; false: each step is
  /// scheduled when the one before it ends (vLLM before v0.14, `--no-async-scheduling`)
  bool async_scheduling = true;
  /// true: vLLM V0's async output processing (on by default in V0 with CUDA graphs; off with
  /// `--disable-async-output-proc`, `--enforce-eager` or pipeline parallelism): a step's sampled
  /// tokens are turned into outputs and sent to the API server during the next step, once that
  /// step is scheduled and launched, so every token leaves the engine the next step's host time
  /// later (docs/serving.md, "The first token's way out"); false: at the end of its own step
  /// (vLLM V1, TensorRT-LLM)
  bool async_output_processing = false;
  /// true: vLLM V0's scheduling without chunked prefill (vllm/core/scheduler.py,
  /// `_schedule_default`: "Don't schedule decodes if prefills are scheduled"): a step that runs
  /// prompts runs prompts only and the decoding sequences wait (with chunked_prefill false);
  /// false: prompts share their step with the decodes (vLLM V1, TensorRT-LLM)
  bool prompt_only_steps = false;
  /// > 0: a finite closed-loop benchmark of this many requests (`vllm bench serve --num-prompts`):
  /// its clients all send their first request at once, and the reported means average that first
  /// cohort in; 0: the steady state only
  int requests = 0;
  /// the front end each request passes through; its time adds to TTFT and E2E
  FrontEnd front_end = FrontEnd::kVllmApiServer;
  /// true: requests use the chat endpoint (/v1/chat/completions: the chat template rendered on
  /// vLLM's API server, `vllm bench serve --backend openai-chat`); false: /v1/completions (the
  /// benchmark's default)
  bool chat_endpoint = false;
  /// how the engine admits requests against its KV cache (KvAdmission)
  KvAdmission kv_admission = KvAdmission::kWholeLife;
  /// > 0: vLLM's API server waits this long (seconds) to batch each prompt with others before
  /// tokenizing it (AsyncMicrobatchTokenizer, 2 ms, in the releases between vLLM PRs #19334 and
  /// #45759; work/serve_impl.h kVllmTokenizerBatchWaitS), a latency before the request reaches the
  /// engine, in TTFT and E2E; 0: no wait (later releases, and every other front end)
  double tokenizer_batch_wait_s = 0;
};

/// Memory of one GPU, bytes.
struct ServeMemory {
  double capacity = 0, weights = 0, kv_cache = 0, activations = 0, runtime = 0, reserved = 0;
  double kv_bytes_per_token = 0;        ///< per GPU (its layers and KV heads)
  double kv_bytes_per_token_model = 0;  ///< whole model, one replica
  double kv_tokens = 0;                 ///< tokens of KV cache one replica holds
  bool fits = false;
};

/// One step's time on the slowest GPU, split by what bounds each part (seconds).
struct StepTime {
  double total = 0, compute = 0, memory = 0, comm = 0, kernels = 0, overhead = 0, offload = 0,
         pp_send = 0;
  double flops = 0, bytes = 0;  ///< per GPU
};

/// One operating point (one concurrency or rate), per box unless said otherwise.
struct ServePoint {
  int concurrency = 0;  ///< clients (closed loop) or the sequences in flight (open loop)
  double rate = 0;      ///< offered requests/s (open loop), else 0
  double running = 0;   ///< sequences batched per replica (replayed: the replay's mean)
  /// Replayed points only (else 0): the most sequences one engine step of the replay ran on a
  /// replica, and the steady state's batch that `decode` and `bound` still describe
  double running_peak = 0, steady_running = 0;
  double ttft_s = 0, itl_s = 0, e2e_s = 0, queue_s = 0;
  double output_tokens_per_s = 0, tokens_per_s_per_user = 0, requests_per_s = 0;
  double comm_fraction = 0;  ///< share of a decode step on links
  StepTime decode;           ///< the mean step
  bool kv_full = false;      ///< admission capped by KV-cache memory
  bool overloaded = false;   ///< open loop: the offered rate exceeds what the box completes
  std::string bound;         ///< "memory", "compute", "link", "overhead", "kv-cache", "offload"
};

struct LoadTime {
  double seconds = 0;
  double bytes_from_drives = 0, bytes_to_gpus = 0;
  int drives = 0;
  std::string bottleneck;  ///< "nvme0 read", "nvsw... uplink", "cpu0->gpu1", ...
  std::vector<std::string> notes;
};

/// A point where the concurrency curve bends.
struct Bend {
  int concurrency = 0;
  std::string what;  ///< "KV cache full", "compute bound", "link bound"
};

struct ServeResult {
  std::string model, chassis, gpu_part;
  int tp = 1, pp = 1, replicas = 1, gpus = 1;
  std::string weights_format, kv_format, engine;
  std::string arrivals;          ///< "burst" or "poisson": how the point's requests arrive
  bool chunked_prefill = true;   ///< prompts split over steps (false: whole prompts per step)
  bool async_scheduling = true;  ///< the engine schedules a step ahead (ServeOptions)
  std::string kv_admission;      ///< "whole-life" or "prompt" (ServeOptions::kv_admission)
  ServeMemory memory;
  /// sequences the box runs at once without preemption (all replicas): input + output tokens each,
  /// or under KvAdmission::kPrompt with Poisson arrivals input + output/2 (docs/serving.md)
  int max_concurrency_fit = 0;
  ServePoint point;
  std::vector<ServePoint> sweep;
  std::vector<Bend> bends;
  LoadTime load;
  double lora_swap_s = 0, lora_bytes = 0;
  std::string comm_link;       ///< the link the TP all-reduce waits on, e.g. "gpu0->cpu0"
  std::string comm_algorithm;  ///< "ring/LL", ...
  double allreduces_per_token = 0,
         allreduce_bytes_per_token = 0;  ///< per decoded token, per sequence
  std::string bottleneck;
  std::vector<std::string> notes;
  /// The point was replayed engine step by engine step (work::run_serve: a closed loop with burst
  /// arrivals admitted by prompt past the KV cache): this line says so, with its preemptions
  std::string replayed;
  long preemptions = 0;  ///< the replay's preemptions (all replicas), when replayed
  /// the replay's median and P99 TTFT (ReplayResult) when a run queued at once was replayed with
  /// every replica running the same requests; 0 otherwise
  double ttft_median_s = 0, ttft_p99_s = 0;
};

/// A finite closed-loop benchmark replayed one engine step at a time (docs/serving.md, "Replay").
struct ReplayOptions {
  int concurrency = 1;  ///< clients; each sends its next request when its last one ends
  int requests = 1;     ///< requests in all (`vllm bench serve --num-prompts`)
  /// Mean output tokens of a request. Equal to (or above) ServeOptions::output, or 0: every request
  /// runs to `output` tokens (`--ignore-eos`). Below it: requests end at EOS with the same chance
  /// after every token, capped at `output`, so that their mean is this.
  double mean_output = 0;
  unsigned seed = 1;  ///< draws of the EOS lengths; the same seed replays the same run
};

/// What the replay measures, as `vllm bench serve` reports it.
struct ReplayResult {
  double ttft_mean_s = 0, ttft_median_s = 0, ttft_p99_s = 0;
  double itl_mean_s = 0;  ///< mean gap between a request's tokens after its first, over all gaps
  double e2e_mean_s = 0;  ///< mean time from sending a request to its last token
  double output_tokens_per_s = 0, requests_per_s = 0;  ///< totals over the run's duration
  double duration_s = 0, mean_output = 0;
  long steps = 0;
  /// Sequences an engine step runs (decoding, or a chunk of their prompt): Σ sequences x step time
  /// over the steps, Σ step time (the engine busy), and the most in one step. The mean batch is
  /// their ratio.
  double batch_seq_s = 0, busy_s = 0;
  int batch_peak = 0;
  long preemptions = 0;   ///< preemptions to free KV cache (KvAdmission::kPrompt); one request
                          ///< can be preempted many times
  long first_tokens = 0;  ///< TTFT samples: one a request, a recomputed one's not counted again
  /// Prompt tokens the engine computed: every prompt, and a preempted request's prompt and output
  /// again beyond its blocks still cached when it is admitted again (KvAdmission::kPrompt)
  double prompt_tokens = 0;
};

/// A serving deployment on a chassis. Construction checks the options (InputError naming the flag:
/// TP that does not divide the heads, a context longer than the model allows, a model that does not
/// fit) and builds the communicators once; points are then cheap.
class ServeModel {
 public:
  ServeModel(const topo::Chassis& chassis, Model model, ServeOptions options);
  ~ServeModel();
  ServeModel(ServeModel&&) noexcept;

  /// N clients in a closed loop.
  ServePoint closed_loop(int concurrency) const;
  /// R requests/s arriving.
  ServePoint open_loop(double rate) const;
  /// One engine step on one replica: D decoding sequences at mean context `ctx_decode`, C prompt
  /// tokens at mean context `ctx_prefill`.
  StepTime step(double decoding, double ctx_decode, double prefill_tokens,
                double ctx_prefill) const;
  /// Cold start: weights from the NVMe drives into every GPU.
  LoadTime load_time() const;

  const ServeMemory& memory() const;
  int max_concurrency_fit() const;
  /// The engine's token budget a step (ServeOptions::max_batched_tokens or its default for the
  /// GPU).
  int max_batched_tokens() const;
  /// `requests` released at once (spread over the replicas) run past the KV-cache bend: more a
  /// replica than the sequence cap, or more than one replica's cache holds for their whole lives
  /// ((1 - hit)·input + output each, beside one copy of the shared prefix).
  bool burst_past_kv(int requests) const;
  /// Everything for the options' own point (closed loop at options.concurrency or open loop at
  /// rate).
  ServeResult result() const;
  /// Closed-loop points at each concurrency and where the curve bends.
  void sweep(const std::vector<int>& concurrencies, ServeResult* r) const;
  /// One replica's finite closed-loop benchmark, engine step by engine step: vLLM V1's order of
  /// work in each step (one pass over the running requests in admission order, a decode's token or
  /// a started prompt's next chunk each, then waiting prompts first come first served, the last one
  /// chunked, up to the token budget, the sequence cap and the KV cache's admission; whole prompts
  /// only without chunked prefill), each step timed by step(). Clients re-send at once when a
  /// request ends. No KV offload. InputError (KvAdmission::kPrompt) when one request's KV-cache
  /// blocks exceed the whole cache, which vLLM refuses at start.
  ReplayResult replay(const ReplayOptions& options) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// One call: the options' point, plus a concurrency sweep when `sweep` is not empty.
ServeResult serve(const topo::Chassis& chassis, const Model& model, const ServeOptions& options,
                  const std::vector<int>& sweep = {});

/// The concurrencies `--sweep concurrency` visits: 1, 2, 4, ... up to `max`.
std::vector<int> sweep_concurrencies(int max = 256);

}  // namespace linkwise::work
