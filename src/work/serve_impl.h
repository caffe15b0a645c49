// Internals of work/serve.h: the figures the serving model uses, each with its source, and
// ServeModel::Impl.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "linkwise/comm/predict.h"
#include "linkwise/work/compute.h"
#include "linkwise/work/serve.h"

namespace linkwise::work {

inline constexpr double kGiB = 1024.0 * 1024 * 1024;

// Share of a GPU's peak memory bandwidth the decode kernels (skinny GEMMs streaming weights, paged
// attention streaming the KV cache) sustain. derived: estimate; device-to-device copies and STREAM
// triad reach 90-92% of the HBM peak on A100 and H100, and weight-streaming GEMV/GEMM kernels with
// a handful of rows a little less (NVIDIA CUTLASS and FlashInfer decode kernels report 80-90% of
// peak); 0.85.
inline constexpr double kMemoryEfficiency = 0.85;
// Fused attention runs at this fraction of the GEMM efficiency (FlashAttention-2 forward: 50-73% of
// A100 peak against ~85% for large GEMMs, Dao 2023 section 4.1; the same figure as
// work/compute.cc).
inline constexpr double kFlashFactor = 0.75;
// Kernels per decoder layer in one step of a Llama-style model in vLLM (vllm/model_executor/models/
// llama.py): fused add + RMSNorm, QKV GEMM, rotary embedding, KV-cache write, attention, output
// GEMM, fused add + RMSNorm, gate/up GEMM, SiLU-and-multiply, down GEMM; two all-reduces more under
// TP.
inline constexpr double kKernelsPerLayer = 10, kKernelsPerLayerTp = 12;
// Of them the weight GEMMs (QKV, output, gate/up, down), whose launches work/compute.cc's
// gemm_parts charges with each GEMM.
inline constexpr double kGemmsPerLayer = 4;
// Launch, ramp-up and tail of one kernel inside a CUDA graph. derived: estimate, the same 3 us per
// kernel work/compute.cc charges (CUDA C++ Best Practices Guide, "Kernel launch overhead": 2-5 us;
// graphs remove the CPU launch, not the ramp and tail of short kernels).
inline constexpr double kKernelGapS = 3e-6;
// Per-step work of the serving engine on the CPU that the GPU waits for: scheduling, copying the
// sampled tokens to the host, preparing the next step's inputs. derived: estimate; vLLM's V0 engine
// left 4-13 ms of GPU idle per decode step (vllm-project/vllm issue #6854), which multi-step
// scheduling and asynchronous output processing (issue #6913) and the V1 engine overlap with the
// GPU's work, leaving the sampled tokens' device-to-host copy and the scheduler's critical path,
// ~0.5 ms. The same for every version: V0 and V1 before async scheduling (PR #19970) schedule and
// prepare each step while the GPU waits, a time no public source gives per step (docs/serving.md,
// "Known gaps": the Azure V0 rows show 3-7 ms at TP 1).
inline constexpr double kStepOverheadS = 0.5e-3;
// vLLM's default --gpu-memory-utilization (vllm/engine/arg_utils.py): the engine sizes its KV cache
// to fill 90% of the GPU's memory and leaves the rest to other processes and fragmentation.
inline constexpr double kGpuMemoryUtilization = 0.9;
// CUDA context, cuBLAS workspaces, captured CUDA graphs and NCCL buffers per GPU. derived:
// estimate; vLLM logs "CUDA graphs took 0.5-1.5 GiB" at start and the CUDA context takes ~0.5 GiB
// on Hopper.
inline constexpr double kRuntimeBytes = 1.5 * kGiB;

// Time a request spends in vLLM's OpenAI-compatible front end before its first token reaches the
// client beyond the engine's work and the API server's CPU time below: the HTTP request through
// uvicorn/FastAPI, the ZMQ hop to the engine core process and the first token's way back. derived:
// the direct measurement of it, the same prompts run offline (the engine in-process, which also
// tokenizes, builds the requests and detokenizes in Python) and through the server:
// tenstorrent/tt-inference-server issue #190 (comment of 2025-05-08, Llama 3.3 70B, batch 32,
// 128-token prompts): mean TTFT 231 ms offline, 235 ms online, "+4 ms ... from HTTP server + ZMQ
// latency". 4 ms, a latency per request (no CPU time of the server's one process: that is below).
inline constexpr double kVllmApiServerLatencyS = 4e-3;
// Time a request spends in SGLang's front end and scheduler loop before its first token reaches
// the client beyond the forward itself: the HTTP server and TokenizerManager (chat template,
// tokenization), the ZMQ hops to the scheduler and back through the DetokenizerManager, the
// overlap scheduler's handling of the first output, and the SSE chunk. derived: the direct
// measurement of it with the forward replaced by a CPU mock that busy-waits 2.632 ms a step
// (tenstorrent/tt-inference-server issue #3560, 2026-05-18: `vllm bench serve --backend
// openai-chat`, 128-token random prompts, one user, greedy; median TTFT 9.54 ms): 9.54 - 2.632 =
// 6.9 ms, a latency per request that includes that host's CPU time (SGLang tokenizes and
// detokenizes in processes of their own, beside its scheduler). Not derived from any validation
// row.
inline constexpr double kSglangFrontEndLatencyS = 6.9e-3;

// The batch window of the API server's tokenizer, in the vLLM releases that tokenize through
// AsyncMicrobatchTokenizer (vllm-project/vllm PR #19334, "microbatch tokenization", 2025-06; the
// class in vllm/utils/async_utils.py): a request's prompt waits in a queue, and the batcher that
// takes it waits until `batch_wait_timeout_s` (0.002) has passed since the first prompt of the
// batch, or until 32 prompts are there, before it tokenizes them together. At the loads the
// validation rows run, far from 32 prompts in 2 ms, the first prompt of a batch waits the whole
// window, a later one the rest of it: taken as the whole window, an upper bound (PR #44172: "adds
// about 2ms of frontend latency for low-concurrency" workloads; it proposed
// `--tokenizer-batch-wait-timeout-s`, closed). PR #45759 (2026-06) removed the class: releases
// after it tokenize in the renderer's thread pool with no wait. The option that takes it:
// ServeOptions::tokenizer_batch_wait_s (`--tokenizer-batch-wait`), 0 by default.
inline constexpr double kVllmTokenizerBatchWaitS = 2e-3;

// The API server is one Python process (vLLM RFC #12705: "the API server runs in a single process,
// utilizing a single CPU"; docs/design/arch_overview.md, "V1 Process Architecture"; PR #17546 adds
// `--api-server-count` to run several) whose asyncio loop does each request's input processing and
// every streamed token's output processing: one server in front of the engine, taken as a FIFO
// queue (docs/serving.md, "The front end"). Its CPU time per item, by endpoint and per token:
//
// Chat endpoint (/v1/chat/completions), per request, on the loop: the chat template's content
// format resolved and rendered (vllm/entrypoints/openai/serving_engine.py `_preprocess_chat`,
// `apply_hf_chat_template` called synchronously in the async handler), input processing
// (`process_inputs`) and the detokenizer's setup. Two public measurements outside the validation
// rows: vllm-project/vllm PR #21139 (2025-07, "Add request preprocess counter in v1"): the request
// preprocessing outside the engine "almost always > 12 ms" (12-15 ms) per request at batch 96;
// vllm-project/vllm PR #54628 (vLLM 0.28, Qwen2.5-0.5B, 8 users): the server's own TTFT on
// /v1/chat/completions 12-15 ms above /v1/completions. derived: the lower end, 12 ms. It applies
// to vLLM up to v0.11 (every version the validation rows ran), when all of it ran on the loop; PR
// #34789 (2026-02) moved the template's rendering to a thread pool and PR #49608 (2026-07) the
// input processing: the CPU time stays in the one process (pure Python under its GIL), only the
// loop is held in shorter slices. The GPUStack pages (the Qwen3 8B and 14B rows' source) imply
// more on their host (30-40 ms stalls of other streams, a 22.7 ms-per-request ceiling at 128/4),
// not used: a figure derived from them would make those rows no independent check.
inline constexpr double kVllmChatRequestCpuS = 12e-3;
// Tokenizing the prompt on the API server, per prompt token, either endpoint: HuggingFace
// `tokenizers` runs ~2 MB/s single-threaded on Llama 3.1 text (huggingface/tokenizers PR #1582).
// derived: ~4 characters a token, 2 us a token. The completions endpoint's fixed CPU time per
// request (HTTP parsing, request set-up) has no public figure: none is charged.
inline constexpr double kVllmTokenizeCpuS = 2e-6;
// The API server's CPU time per streamed output token: incremental detokenization 19-21 us per
// token and call (vllm-project/vllm issue #5206, vLLM 0.3.0's `detokenize_incrementally` timed per
// token, Qwen1.5 tokenizer; V1's fast path, PR #15137, may take less, no V1 figure) and the token
// turned into an OpenAI-format chunk, serialized and written as one SSE event, 30 us (sgl-project/
// sglang issue #10186: SGLang's tokenizer manager on a Kunpeng CPU, the same work for the OpenAI
// endpoint). The chunk's part is paid once per chunk: tokens that are ready while the loop is busy
// leave merged in one chunk (vllm/v1/engine/output_processor.py, RequestOutputCollector: outputs
// "are merged if the producer gets ahead of the consumer"). Not derived from any validation row.
inline constexpr double kVllmApiServerDetokS = 20e-6;
inline constexpr double kVllmApiServerChunkS = 30e-6;

namespace detail {
/// The front end's latency per request before the first token, beyond its CPU time (seconds):
/// vLLM's API server kVllmApiServerLatencyS and its tokenizer's batch wait
/// (ServeOptions::tokenizer_batch_wait_s); SGLang's kSglangFrontEndLatencyS; an offline engine
/// none; NIM's front end and trtllm-serve none (no public figure).
double front_end_latency_s(const ServeOptions& o);
/// The front end's CPU time per request on its one process before the request reaches the engine
/// (seconds): vLLM's API server kVllmTokenizeCpuS a prompt token, and kVllmChatRequestCpuS more on
/// the chat endpoint; offline and NIM none. (work/serve_front.cc)
double front_end_request_cpu_s(const ServeOptions& o);
/// Its CPU time per streamed token and per streamed chunk (seconds): vLLM's API server
/// kVllmApiServerDetokS and kVllmApiServerChunkS; offline and NIM none.
double front_end_token_cpu_s(FrontEnd f);
double front_end_chunk_cpu_s(FrontEnd f);
/// The front end as a single-server FIFO queue (docs/serving.md, "The front end"), c its CPU time
/// per request, u the share of its time busy with all work (requests and tokens):
///  - n requests arriving at once: the k-th (k = 0 .. n-1) waits k·c, the mean (n-1)/2 · c;
///  - requests arriving independently at X/s (others: the share of them sent by other clients):
///    Pollaczek-Khinchine's mean wait X·c² / (2(1 - u)), the token work's residual left out
///    (tens of microseconds).
/// Returns the mean wait before a request's own processing starts (seconds); infinity for u >= 1.
double front_end_burst_wait_s(double n, double c);
double front_end_poisson_wait_s(double X, double c, double u);
/// Mean per-chunk inter-token latency when each other stream's arrival holds the loop for c
/// seconds while the engine steps every tau: the tokens of one stream ready during a hold leave
/// as one chunk, max(0, c/tau - 1) chunks fewer per hold, so a stream of m tokens spaced tau
/// sends (m-1)(1 - X_o·max(0, c - tau)) gaps over the same time (X_o: arrivals of other streams per
/// second): tau / (1 - X_o·max(0, c - tau)).
double front_end_chunk_itl_s(double tau, double c, double X_others);
struct EngineFigures {
  int max_batched_tokens = 8192;
  int max_seqs = 1024;
};
EngineFigures engine_figures(double gpu_memory_bytes, const std::string& part);
double head_dim(const Model& m);
}  // namespace detail

struct ServeModel::Impl {
  Impl(const topo::Chassis& chassis, Model model, ServeOptions options);

  const topo::Chassis& chassis;
  Model model;
  ServeOptions opt;
  std::vector<std::string> notes;
  int replicas = 1;
  std::vector<std::vector<int>> groups;  ///< per replica: GPU node indices, stage by stage
  GpuSpec gpu;                           ///< the slowest GPU's figures
  GpuSpec gemm_gpu, head_gpu;            ///< as the weight GEMMs and the LM head see it (place())
  double attention_peak_flops = 0;       ///< its 16-bit peak: attention runs in bf16/fp16
  bool fp8_matmuls = false;              ///< the weight matmuls run on FP8 tensor cores
  int gpu_node = -1;
  detail::EngineFigures engine;
  ServeMemory mem;
  double layers_stage = 1, w_layer_bytes = 0, w_expert_bytes_layer = 0, w_stage_bytes = 0,
         kv_heads_gpu = 1;
  int fit_replica = 1, fit_box = 1;

  struct Replica {
    std::vector<std::unique_ptr<comm::Communicator>> tp;  ///< per stage (tp > 1)
    std::vector<std::unique_ptr<comm::Communicator>> pp;  ///< per stage boundary
  };
  std::vector<Replica> reps;

  struct Cached {
    double time_s = 0;
    std::string link, algo;
  };
  mutable std::map<std::tuple<const comm::Communicator*, int, double>, Cached> cache;
  /// A dense layer's weight GEMMs (QKV, output, gate/up, down) for one count of output-tile rows
  /// (stage_step): each side of work/compute.h gemm_parts as a line in the step's rows.
  struct GemmLine {
    double compute_per_row = 0, memory0 = 0, memory_per_row = 0, launch = 0, weight_bytes = 0;
  };
  struct GemmLines {
    bool valid = false;
    GemmLine gemm[4];
  };
  mutable std::vector<GemmLines> gemm_lines;  ///< by rows of output tiles
  mutable std::vector<GemmLine> head_lines;   ///< the LM head's, likewise

  void validate();
  void place();
  void size_memory();
  void build_comms();
  double collective(const comm::Communicator& c, comm::Op op, double bytes,
                    std::string* link = nullptr, std::string* algo = nullptr) const;
  StepTime stage_step(int replica, int stage, double D, double ctx_d, double C, double ctx_p,
                      bool last) const;
  StepTime step(double D, double ctx_d, double C, double ctx_p) const;
  double offload_time(double running, double ctx) const;
  double h2d_bytes_per_s() const;
  struct Eval {
    bool feasible = false;
    double tau = 0, ttft = 0, e2e = 0, D = 0, rho = 0;
    double itl = 0;  ///< per streamed chunk (tau when no chunk merges)
    StepTime mean;
  };
  /// burst: the n clients of a closed loop arrive phase-locked (ServeOptions::arrivals).
  /// open: the requests arrive independently of the sequences in flight (an open loop, whatever
  /// ServeOptions::rate says), so all X of them, not the other clients' X·(n-1)/n, stretch a
  /// sequence's gaps and queue ahead of it at the front end.
  Eval evaluate(double X, double n, bool burst, bool open = false) const;
  Eval closed(double n, double* X, bool burst, bool open = false) const;
  bool burst_arrivals() const;
  double burst_ttft(double n, double P, double D, double ctx_d, double ctx_p, double fe) const;
  double first_cohort_ttft(double n) const;
  ServePoint solve(double clients, double rate) const;
  LoadTime load() const;
  void describe(ServeResult* r) const;
};

}  // namespace linkwise::work
