#include "linkwise/work/serve_validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "linkwise/topo/chassis.h"
#include "linkwise/work/serve_run.h"
#include "work/serve_impl.h"

namespace linkwise::work {

namespace {

// The Azure gists' vLLM (rows below): v0.7.3, the V0 engine. The gists' author lists them in
// surajssd/llm-k8s benchmark/vllm_upstream/README.md ("Benchmark Results"), whose manifests for
// exactly these runs (configs/llama-3-3-70b-instruct/one-node-four-gpus: Standard_NC96ads_A100_v4,
// TP 4, `--distributed-executor-backend mp`; configs/phi-4: TP 1) pin vllm/vllm-openai:v0.7.3
// (`:latest` before), as does the benchmark runner's image (benchmark/vllm_upstream/k8s/Dockerfile,
// VLLM_VERSION=0.7.3; the tables are `.buildkite/nightly-benchmarks`' of that release). V0 has no
// async scheduling (vLLM PR #19970, 2025-06, a V1 feature; default from v0.14): each step is
// scheduled when the last one ends.
constexpr bool kAzureAsync = false;
// V0's async output processing, on by default there (EngineArgs `disable_async_output_proc`
// False; ModelConfig.verify_async_output_proc turns it off only with pipeline parallelism,
// `--enforce-eager`, Ray SPMD workers or speculative decoding, none of which these runs use):
// vllm/engine/llm_engine.py `step` hands the model runner `async_callback`, which the runner calls
// once the next step's forward is launched (vllm/worker/model_runner.py, before sampling), and
// `_process_model_outputs` passes the outputs to MQLLMEngine's socket callback
// (vllm/engine/multiprocessing/engine.py: `use_async_sockets` is `use_async_output_proc`).
constexpr bool kAzureAsyncOutput = true;
// V0 turns chunked prefill on by default only for models whose max_model_len exceeds 32K
// (vllm/engine/arg_utils.py, EngineArgs.create_engine_config: `use_long_context = max_model_len >
// 32 * 1024`, then enable_chunked_prefill = True on CUDA without sliding window, speculative
// decoding, LoRA or prompt adapters; otherwise False, and the server logs "Chunked prefill is
// enabled by default for models with max_model_len > 32K"). Without it V0 schedules with
// `_schedule_default` (vllm/core/scheduler.py): a step that admits prompts runs prompts only.
constexpr int kV0ChunkedPrefillAboveTokens = 32 * 1024;

// Each row names its engine's admission against the KV cache. vLLM V1 admits a request when the
// blocks of its first chunk fit and preempts past the cache (KvAdmission::kPrompt,
// vllm/v1/core/sched/scheduler.py); TensorRT-LLM's capacity scheduler (and NIM's TensorRT-LLM
// backend) only when its whole life fits (kWholeLife: CapacitySchedulerPolicy GUARANTEED_NO_EVICT,
// its default).
constexpr KvAdmission kVllmV1 = KvAdmission::kPrompt;
constexpr KvAdmission kTrtLlm = KvAdmission::kWholeLife;

ServeCase make(KvAdmission admission, std::string name, std::string source, std::string chassis,
               std::string gpus, std::string model, int tp, NumberFormat precision, int input,
               int output, int concurrency, std::string command, double ttft_ms, double itl_ms,
               double tokens_per_s) {
  ServeCase c;
  c.name = std::move(name);
  c.source = std::move(source);
  c.chassis = std::move(chassis);
  c.model = std::move(model);
  c.options.tp = tp;
  c.options.replicas = 1;
  for (std::size_t pos = 0; pos < gpus.size();) {
    std::size_t next = gpus.find(',', pos);
    if (next == std::string::npos) next = gpus.size();
    c.options.gpus.push_back(gpus.substr(pos, next - pos));
    pos = next + 1;
  }
  c.options.precision = precision;
  c.options.input = input;
  c.options.output = output;
  c.options.concurrency = concurrency;
  c.options.kv_admission = admission;
  c.command = std::move(command);
  c.ttft_s = ttft_ms / 1e3;
  c.itl_s = itl_ms / 1e3;
  c.output_tokens_per_s = tokens_per_s;
  return c;
}

double err(double predicted, double measured) {
  return measured > 0 ? (predicted - measured) / measured : 0;
}

}  // namespace

// trtllm-bench's heuristics (NVIDIA/TensorRT-LLM tensorrt_llm/bench/build/tuning.py,
// calc_engine_setting and finetune_setting, reached from get_settings in
// tensorrt_llm/bench/benchmark/utils/general.py when the command gives neither limit). It
// estimates the KV cache as a fraction (the command's --kv_cache_free_gpu_mem_fraction, 0.90 by
// default) of all GPUs' memory less the weights, in GiB, and the requests it holds at the
// dataset's mean input + output; the batch is that, capped at 4096 (per pipeline stage) and
// rounded up (to 32 below 256 with at least 64, to 128 below 1024, else to 256); the token budget
// is the batch times (1 + input/output), capped at 32768 and rounded up (to 256 below 4096 with at
// least 2048, to 512 below 8192, else to 1024). Without chunked prefill get_settings raises it to
// at least the longest prompt plus the batch, so a whole prompt always fits beside a full batch of
// decodes.
TrtllmBenchSettings trtllm_bench_settings(double gpu_memory_bytes, int tp, int pp,
                                          double weight_bytes, double kv_bytes_per_token, int input,
                                          int output) {
  constexpr double kGiBytes = 1024.0 * 1024 * 1024;
  constexpr double kFreeFraction = 0.90;  // trtllm-bench throughput's default
  TrtllmBenchSettings s;
  const double total = gpu_memory_bytes / kGiBytes * tp * pp;
  const double cache = (total - weight_bytes / kGiBytes) * kFreeFraction;
  s.kv_cache_max_requests = cache / (kv_bytes_per_token / kGiBytes * (input + output));
  const double raw_bs = std::min(s.kv_cache_max_requests, 4096.0) / pp;
  const double raw_token = std::min(raw_bs * (1 + static_cast<double>(input) / output), 32768.0);
  double bs = raw_bs < 256    ? std::max(64.0, 32 * std::ceil(raw_bs / 32))
              : raw_bs < 1024 ? 128 * std::ceil(raw_bs / 128)
                              : 256 * std::ceil(raw_bs / 256);
  double tokens = raw_token < 4096   ? std::max(2048.0, 256 * std::ceil(raw_token / 256))
                  : raw_token < 8192 ? 512 * std::ceil(raw_token / 512)
                                     : 1024 * std::ceil(raw_token / 1024);
  tokens = std::max(tokens, input + bs);  // whole prompts (no chunked prefill)
  s.max_batch_size = static_cast<int>(bs);
  s.max_num_tokens = static_cast<int>(tokens);
  return s;
}

std::vector<ServeCase> serve_validation_cases() {
  const auto bf16 = NumberFormat::kBf16, fp8 = NumberFormat::kFp8;
  const std::string nim =
      "NVIDIA NIM for LLMs benchmarking guide, Performance "
      "(docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance)";
  const std::string nim_cmd =
      "genai-perf / AIPerf profile, synthetic prompts, --concurrency N, fixed input/output lengths";
  const std::string m7 =
      "M. Rahman, 'Benchmarking Mistral-7B on RTX 4090: vLLM Concurrency, Latency, and Capacity "
      "Planning' "
      "(mushfiqrahman.dev), Part 1 table, workload A 256 in / 128 out";
  const std::string m7_cmd =
      "vllm bench serve, mistralai/Mistral-7B-Instruct-v0.3 (bf16), 300 prompts, request rate inf, "
      "--max-concurrency N";
  // The page's req/s and output tok/s give 100 output tokens per request on every row (210 / 2.09
  // ... 1190 / 11.87), not the 128 asked for: vllm bench serve sends no ignore_eos unless told
  // (--ignore-eos, off by default, vllm/benchmarks/serve.py), so requests end at EOS with lengths
  // that differ, up to the 128 of max_tokens. derived: the mean output is the row's tok/s / req/s.
  // The run (300 prompts, the page: "300 prompts were sent"; every client's first request at once)
  // is replayed step by step with outputs that end at EOS with the same chance after every token,
  // capped at 128, at that mean (ServeModel::replay); the steady state (poisson arrivals, the
  // first cohort averaged in) names the bound.
  // The page's table also gives the median and P99 TTFT of each run, reported beside the replay's
  // (the first cohort's train sets the P99, the steady state the median).
  auto rtx = [&](int c, double ttft_ms, double median_ms, double p99_ms, double tok_s,
                 double req_s) {
    double mean_out = tok_s / req_s;
    ServeCase r = make(
        kVllmV1,
        fmt::format("vLLM Mistral 7B bf16 RTX 4090, 256/128 (mean {:.0f} out), c={}", mean_out, c),
        m7 + fmt::format(", max concurrency {} ({} req/s)", c, req_s), "workstation-rtx4090",
        "GPU0", "mistral-7b", 1, bf16, 256, 128, c, m7_cmd, ttft_ms, 0, tok_s);
    r.options.arrivals = Arrivals::kPoisson;
    r.options.requests = 300;
    r.replay_mean_output = mean_out;
    r.ttft_median_s = median_ms / 1e3;
    r.ttft_p99_s = p99_ms / 1e3;
    // A vLLM before v0.14, which turned async scheduling on by default (release notes of v0.14.0,
    // vllm-project/vllm PR #27614): the page does not state its version, but its requests ended
    // at EOS, and `vllm bench serve`'s random dataset sends ignore_eos by default since PR #28227
    // (merged 2025-11, before v0.14), so its client, and with it the server, was older.
    r.options.async_scheduling = false;
    return r;
  };
  const std::string trt =
      "NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md (commit 00f37686), Throughput "
      "Measurements, H100 SXM 80GB (DGX H100), FP8 (nvidia/*-FP8 ModelOpt checkpoints)";
  const std::string trt_cmd =
      "trtllm-bench throughput --backend pytorch, prepare_dataset.py token-norm-dist with stdev 0 "
      "(all requests "
      "queued at once: the engine runs as many as fit), total output tokens/s";
  // A later version of the same page (docs/source/developer-guide/perf-overview.md, commit
  // 03e27c7d) adds H200 SXM 141GB (DGX H200) and reports output tokens/s per GPU; the rows below
  // give the box's total (per GPU x tp). Same method, same ModelOpt FP8 checkpoint, request counts
  // from its "Preparing a Dataset" table.
  const std::string trt2 =
      "NVIDIA/TensorRT-LLM docs/source/developer-guide/perf-overview.md (commit 03e27c7d), "
      "Throughput Measurements, LLaMA v3.3 70B table, FP8 (nvidia/Llama-3.3-70B-Instruct-FP8)";
  auto trt_gpu = [&](const std::string& chassis, const std::string& gpu, const std::string& src,
                     const std::string& model, const std::string& label, int tp, int input,
                     int output, int requests, double tok_s) {
    ServeCase r =
        make(kTrtLlm,
             fmt::format("TensorRT-LLM {} fp8 TP{} {}, {}/{}, max throughput", label, tp, gpu,
                         input, output),
             src + fmt::format(", {} {} TP{} column, ISL/OSL {}/{}", label, gpu, tp, input, output),
             chassis,
             tp == 8   ? "GPU0,GPU1,GPU2,GPU3,GPU4,GPU5,GPU6,GPU7"
             : tp == 2 ? "GPU0,GPU1"
                       : "GPU0",
             model, tp, fp8, input, output, requests, trt_cmd, 0, 0, tok_s);
    // The LLM API leaves chunked prefill off (tensorrt_llm/llmapi/llm_args.py,
    // enable_chunked_prefill = False) and the page's llm_options.yml does not turn it on.
    r.options.chunked_prefill = false;
    // The PyTorch backend's overlap scheduler schedules a step ahead and is on by default
    // (TorchLlmArgs.disable_overlap_scheduler = False; TensorRT-LLM docs, "Overlap Scheduler"):
    // ServeOptions::async_scheduling, the default.
    r.options.requests = requests;             // a finite run: every request queued at once
    r.options.front_end = FrontEnd::kOffline;  // trtllm-bench drives the engine in-process
    r.trtllm_bench = true;  // the page's command sets neither max_batch_size nor max_num_tokens
    return r;
  };
  auto trt_row = [&](const std::string& model, const std::string& label, int tp, int input,
                     int output, int requests, double tok_s) {
    return trt_gpu("dgx-h100", "H100", trt, model, label, tp, input, output, requests, tok_s);
  };
  // Per GPU x 2 GPUs (TP2).
  auto trt_h200 = [&](int input, int output, int requests, double tok_s_per_gpu) {
    return trt_gpu("hgx-h200", "H200", trt2, "llama3.1-70b", "Llama 3.3 70B", 2, input, output,
                   requests, 2 * tok_s_per_gpu);
  };
  // The same page (commit 00f37686), "Llama 3.1 405B" table, its FP8 columns: H100 SXM 80GB (DGX
  // H100) and H200 SXM 141GB (DGX H200), TP 8 across each box's eight NVSwitch-connected GPUs
  // (nvidia/Llama-3.1-405B-Instruct-FP8), every ISL/OSL row, total output tokens/s; request counts
  // from its "Preparing a Dataset" table (30000 at 128/128, 3000 at 128/2048, 2048/128, 1000/1000
  // and 500/2000, 1500 at 128/4096, 1000/2000, 2048/2048 and 5000/500, 1000 at 20000/2000).
  const std::string trt405 =
      "NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md (commit 00f37686), Throughput "
      "Measurements, Llama 3.1 405B table, FP8 (nvidia/Llama-3.1-405B-Instruct-FP8)";
  // Open, two gaps (docs/VALIDATION.md, "Reading the errors"). kDecode: long outputs at TP 8,
  // output tok/s over-predicted by 15-20%. kHost: Llama 3.1 8B on one H200 with short outputs,
  // where the page's H200 is no faster than its H100.
  enum class Gap { kNone, kDecode, kHost };
  auto trt405_row = [&](bool h200, int input, int output, int requests, double tok_s, Gap gap) {
    ServeCase r =
        trt_gpu(h200 ? "hgx-h200" : "dgx-h100", h200 ? "H200" : "H100",
                trt405 + (h200 ? ", H200 SXM 141GB (DGX H200)" : ", H100 SXM 80GB (DGX H100)"),
                "llama3-405b", "Llama 3.1 405B", 8, input, output, requests, tok_s);
    if (gap == Gap::kDecode)
      r.open =
          "2000-4096 output tokens at TP 8: output tok/s over-predicted by 15-20%, decode steps "
          "modelled faster than the page implies (a quarter of the modelled step is its 252 "
          "all-reduces over NVSwitch, the rest the weights and the attention over contexts that "
          "grow to 2-4k tokens); not traced";
    return r;
  };
  // The rest of the same page's "Llama 3.3 70B" and "Llama 3.1 8B" tables: every ISL/OSL row of
  // their H100 columns (70B at TP 2, 8B at TP 1; the five rows above are from these columns) and of
  // their H200 SXM 141GB (DGX H200) columns (both at TP 1, one GPU of hgx-h200). Request counts as
  // for the 405B rows (the page's "Preparing a Dataset" table).
  auto requests_00f = [](int input, int output) {
    if (input == 128 && output == 128) return 30000;
    if (input == 20000) return 1000;
    if ((input == 128 && output == 4096) || (input == 1000 && output == 2000) ||
        (input == 2048 && output == 2048) || input == 5000)
      return 1500;
    return 3000;
  };
  auto trt00_row = [&](bool h200, const std::string& model, const std::string& label, int tp,
                       int input, int output, double tok_s, Gap gap) {
    ServeCase r = trt_gpu(
        h200 ? "hgx-h200" : "dgx-h100", h200 ? "H200" : "H100",
        h200 ? std::string("NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md (commit "
                           "00f37686), Throughput Measurements, H200 SXM 141GB (DGX H200), FP8 "
                           "(nvidia/*-FP8 ModelOpt checkpoints)")
             : trt,
        model, label, tp, input, output, requests_00f(input, output), tok_s);
    if (gap == Gap::kHost)
      r.open =
          "short outputs on one H200: the page's H200 is no faster than its H100 (27911 vs 28312 "
          "tok/s at 128/128, 3538 vs 3450 at 2048/128) where the model gives it its 43% more "
          "memory bandwidth; at trtllm-bench's 4096-sequence batches the PyTorch backend's host "
          "time a step (its per-request scheduling and sampling work) likely sets the pace, "
          "which the model does not charge per sequence; not traced";
    return r;
  };
  // NIM serves Llama 3.3 70B fp8 on H100 with its TensorRT-LLM backend (NIM for LLMs 1.0.0,
  // "Optimization": optimized TensorRT-LLM engines per GPU, a generic backend only where none
  // exists), which leaves chunked prefill off by default (enable_chunked_prefill = False,
  // tensorrt_llm/llmapi/llm_args.py). AIPerf/genai-perf clients send fixed lengths from N clients
  // that start together: burst arrivals (the default of a closed loop).
  auto nim_row = [&](int input, int output, int c, double ttft_ms, double itl_ms, double tok_s) {
    ServeCase r = make(
        kTrtLlm, fmt::format("NIM Llama 3.3 70B fp8 TP2 H100, {}/{}, c={}", input, output, c),
        nim + fmt::format(
                  ", Llama-3.3-70b-instruct 1.8.0, 2 x H100 80G, fp8 TP2, {}/{}, concurrency {}",
                  input, output, c),
        "dgx-h100", "GPU0,GPU1", "llama3.1-70b", 2, fp8, input, output, c, nim_cmd, ttft_ms, itl_ms,
        tok_s);
    r.options.chunked_prefill = false;
    r.options.front_end = FrontEnd::kNim;  // NIM's own front end: no public figure, none applied
    // The overlap scheduler is the PyTorch backend's (TensorRT-LLM docs, "Overlap Scheduler", under
    // the PyTorch backend's features); NIM 1.8's optimized profiles are TensorRT engines run by
    // the C++ executor, for which no such scheduling is documented: each step when the last ends.
    r.options.async_scheduling = false;
    return r;
  };
  // ovg-project/kvcached PR #331, benchmarks/bench_layout/H100_results.md: one H100 80GB HBM3,
  // Qwen/Qwen3-0.6B bf16, vLLM 0.19.0 (`vllm serve --gpu-memory-utilization 0.5 --max-model-len
  // 2048`), `vllm bench serve` random 512 in / 128 out, 500 prompts, means of three seeds; config A
  // (vanilla, request rate inf) and F (vanilla, rate 16). The random dataset sends ignore_eos by
  // default since vllm-project/vllm PR #28227, so every request runs its 128 tokens: output tok/s =
  // req/s x 128 (derived). The page reports TPOT, which equals the mean ITL with fixed lengths and
  // no speculative decoding. The model keeps vLLM's 0.9 memory share: 0.5 of 80 GB holds ~300k
  // tokens of this model's KV cache (112 KiB each), all 500 requests of 640 tokens either way.
  const std::string kvc =
      "ovg-project/kvcached PR #331, benchmarks/bench_layout/H100_results.md, section 1 (E2E "
      "sweep), "
      "vanilla vLLM 0.19.0, H100 80GB HBM3, Qwen3-0.6B bf16";
  const std::string kvc_cmd =
      "vllm bench serve --dataset-name random --random-input-len 512 --random-output-len 128 "
      "--num-prompts 500 (ignore_eos by default), --request-rate inf or 16";
  const std::string kvc_open =
      "TTFT beyond the engine and the API server's 4 ms: the benchmark client's own share "
      "(tenstorrent/tt-inference-server #259: ~40 ms at 32 users, no mechanism given); at max "
      "throughput the API server's CPU time per request beyond tokenization (the completions "
      "endpoint's fixed part has no public figure)";
  auto kvc_row = [&](double rate, double ttft_ms, double tpot_ms, double req_s) {
    ServeCase r =
        make(kVllmV1,
             rate > 0 ? fmt::format("vLLM Qwen3 0.6B bf16 H100, 512/128, rate {:.0f}/s", rate)
                      : std::string("vLLM Qwen3 0.6B bf16 H100, 512/128, max throughput"),
             kvc + (rate > 0 ? ", config F (rate=16)" : ", config A (rate=inf)"), "dgx-h100",
             "GPU0", "qwen3-0.6b", 1, bf16, 512, 128, rate > 0 ? 0 : 500, kvc_cmd, ttft_ms, tpot_ms,
             req_s * 128);
    if (rate > 0) {
      r.options.rate = rate;  // open loop: poisson arrivals (vllm bench serve, burstiness 1)
      r.options.arrivals = Arrivals::kPoisson;
    } else {
      r.options.requests = 500;  // every request queued at once
    }
    // vLLM 0.19.0: async scheduling on (its default since v0.14.0, PR #27614).
    r.options.async_scheduling = true;
    // and the API server's tokenizer batch window (AsyncMicrobatchTokenizer, PR #19334, until PR
    // #45759 removed it; work/serve_impl.h).
    r.options.tokenizer_batch_wait_s = kVllmTokenizerBatchWaitS;
    r.open =
        kvc_open +
        (rate > 0 ? "; the engine's ITL holds"
                  : "; replayed (every request queued at once), the engine packs the waiting "
                    "512-token prompts into its 8192-token steps beside the decodes, so the "
                    "replay's TPOT and rate are those of a packed run, where the page's 5.45 ms "
                    "and 12.1k tok/s say the prompts reached the engine spread out: the API "
                    "server's time a request, above, pacing them");
    return r;
  };
  // J. Musgrave, "vLLM throughput-latency sweep on NVIDIA A100" (johnmusgrave.com): one A100 40GB,
  // meta-llama/Llama-3.1-8B-Instruct bf16, vLLM 0.23.0 with its defaults, `vllm bench serve` random
  // 1024 in / 128 out with --ignore-eos, --max-concurrency C, C x 20 prompts. Its text gives one
  // figure, not a table: "decode at one request per time runs at about 75 tokens/sec, roughly 77%
  // of the GPU's memory-bandwidth ceiling". derived: ITL = 1 / 75 tokens/s = 13.3 ms (approximate,
  // as the page states it).
  ServeCase a100 = make(
      kVllmV1, "vLLM Llama 3.1 8B bf16 A100 40GB, 1024/128, c=1",
      "J. Musgrave, 'vLLM throughput-latency sweep on NVIDIA A100' "
      "(johnmusgrave.com/p/vllm-throughput-latency-sweep-on), summary: decode at one request ~75 "
      "tokens/s",
      "examples/validation/a100-40gb-sxm-1gpu.yaml", "GPU0", "llama3.1-8b", 1, bf16, 1024, 128, 1,
      "vllm bench serve --dataset-name random --random-input-len 1024 --random-output-len 128 "
      "--ignore-eos --max-concurrency 1 --num-prompts 20 --request-rate inf",
      0, 1e3 / 75, 0);
  a100.options.requests = 20;  // vLLM 0.23.0: async scheduling on (its default since v0.14)
  // QwenLM/Qwen3 issue #1536 (description): one A100 80GB, Qwen/Qwen3-14B-AWQ (int4), `vllm serve
  // --gpu-memory-utilization 0.95 --max-model-len 16384 --enforce-eager --max-num-seq 30`,
  // benchmark_serving.py random 16000 in / 200 out, --max-concurrency 1, --request-rate 1, 30
  // prompts: 6000 tokens generated (200 each). The board's form is not stated: taken as SXM4 (DGX
  // A100; the PCIe 80GB board has 5% less memory bandwidth, the same tensor rate). The engine ran
  // without CUDA graphs (--enforce-eager), which the model does not describe.
  ServeCase q14 = make(
      kVllmV1, "vLLM Qwen3 14B AWQ A100, 16000/200, c=1 (eager)",
      "QwenLM/Qwen3 issue #1536, description: 1x A100 80GB, Qwen3-14B-AWQ, max concurrency 1",
      "dgx-a100", "GPU0", "qwen3-14b", 1, NumberFormat::kInt4, 16000, 200, 1,
      "vllm serve Qwen/Qwen3-14B-AWQ --enforce-eager --max-num-seq 30; benchmark_serving.py "
      "--dataset-name random --random-input-len 16000 --random-output-len 200 --max-concurrency 1 "
      "--request-rate 1 --num-prompts 30",
      3345.37, 20.63, 26.84);
  q14.options.requests = 30;
  q14.options.kv_precision = bf16;
  q14.options.kv_precision_given = true;
  // The version is not stated; `benchmark_serving.py` and `--guided-decoding-backend` are of the
  // vLLM releases before `vllm bench serve` replaced them, before v0.14 turned async scheduling on.
  // With one client the engine is idle whenever a request arrives, so it would change nothing.
  q14.options.async_scheduling = false;
  q14.open =
      "--enforce-eager: no CUDA graphs, every kernel launched from Python (not modelled), and the "
      "AWQ (Marlin) GEMMs of the 2048-token prefill chunks, taken at the 16-bit GEMM rate";
  // GitHub user surajssd, gists eef8ebf83cadd690f6fb4ee87b30fe1a (Llama 3.3 70B, TP 4 on one
  // Azure Standard_NC96ads_A100_v4: four A100 80GB PCIe, NVLink-bridged pairs) and
  // a1e546da84999df665cd9131f5ab64e0 (Phi-4, TP 1 on one Standard_NC24ads_A100_v4: one of the same
  // GPU): vLLM's nightly-benchmark serving tests, 200 ShareGPT prompts, Poisson arrivals at 1 and 4
  // requests/s, bf16. ShareGPT lengths differ request by request; the rows take each run's mean
  // lengths, derived from its own columns: output = output tok/s / req/s, input = (total - output)
  // tok/s / req/s (70B: 214 in / 214 out; Phi-4: 215 in / 98 out, its requests end at EOS). Both
  // models take those lengths without truncation. The gists state no vLLM version: v0.7.3, the
  // V0 engine (kAzureAsync above).
  const std::string az_cmd =
      "vLLM nightly-benchmark serving test: vllm serve (bf16, TP as named), benchmark_serving "
      "--dataset-name sharegpt --num-prompts 200 --request-rate R (Poisson)";
  auto az_row = [&](const std::string& model, const std::string& label, int tp, double rate,
                    int input, int output, double ttft_ms, double itl_ms, double tok_s,
                    const std::string& gist, const std::string& vm) {
    ServeCase r = make(
        kVllmV1,
        fmt::format("vLLM {} bf16 TP{} A100 PCIe (Azure), ShareGPT {}/{}, rate {:.0f}/s", label, tp,
                    input, output, rate),
        fmt::format("surajssd gist {} (vLLM nightly-benchmark tables), {}, qps {:.0f}", gist, vm,
                    rate),
        "examples/validation/azure-nc96ads-a100-v4.yaml", tp == 4 ? "GPU0,GPU1,GPU2,GPU3" : "GPU0",
        model, tp, bf16, input, output, 0, az_cmd, ttft_ms, itl_ms, tok_s);
    r.options.rate = rate;
    r.options.arrivals = Arrivals::kPoisson;
    r.options.async_scheduling = kAzureAsync;
    r.options.async_output_processing = kAzureAsyncOutput;
    // Phi-4 (16384 positions) runs without chunked prefill there, Llama 3.3 70B (131072) with it.
    const Model m = find_model(model);
    if ((m.max_context > 0 ? m.max_context : m.seq) <= kV0ChunkedPrefillAboveTokens) {
      r.options.chunked_prefill = false;
      r.options.prompt_only_steps = true;
    }
    r.open =
        tp == 4
            ? "ITL -30%/-26% at TP 4 (13-18 ms a step) against -14%/-26% (3-7 ms) at TP 1 in "
              "the same harness (vLLM v0.7.3, V0 engine): beyond the TP 1 gap ~65 us per "
              "all-reduce more than the modelled ~20-30 us over the host-staged path, beyond "
              "public small-message figures; V0's driver broadcasts each step's inputs to the "
              "workers (vllm-project/vllm issue #5792), host time with no public figure; TTFT "
              "beyond the API server's 4 ms and V0's outputs sent during the next step (its "
              "host time, 0.5 ms): V0's host time per step, counted twice on the first "
              "token, and the client's share, no figure"
            : "the V0 engine's per-step host time (vLLM v0.7.3; no public figure per step); "
              "TTFT beyond the API server's 4 ms and V0's outputs sent during the next step (its "
              "host time, 0.5 ms): V0's host time per step, counted twice on the first "
              "token, and the client's share, no figure";
    return r;
  };
  // gpustack/gpustack docs/performance-lab (GPUStack "Performance Lab"): one H100 SXM, vLLM v0.11.0
  // with its defaults (`vllm serve Qwen/Qwen3-8B` or `Qwen/Qwen3-14B`: bf16 weights and KV cache),
  // `vllm bench serve --backend openai-chat --endpoint /v1/chat/completions`. The rows take every
  // run of the pages' vLLM baseline (the engine and settings the model describes); the pages'
  // SGLang, TensorRT-LLM, FP8 and speculative-decoding runs are other engines or features. v0.11.0
  // predates v0.14, which turned async scheduling on, and PR #28227 (the random dataset's
  // ignore_eos default): requests end at EOS or at their cap. Lengths are each run's means, derived
  // from its "Total input tokens" and "Total generated tokens" over its requests.
  const std::string gps = "gpustack/gpustack docs/performance-lab/";
  // `vllm bench serve --dataset-name sharegpt` sends each request's own reference completion
  // length as its max_tokens, and no ignore_eos (vllm/benchmarks/datasets.py, ShareGPTDataset
  // sample: the pairs kept have prompt <= 1024 and prompt + completion <= 2048 tokens), so a run's
  // requests end at EOS or at their own cap, lengths spread about the run's mean: short ones free
  // their slots early and a run with every request at once drains through a tail of few sequences.
  // Replayed as the RTX 4090 rows are: each request ends with the same chance after every token, at
  // the row's mean (the page's totals), capped at 2048 less the mean prompt. An engine that
  // admits whole lives (TensorRT-LLM reserves each request's own max_tokens, SGLang a share of it,
  // taken as whole) holds each request's drawn length for its life, the request taken as running
  // to its cap (the pages do not give the caps; work/serve_replay.cc).
  auto sharegpt_spread = [](ServeCase& r) {
    r.replay_mean_output = r.options.output;
    r.options.output = 2048 - r.options.input;
  };
  auto gps_row = [&](const std::string& page, const std::string& model, const std::string& label,
                     const std::string& workload, int input, int output, int c, int requests,
                     double ttft_ms, double itl_ms, double tok_s, const std::string& cmd,
                     const std::string& chassis = "dgx-h100", const std::string& gpu = "H100") {
    ServeCase r = make(
        kVllmV1,
        c < requests
            ? fmt::format("vLLM {} bf16 {}, {} {}/{}, c={}", label, gpu, workload, input, output, c)
            : fmt::format("vLLM {} bf16 {}, {} {}/{}, {} at once", label, gpu, workload, input,
                          output, requests),
        gps + page +
            fmt::format(", vLLM v0.11.0 baseline, {}, {} requests{}", workload, requests,
                        c < requests ? fmt::format(", max concurrency {}", c) : ""),
        chassis, "GPU0", model, 1, bf16, input, output, c, cmd, ttft_ms, itl_ms, tok_s);
    r.options.requests = requests;
    // ShareGPT lengths differ request by request, and requests end at EOS: independent arrivals.
    if (workload == "ShareGPT") r.options.arrivals = Arrivals::kPoisson;
    r.options.async_scheduling = false;  // vLLM v0.11.0
    r.options.chat_endpoint = true;      // --backend openai-chat --endpoint /v1/chat/completions
    // v0.11.0 tokenizes through AsyncMicrobatchTokenizer (vLLM PR #19334; removed by PR #45759):
    // its 2 ms batch window before the request reaches the engine (work/serve_impl.h).
    r.options.tokenizer_batch_wait_s = kVllmTokenizerBatchWaitS;
    return r;
  };
  const std::string q8_cmd =
      "vllm serve Qwen/Qwen3-8B; vllm bench serve --backend openai-chat --endpoint "
      "/v1/chat/completions --dataset-name sharegpt --num-prompts 100 --max-concurrency C";
  auto q8_row = [&](int c, double ttft_ms, double itl_ms, double tok_s) {
    // 23260 input and 22061 generated tokens over 100 requests: 233 / 221 on average (derived).
    ServeCase r = gps_row(
        "qwen3-8b/h100-latency.md (Other Benchmark Cases, baseline BS=" + std::to_string(c) + ")",
        "qwen3-8b", "Qwen3 8B", "ShareGPT", 233, 221, c, 100, ttft_ms, itl_ms, tok_s, q8_cmd);
    r.open =
        "TTFT beyond the engine, the API server's 4 ms and its 12 ms of chat CPU a request "
        "(-60% to -56%, ~35-43 ms short): the page's host runs the chat front end slower (its "
        "other streams stall 33-38 ms at each arrival, a figure from the page itself, not used); "
        "not the benchmark client: the same client on the same host measures SGLang at 4 users "
        "at 28 ms (its row below, 20 ms predicted); ITL from 4 users on: the engine's host time "
        "per "
        "step growing with the batch (vLLM CI latency cross-check)";
    return r;
  };
  auto q14_row = [&](const std::string& workload, int input, int output, int output_asked,
                     int requests, double ttft_ms, double itl_ms, double tok_s, bool a100 = false,
                     int size = 14, const std::string& serve_extra = "") {
    const std::string serve = fmt::format("vllm serve Qwen/Qwen3-{}B{}", size, serve_extra);
    std::string cmd =
        workload == "ShareGPT"
            ? serve +
                  "; vllm bench serve --backend openai-chat --endpoint "
                  "/v1/chat/completions --dataset-name sharegpt --num-prompts 1000"
            : serve + fmt::format(
                          "; vllm bench serve --backend openai-chat --endpoint "
                          "/v1/chat/completions --dataset-name random --random-input-len {} "
                          "--random-output-len {} --num-prompts {} --seed 42",
                          workload, output_asked, requests);
    // Every request released at once (request rate inf, no max concurrency): the engine runs as
    // many as fit, the others wait.
    ServeCase r = gps_row(
        fmt::format("qwen3-{}b/{}.md (vLLM baseline)", size, a100 ? "a100" : "h100"),
        fmt::format("qwen3-{}b", size), fmt::format("Qwen3 {}B", size),
        workload == "ShareGPT" ? workload : "random", input, output, requests, requests, ttft_ms,
        itl_ms, tok_s, cmd, a100 ? "dgx-a100" : "dgx-h100", a100 ? "A100" : "H100");
    // The page's own 128/4 run: requests/s, the pace of its host's API server (derived, not used).
    const char* pace =
        size == 14 ? (a100 ? "~26.8 ms (128/4 run: 37.3 req/s" : "~22.7 ms (128/4 run: 44 req/s")
                   : (a100 ? "~49.6 ms (128/4 run: 20.2 req/s" : "~32.9 ms (128/4 run: 30.4 req/s");
    // docs/serving.md, "Memory and admission": past the KV-cache bend vLLM V1 admits a request
    // when its prompt's blocks fit and preempts and recomputes when running requests run out of
    // blocks (KvAdmission::kPrompt, whose steady state leaves the recompute out); with 1000
    // requests at once the API server's CPU time per request and per streamed token, queued
    // (work/serve_front.cc), at the independent figures, below what the page's host shows.
    r.open = input >= 1000
                 ? "replayed past the KV-cache bend (preemption and recompute, docs/serving.md "
                   "Memory and admission): the engine's steps with a cohort of long prompts run "
                   "slower than modelled (output tok/s over-predicted)"
                 : std::string(
                       "1000 requests at once through one API server process, queued "
                       "at 12 ms of chat CPU a request: the page's host takes ") +
                       pace + "; derived from this page, not used)";
    if (workload == "ShareGPT") sharegpt_spread(r);
    return r;
  };
  // gpustack/gpustack docs/performance-lab/references/
  // the-impact-of-quantization-on-vllm-inference-performance.md: Qwen3-8B, vLLM v0.9.2, `vllm bench
  // serve --endpoint-type openai-chat --dataset-name sharegpt --num-prompts 1000` (every request
  // at once), on an RTX 4090 24GB, an A100 80GB and an H100 80GB; the rows are the BF16 row of each
  // GPU's table (the others are quantization methods). The page gives throughput, mean TTFT and
  // mean TPOT. Its "Throughput (tok/s)" is taken as the total (input and output) token throughput
  // (the lab's other pages report "Total TPS"); derived: output tok/s = total x 202 / (217 + 202),
  // the mean lengths of the same 1000 ShareGPT prompts with the Qwen3 tokenizer on the lab's
  // later pages (217393 input tokens; 201648, 201422 and 201612 generated by Qwen3 14B and 32B and
  // TensorRT-LLM), so the throughput error is the total's. TPOT (per-request mean time per output
  // token) is not ITL and is not compared. The A100's form is not stated: taken as SXM4.
  const std::string gq =
      "gpustack/gpustack docs/performance-lab/references/"
      "the-impact-of-quantization-on-vllm-inference-performance.md";
  auto gq_row = [&](const std::string& chassis, const std::string& gpu, const std::string& label,
                    double total_tok_s, double ttft_ms) {
    ServeCase r =
        make(kVllmV1, fmt::format("vLLM Qwen3 8B bf16 {}, ShareGPT 217/202, 1000 at once", label),
             gq + fmt::format(", {} table, BF16 row (vLLM v0.9.2)", label), chassis, gpu,
             "qwen3-8b", 1, bf16, 217, 202, 1000,
             "vllm serve Qwen/Qwen3-8B; vllm bench serve --endpoint-type openai-chat "
             "--endpoint /v1/chat/completions --dataset-name sharegpt --num-prompts 1000",
             ttft_ms, 0, total_tok_s * 202.0 / (217.0 + 202.0));
    r.options.requests = 1000;
    r.options.arrivals = Arrivals::kPoisson;  // ShareGPT: lengths differ, requests end at EOS
    r.options.async_scheduling = false;       // vLLM v0.9.2
    r.options.chat_endpoint = true;           // --endpoint /v1/chat/completions
    r.open =
        "1000 requests at once through one API server process, queued at the independent 12 ms "
        "of chat CPU a request (the GPUStack host's may be more); replayed past the KV-cache bend "
        "with outputs spread about the mean as EOS ends them (sharegpt_spread), not the "
        "dataset's own lengths";
    // The A100's mean TTFT lies below the least any engine gives these prompts: their matmuls at
    // the GPU's dense bf16 peak, one after another, 4.84 s (test
    // Serve.AtOnceRowsAgainstThePrefillFloor); its TPOT says ~1000 sequences decoded at once where
    // v0.9.2 caps an A100 at 256.
    if (chassis == "dgx-a100")
      r.open =
          "the page's mean TTFT (3.41 s) is below the floor its prompts' work sets at the A100's "
          "bf16 peak (4.84 s), and its TPOT x tok/s says ~1000 sequences decoded at once where "
          "v0.9.2 caps an A100 at 256: not reproducible at the stated lengths and defaults "
          "(docs/VALIDATION.md)";
    sharegpt_spread(r);
    return r;
  };
  // ai.wmx.dev/benchmarks, "Baseline serving benchmark for serving/raw-vllm" (commit 8e78aaa of the
  // page's repository): one NVIDIA L4 (PCIe only) in a GCP g2-standard-4,
  // Qwen/Qwen2.5-0.5B-Instruct bf16, vLLM v0.23.0 (V1 engine; async scheduling on, its default
  // since v0.14) with
  // `--gpu-memory-utilization 0.6 --max-model-len 8192`, `vllm bench serve` random 256 in / 128
  // out,
  // --ignore-eos, seed 42, request rate inf at a fixed --max-concurrency 1, 2, 4, 8, 16 and 32
  // (every row of its "Results: concurrency sweep" table). The page gives output tok/s, and TTFT
  // and ITL as medians (p50) and p95, not means: the rows compare the model's means with the p50
  // (with fixed lengths every inter-token gap but those beside a prompt is one decode step). The
  // prompt count is not stated: the steady state. The model keeps vLLM's 0.9 memory share; 0.6 of
  // the L4 holds ~11 GiB of KV cache at 12 KiB a token, 32 x 384 tokens either way (the page: 1.1%
  // used).
  const std::string wmx =
      "ai.wmx.dev/benchmarks, serving/raw-vllm baseline, Results: concurrency sweep (1x L4, "
      "g2-standard-4, vLLM v0.23.0, Qwen2.5-0.5B-Instruct bf16)";
  auto l4_row = [&](int c, double ttft_p50_ms, double itl_p50_ms, double tok_s) {
    ServeCase r =
        make(kVllmV1, fmt::format("vLLM Qwen2.5 0.5B bf16 L4, 256/128, c={} (p50 TTFT/ITL)", c),
             wmx + fmt::format(", concurrency {} row", c),
             "examples/validation/gcp-g2-standard-4-1x-l4.yaml", "GPU0", "qwen2.5-0.5b", 1, bf16,
             256, 128, c,
             fmt::format("vllm serve Qwen/Qwen2.5-0.5B-Instruct --gpu-memory-utilization 0.6 "
                         "--max-model-len 8192; vllm bench serve --dataset-name random "
                         "--random-input-len 256 --random-output-len 128 --ignore-eos --seed 42 "
                         "--request-rate inf --max-concurrency {}",
                         c),
             ttft_p50_ms, itl_p50_ms, tok_s);
    r.options.async_scheduling = true;  // vLLM v0.23.0
    r.open =
        "TTFT 27-53% short (13-51 ms): beyond the engine and the API server's 4 ms, the benchmark "
        "client's own share at light load (the other vLLM rows' gap; "
        "tenstorrent/tt-inference-server "
        "#259), and the page gives p50 TTFT, not the mean; output tok/s at one user +14% with ITL "
        "+1%: the page's 168 tok/s (1.31 requests/s of 128 tokens, 762 ms each) against its p50 "
        "E2E "
        "of 679 ms leaves ~80 ms between a client's requests that the model does not describe";
    return r;
  };
  // The same GPUStack Performance Lab pages' other engines, through the same client (`vllm bench
  // serve --backend openai-chat --endpoint /v1/chat/completions`): every SGLang and TensorRT-LLM
  // run whose lengths, load, GPU, precision and settings the page states, on
  // qwen3-8b/h100-latency.md ("Choosing the Inference Engine", "Maximum batch size for cuda graph
  // in SGLang", "Quantization", "Attention Backend": one H100 SXM, ShareGPT, 100 prompts at
  // --max-concurrency 4, 23260 input and 22061 generated tokens: 233 / 221 on average, derived) and
  // qwen3-14b/a100.md ("Choosing the Inference Engine", "Max Batched Token Numbers in
  // TensorRT-LLM", and "Other Benchmark Cases", the optimized command's runs: A100, every request
  // at once). Left out, as for the vLLM rows: the speculative-decoding runs (EAGLE3 drafts, not
  // modelled) and the A100 FP8/AWQ runs (failed for TensorRT-LLM; W8A16/W4A16 kernels for vLLM,
  // the A100 having no FP8 tensor cores). The A100's form and memory are not stated: taken as
  // A100 SXM4 80GB (one GPU of dgx-a100), as the lab's quantization page names its A100 80GB.
  // Each engine's settings follow its defaults as released:
  // - both schedule a step ahead: SGLang's overlap scheduler (on unless --disable-overlap-schedule,
  //   python/sglang/srt/server_args.py) and TensorRT-LLM's PyTorch backend's (TorchLlmArgs
  //   disable_overlap_scheduler False; trtllm-serve runs the PyTorch backend);
  // - TensorRT-LLM: whole prompts a step unless --enable_chunked_prefill (llm_args.py
  //   enable_chunked_prefill False), GUARANTEED_NO_EVICT admission (KvAdmission::kWholeLife),
  //   max_batch_size 2048 and max_num_tokens 8192 (tensorrt_llm/commands/serve.py: its
  //   --max_batch_size and --max_num_tokens default to BuildConfig's, tensorrt_llm/builder.py)
  //   unless the command names them;
  // - SGLang: chunked prefill on; its scheduler admits a request when its prompt and a share
  //   (new_token_ratio, 0.7 falling to 0.1) of its max new tokens fit, and retracts running ones
  //   past the pool (python/sglang/srt/managers/schedule_policy.py): neither of the model's two
  //   admissions; the rows take the whole life (kWholeLife), the nearer at the start of a run. Its
  //   limits are its own, not vLLM's: 8192 tokens a chunk on the H100 and A100 (server_args.py,
  //   chunked_prefill_size by GPU memory: 8192 below 90 GiB) and no sequence cap below its request
  //   pool (max_running_requests the least of half the KV pool's tokens and the request pool,
  //   model_runner.py: min(max(tokens / context_len x 512, 2048), 4096) requests): max_seqs 2048,
  //   so the KV cache binds first on every row;
  // - the front end: SGLang's (HTTP server, tokenizer manager and detokenizer processes) takes
  //   kSglangFrontEndLatencyS a request (tt-inference-server issue #3560, a mock forward); the
  //   OpenAI server of trtllm-serve has no public per-request figure: none is applied, as for NIM
  //   (FrontEnd::kTrtllmServe: no latency or CPU time).
  enum class Engine { kSglang, kTrtllm };
  auto gps_engine = [&](Engine e, const std::string& page, const std::string& section,
                        const std::string& version, bool a100, const std::string& model,
                        const std::string& label, NumberFormat precision,
                        const std::string& workload, int input, int output, int c, int requests,
                        double ttft_ms, double itl_ms, double tok_s, const std::string& serve_cmd,
                        const std::string& bench_args, const std::string& variant) {
    const bool sgl = e == Engine::kSglang;
    const std::string load =
        c < requests ? fmt::format("c={}", c) : fmt::format("{} at once", requests);
    ServeCase r = make(
        kTrtLlm,
        fmt::format("{} {} {} {}, {} {}/{}, {}{}", sgl ? "SGLang" : "TensorRT-LLM", label,
                    precision == fp8 ? "fp8" : "bf16", a100 ? "A100" : "H100", workload, input,
                    output, load, variant.empty() ? "" : " (" + variant + ")"),
        gps + page +
            fmt::format(", {}, {} {}, {}, {} requests{}", section, sgl ? "SGLang" : "TensorRT-LLM",
                        version, workload, requests,
                        c < requests ? fmt::format(", max concurrency {}", c) : ""),
        a100 ? "dgx-a100" : "dgx-h100", "GPU0", model, 1, precision, input, output, c,
        serve_cmd + "; vllm bench serve --backend openai-chat --endpoint /v1/chat/completions " +
            bench_args,
        ttft_ms, itl_ms, tok_s);
    r.options.requests = requests;
    // ShareGPT lengths differ request by request, and requests end at EOS: independent arrivals.
    if (workload == "ShareGPT") r.options.arrivals = Arrivals::kPoisson;
    r.options.async_scheduling = true;
    r.options.chat_endpoint = true;
    // No public figure for either front end: none applied (docs/serving.md, "The front end").
    r.options.front_end = sgl ? FrontEnd::kSglang : FrontEnd::kTrtllmServe;
    if (precision == fp8) {  // FP8 weights; the KV cache stays in the model's bf16
      r.options.kv_precision = bf16;
      r.options.kv_precision_given = true;
    }
    // Every request at once (1000 ShareGPT prompts, or 100-1000 random ones): the open gap of the
    // same pages' vLLM runs released at once (above, q14_row), here for engines whose admission
    // and front end the rows take as none (above).
    if (c >= requests)
      r.open =
          "every request at once: the host time per engine step and per request with hundreds "
          "of streams (scheduling, sampling, detokenizing, streaming), which does not scale with "
          "the GPU: the same pages' runs gain 1.2-1.7x from the A100 to the H100 where the model "
          "gives 1.75-2.56x (the open gap of the same pages' vLLM runs released at once); " +
          std::string(sgl ? "SGLang's admission (a share of each request's new tokens reserved, "
                            "running requests retracted past the pool) is neither of the "
                            "model's; "
                          : "") +
          "the front end's CPU time with up to 1000 streams has no public figure (none "
          "applied)";
    // Every ShareGPT request at once, replayed with lengths spread about the run's mean, each
    // request holding its own length for its whole life (work/serve_replay.cc).
    if (workload == "ShareGPT" && c >= requests) sharegpt_spread(r);
    if (sgl) {
      r.options.max_seqs = 2048;
      r.options.max_batched_tokens = 8192;
    } else {
      r.options.chunked_prefill = serve_cmd.find("--enable_chunked_prefill") != std::string::npos;
      r.options.max_seqs = 2048;
      r.options.max_batched_tokens = 8192;
      const auto at = serve_cmd.find("--max_num_tokens=");
      if (at != std::string::npos)
        r.options.max_batched_tokens = std::stoi(serve_cmd.substr(at + 17));
    }
    return r;
  };
  const std::string q8_bench = "--dataset-name sharegpt --num-prompts 100 --max-concurrency 4";
  const std::string q14_bench_sharegpt = "--dataset-name sharegpt --num-prompts 1000";
  auto q8e = [&](Engine e, const std::string& section, NumberFormat precision, double ttft_ms,
                 double itl_ms, double tok_s, const std::string& serve_cmd,
                 const std::string& variant) {
    ServeCase r = gps_engine(e, "qwen3-8b/h100-latency.md", section,
                             e == Engine::kSglang ? "v0.5.3.post3" : "v1.2.0rc1", false, "qwen3-8b",
                             "Qwen3 8B", precision, "ShareGPT", 233, 221, 4, 100, ttft_ms, itl_ms,
                             tok_s, serve_cmd, q8_bench, variant);
    if (e == Engine::kTrtllm)
      r.open =
          "TTFT 31 ms short: trtllm-serve's front end (HTTP, tokenization, its executor's "
          "request queue) has no public figure and none is applied (SGLang's on the same page, "
          "charged 6.9 ms, is 24 ms faster); output tok/s +16% with ITL -7% is that TTFT through "
          "the clients' "
          "cycle (Little's law)";
    if (precision == fp8)
      r.open =
          "FP8 decode at 4 sequences: ITL 18-20% short, the model reading the FP8 weights at "
          "its memory roofline where SGLang's block-scaled (128x128) FP8 GEMMs at a few rows "
          "run below it (not traced); output tok/s follows (+31% to +55%); the flashinfer run's "
          "mean TTFT (269 ms) against its 41 ms median and 5.7 s P99 holds an outlier the "
          "model does not describe";
    return r;
  };
  // TensorRT-LLM's optimized command (chunked prefill, 40960 positions) on the A100 pages' random
  // runs and the Qwen3 32B H100 page's (its FP8 checkpoint there), every request at once; lengths
  // from each run's totals (Qwen3 14B A100: 3200000 / 9932 over 100, 1997942 / 99760 and 998175 /
  // 50000 over 500, 127698 / 4000 over 1000; Qwen3 32B H100: 7832, 99888, 50000, 4000 generated;
  // Qwen3 32B A100: 7880, 99874, 50000, 4000).
  // The `vllm bench serve` arguments of a page's random run: the --random-input-len it asked for
  // (32000, 4000, 2000 or 128) from the run's mean prompt.
  auto random_bench = [](int input, int asked, int requests) {
    return fmt::format(
        "--dataset-name random --random-input-len {} --random-output-len {} --num-prompts {} "
        "--seed 42",
        input >= 32000  ? 32000
        : input >= 3000 ? 4000
        : input >= 1000 ? 2000
                        : 128,
        asked, requests);
  };
  auto trt_opt = [&](int size, bool a100, int input, int output, int asked, int requests,
                     double ttft_ms, double itl_ms, double tok_s) {
    const bool fp8_ckpt = !a100;  // the H100 page's optimized command serves Qwen3-32B-FP8
    return gps_engine(
        Engine::kTrtllm, fmt::format("qwen3-{}b/{}.md", size, a100 ? "a100" : "h100"),
        "Other Benchmark Cases (optimized)", "v1.2.0rc1", a100, fmt::format("qwen3-{}b", size),
        fmt::format("Qwen3 {}B", size), fp8_ckpt ? fp8 : bf16, "random", input, output, requests,
        requests, ttft_ms, itl_ms, tok_s,
        fmt::format("trtllm-serve Qwen/Qwen3-{}B{} --max_seq_len=40960 --enable_chunked_prefill",
                    size, fp8_ckpt ? "-FP8" : ""),
        random_bench(input, asked, requests), "chunked prefill");
  };
  auto q14_trt_opt = [&](int input, int output, int asked, int requests, double ttft_ms,
                         double itl_ms, double tok_s) {
    return trt_opt(14, true, input, output, asked, requests, ttft_ms, itl_ms, tok_s);
  };
  auto q_engine = [&](int size, bool a100, Engine e, const std::string& section,
                      NumberFormat precision, int output, double ttft_ms, double itl_ms,
                      double tok_s, const std::string& serve_cmd, const std::string& variant) {
    return gps_engine(e, fmt::format("qwen3-{}b/{}.md", size, a100 ? "a100" : "h100"), section,
                      e == Engine::kSglang ? "v0.5.5.post1" : "v1.2.0rc1", a100,
                      fmt::format("qwen3-{}b", size), fmt::format("Qwen3 {}B", size), precision,
                      "ShareGPT", 217, output, 1000, 1000, ttft_ms, itl_ms, tok_s, serve_cmd,
                      q14_bench_sharegpt, variant);
  };
  auto q14_engine = [&](bool a100, Engine e, const std::string& section, NumberFormat precision,
                        int output, double ttft_ms, double itl_ms, double tok_s,
                        const std::string& serve_cmd, const std::string& variant) {
    return q_engine(14, a100, e, section, precision, output, ttft_ms, itl_ms, tok_s, serve_cmd,
                    variant);
  };
  // SGLang's FP8 command, the H100 page's optimized one, on its random runs (every request at
  // once; lengths from each run's totals: 3200000 / 9964 over 100, 1997942 / 99814 and 998175 /
  // 50000 over 500, 127698 / 4000 over 1000).
  auto q14_sgl_opt = [&](int input, int output, int asked, int requests, double ttft_ms,
                         double itl_ms, double tok_s) {
    return gps_engine(Engine::kSglang, "qwen3-14b/h100.md", "Other Benchmark Cases (optimized)",
                      "v0.5.5.post1", false, "qwen3-14b", "Qwen3 14B", fp8, "random", input, output,
                      requests, requests, ttft_ms, itl_ms, tok_s,
                      "python3 -m sglang.launch_server --model-path Qwen/Qwen3-14B-FP8",
                      random_bench(input, asked, requests), "");
  };
  const std::string g70 = "eef8ebf83cadd690f6fb4ee87b30fe1a",
                    gphi = "a1e546da84999df665cd9131f5ab64e0";
  return {
      trt_row("llama3.1-70b", "Llama 3.3 70B", 2, 500, 2000, 3000, 5222),
      trt_row("llama3.1-70b", "Llama 3.3 70B", 2, 1000, 1000, 3000, 4205),
      trt_row("llama3.1-70b", "Llama 3.3 70B", 2, 5000, 500, 1500, 898),
      trt_row("llama3.1-8b", "Llama 3.1 8B", 1, 1000, 1000, 3000, 15220),
      trt_row("llama3.1-8b", "Llama 3.1 8B", 1, 500, 2000, 3000, 17660),
      trt00_row(false, "llama3.1-70b", "Llama 3.3 70B", 2, 128, 128, 6378, Gap::kNone),
      trt00_row(false, "llama3.1-70b", "Llama 3.3 70B", 2, 128, 2048, 6651, Gap::kNone),
      trt00_row(false, "llama3.1-70b", "Llama 3.3 70B", 2, 128, 4096, 4199, Gap::kNone),
      trt00_row(false, "llama3.1-70b", "Llama 3.3 70B", 2, 1000, 2000, 4146, Gap::kNone),
      trt00_row(false, "llama3.1-70b", "Llama 3.3 70B", 2, 2048, 128, 762, Gap::kNone),
      trt00_row(false, "llama3.1-70b", "Llama 3.3 70B", 2, 2048, 2048, 3082, Gap::kNone),
      trt00_row(false, "llama3.1-70b", "Llama 3.3 70B", 2, 20000, 2000, 437, Gap::kNone),
      trt00_row(false, "llama3.1-8b", "Llama 3.1 8B", 1, 128, 128, 28312, Gap::kNone),
      trt00_row(false, "llama3.1-8b", "Llama 3.1 8B", 1, 128, 2048, 22714, Gap::kNone),
      trt00_row(false, "llama3.1-8b", "Llama 3.1 8B", 1, 128, 4096, 14325, Gap::kNone),
      trt00_row(false, "llama3.1-8b", "Llama 3.1 8B", 1, 1000, 2000, 13899, Gap::kNone),
      trt00_row(false, "llama3.1-8b", "Llama 3.1 8B", 1, 2048, 128, 3450, Gap::kNone),
      trt00_row(false, "llama3.1-8b", "Llama 3.1 8B", 1, 2048, 2048, 9305, Gap::kNone),
      trt00_row(false, "llama3.1-8b", "Llama 3.1 8B", 1, 5000, 500, 3459, Gap::kNone),
      trt00_row(false, "llama3.1-8b", "Llama 3.1 8B", 1, 20000, 2000, 1351, Gap::kNone),
      trt00_row(true, "llama3.1-70b", "Llama 3.3 70B", 1, 128, 128, 3803, Gap::kNone),
      trt00_row(true, "llama3.1-70b", "Llama 3.3 70B", 1, 128, 2048, 4336, Gap::kNone),
      trt00_row(true, "llama3.1-70b", "Llama 3.3 70B", 1, 128, 4096, 2872, Gap::kNone),
      trt00_row(true, "llama3.1-70b", "Llama 3.3 70B", 1, 500, 2000, 3666, Gap::kNone),
      trt00_row(true, "llama3.1-70b", "Llama 3.3 70B", 1, 1000, 1000, 2909, Gap::kNone),
      trt00_row(true, "llama3.1-70b", "Llama 3.3 70B", 1, 1000, 2000, 2994, Gap::kNone),
      trt00_row(true, "llama3.1-70b", "Llama 3.3 70B", 1, 2048, 128, 442, Gap::kNone),
      trt00_row(true, "llama3.1-70b", "Llama 3.3 70B", 1, 2048, 2048, 2003, Gap::kNone),
      trt00_row(true, "llama3.1-70b", "Llama 3.3 70B", 1, 5000, 500, 566, Gap::kNone),
      trt00_row(true, "llama3.1-70b", "Llama 3.3 70B", 1, 20000, 2000, 283, Gap::kNone),
      trt00_row(true, "llama3.1-8b", "Llama 3.1 8B", 1, 128, 128, 27911, Gap::kHost),
      trt00_row(true, "llama3.1-8b", "Llama 3.1 8B", 1, 128, 2048, 26221, Gap::kNone),
      trt00_row(true, "llama3.1-8b", "Llama 3.1 8B", 1, 128, 4096, 18027, Gap::kNone),
      trt00_row(true, "llama3.1-8b", "Llama 3.1 8B", 1, 500, 2000, 20770, Gap::kNone),
      trt00_row(true, "llama3.1-8b", "Llama 3.1 8B", 1, 1000, 1000, 17744, Gap::kNone),
      trt00_row(true, "llama3.1-8b", "Llama 3.1 8B", 1, 1000, 2000, 16828, Gap::kNone),
      trt00_row(true, "llama3.1-8b", "Llama 3.1 8B", 1, 2048, 128, 3538, Gap::kHost),
      trt00_row(true, "llama3.1-8b", "Llama 3.1 8B", 1, 2048, 2048, 12194, Gap::kNone),
      trt00_row(true, "llama3.1-8b", "Llama 3.1 8B", 1, 5000, 500, 3902, Gap::kNone),
      trt00_row(true, "llama3.1-8b", "Llama 3.1 8B", 1, 20000, 2000, 1804, Gap::kNone),
      trt_h200(1024, 1024, 3000, 2582),
      trt_h200(1024, 8192, 1500, 2009),
      trt_h200(8192, 1024, 1500, 537),
      trt_h200(32768, 1024, 1000, 120),
      trt_gpu("dgx-h100", "H100", trt2, "llama3.1-70b", "Llama 3.3 70B", 2, 8192, 1024, 1500,
              2 * 398),
      trt405_row(false, 128, 128, 30000, 3627, Gap::kNone),
      trt405_row(false, 128, 2048, 3000, 4340, Gap::kDecode),
      trt405_row(false, 128, 4096, 1500, 3116, Gap::kDecode),
      trt405_row(false, 500, 2000, 3000, 3994, Gap::kNone),
      trt405_row(false, 1000, 1000, 3000, 2919, Gap::kNone),
      trt405_row(false, 1000, 2000, 1500, 2895, Gap::kDecode),
      trt405_row(false, 2048, 128, 3000, 453, Gap::kNone),
      trt405_row(false, 2048, 2048, 1500, 2296, Gap::kNone),
      trt405_row(false, 5000, 500, 1500, 610, Gap::kNone),
      trt405_row(false, 20000, 2000, 1000, 345, Gap::kNone),
      trt405_row(true, 128, 128, 30000, 3814, Gap::kNone),
      trt405_row(true, 128, 2048, 3000, 5348, Gap::kDecode),
      trt405_row(true, 128, 4096, 1500, 4741, Gap::kDecode),
      trt405_row(true, 500, 2000, 3000, 4724, Gap::kNone),
      trt405_row(true, 1000, 1000, 3000, 3330, Gap::kNone),
      trt405_row(true, 1000, 2000, 1500, 3722, Gap::kDecode),
      trt405_row(true, 2048, 128, 3000, 456, Gap::kNone),
      trt405_row(true, 2048, 2048, 1500, 2948, Gap::kNone),
      trt405_row(true, 5000, 500, 1500, 650, Gap::kNone),
      trt405_row(true, 20000, 2000, 1000, 505, Gap::kNone),
      rtx(4, 63, 53, 157, 210, 2.09),
      rtx(8, 79, 55, 268, 377, 3.78),
      rtx(16, 155, 97, 503, 644, 6.44),
      rtx(32, 362, 277, 938, 975, 9.73),
      rtx(48, 667, 840, 1483, 1190, 11.87),
      nim_row(500, 2000, 1, 47.77, 18.91, 52.85),
      nim_row(5000, 500, 1, 406.77, 18.58, 51.67),
      [&] {
        ServeCase r = nim_row(5000, 500, 5, 546.7, 21.83, 218.48);
        // TensorRT-LLM's micro-batch scheduler (NVIDIA/TensorRT-LLM
        // cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp, commit 0a949d31) makes one pass
        // over the active requests in arrival order, a token for each (older) generating request
        // and whole contexts while they fit max_num_tokens (8192), the first that does not ending
        // the pass: one 5000-token context a step. Its executor (cpp/tensorrt_llm/executor/
        // executorImpl.cpp, commit b35ac1b6, executionLoop) fetches new requests after each
        // step's responses and before the next step. Clients that start together therefore stay in
        // a train, each prompt waiting for the context step ahead (the model, 688 ms; a scratch
        // step-by-step simulation outside linkwise, a context step of 381 ms and decode steps of 18
        // ms, client round trips of 2-20 ms and jitter up to 50 ms, stays at 684-1031 ms); clients
        // out of phase would wait for a decode step and the M/D/1 queue of the others' prompts (419
        // ms with --arrivals poisson). The measured 547 ms lies between the two.
        r.open =
            "TTFT of five 5000-token prompts over-predicted (+26%): the model keeps the clients "
            "in the train they start in (one 5000-token context a step under TensorRT-LLM's "
            "8192-token max_num_tokens, each prompt waiting for the context step ahead: 688 ms); "
            "clients out of phase give 419 ms (-23%, --arrivals poisson); the measured 547 ms "
            "lies between, and what puts the benchmark's clients partly out of phase (its start, "
            "warm-up) is not public";
        return r;
      }(),
      nim_row(5000, 500, 25, 688.69, 38.75, 623.4),
      nim_row(5000, 500, 50, 834.51, 59.73, 814.37),
      // Past the KV cache: the clients beyond what fits wait for a slot. TTFT is then the
      // clients' cycle less the decode, N / X - (O - 1) * ITL (Little's law over all N), the
      // difference of two long times: at 100 clients a 1% error in X or ITL moves TTFT by 5.7%
      // or 4.7% (test Serve.PastTheKvCacheTtftIsTheClientsCycleLessTheDecode). The page's figures
      // (920 tok/s and 93 ms at 150-250 clients) imply ~86 sequences running; the model holds 84
      // (vLLM's accounting of the KV cache, 0.9 of the GPU less the rest). TensorRT-LLM sizes it as
      // 0.9 of the memory free after the engine loads (cpp/tensorrt_llm/batch_manager/
      // kvCacheManager.cpp, calculateFreeMemBytes, KvCacheConfig::kDefaultGpuMemFraction), which
      // with the model's activation and runtime figures holds 92; its engine's activation memory
      // has no public figure (NVIDIA/TensorRT-LLM issue #210: no general formula), so the rows
      // keep vLLM's accounting (docs/VALIDATION.md, "Serving").
      nim_row(5000, 500, 100, 7996.25, 92.91, 917.26),
      nim_row(5000, 500, 150, 34794.22, 92.86, 920.9),
      nim_row(5000, 500, 200, 61680.22, 93.06, 920.54),
      nim_row(5000, 500, 250, 88605.32, 93.2, 920.12),
      a100,
      q14,
      kvc_row(16, 38.9, 2.39, 15.87),
      kvc_row(0, 2905, 5.45, 94.91),
      az_row("llama3.1-70b", "Llama 3.3 70B", 4, 1, 214, 214, 154.771, 44.8516, 198.508, g70,
             "Standard_NC96ads_A100_v4"),
      az_row("llama3.1-70b", "Llama 3.3 70B", 4, 4, 214, 214, 246.338, 69.5497, 532.931, g70,
             "Standard_NC96ads_A100_v4"),
      az_row("phi-4", "Phi-4", 1, 1, 215, 98, 67.1317, 22.3552, 96.8492, gphi,
             "Standard_NC24ads_A100_v4"),
      az_row("phi-4", "Phi-4", 1, 4, 215, 98, 78.5488, 27.7427, 325.2, gphi,
             "Standard_NC24ads_A100_v4"),
      q8_row(1, 59.01, 7.26, 132.86),
      q8_row(2, 63.78, 7.44, 257.19),
      q8_row(4, 64.00, 7.78, 496.88),
      q8_row(8, 74.57, 8.57, 917.28),
      // Lengths derived from each run's totals: ShareGPT 217393 / 201648 tokens over 1000
      // requests; random 3200000 / 9855 over 100, 1997942 / 99803 over 500, 998175 / 50000 over
      // 500, 127698 / 4000 over 1000.
      q14_row("ShareGPT", 217, 202, 0, 1000, 22141.21, 92.83, 3173.92),
      q14_row("32000", 32000, 99, 100, 100, 191024.43, 274.38, 25.48),
      q14_row("4000", 3996, 200, 200, 500, 112716.92, 132.11, 438.56),
      q14_row("2000", 1996, 100, 100, 500, 50716.13, 204.84, 505.51),
      q14_row("128", 128, 4, 4, 1000, 18282.75, 393.98, 176.06),
      gq_row("workstation-rtx4090", "GPU0", "RTX 4090", 3869.3, 15385.7),
      gq_row("dgx-a100", "GPU0", "A100 80GB", 10338.25, 3412.85),
      gq_row("dgx-h100", "GPU0", "H100 80GB", 13305.38, 5172.78),
      l4_row(1, 27.0, 5.1, 168),
      l4_row(2, 37.8, 5.2, 367),
      l4_row(4, 50.1, 5.3, 698),
      l4_row(8, 60.9, 5.5, 1312),
      l4_row(16, 103.8, 6.0, 2277),
      l4_row(32, 135.3, 7.1, 3773),
      // gpustack/gpustack docs/performance-lab/qwen3-14b/a100.md, the vLLM baseline (v0.11.0) on
      // an A100: lengths from each run's totals (ShareGPT 217393 / 201605 over 1000; random
      // 3200000 / 9891 over 100, 1997942 / 99783 and 998175 / 50000 over 500, 127698 / 4000
      // over 1000).
      q14_row("ShareGPT", 217, 202, 0, 1000, 41875.09, 95.04, 1887.31, true),
      q14_row("32000", 32000, 99, 100, 100, 359648.08, 441.08, 13.65, true),
      q14_row("4000", 3996, 200, 200, 500, 197625.03, 253.82, 245.13, true),
      q14_row("2000", 1996, 100, 100, 500, 86908.30, 299.28, 284.64, true),
      q14_row("128", 128, 4, 4, 1000, 19451.46, 175.01, 149.33, true),
      // The same pages' SGLang and TensorRT-LLM runs (above, gps_engine).
      q8e(Engine::kSglang, "Choosing the Inference Engine", bf16, 27.70, 7.08, 525.59,
          "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B", ""),
      q8e(Engine::kSglang, "Maximum batch size for cuda graph in SGLang", bf16, 28.46, 7.09, 524.71,
          "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --cuda-graph-max-bs 8",
          "--cuda-graph-max-bs 8"),
      q8e(Engine::kTrtllm, "Choosing the Inference Engine", bf16, 51.61, 7.59, 487.38,
          "trtllm-serve Qwen/Qwen3-8B", ""),
      q8e(Engine::kSglang, "Quantization", fp8, 39.66, 5.58, 657.83,
          "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B-FP8", ""),
      q8e(Engine::kSglang, "Attention Backend", fp8, 60.18, 5.71, 635.15,
          "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B-FP8 --attention-backend "
          "triton",
          "triton attention"),
      q8e(Engine::kSglang, "Attention Backend", fp8, 269.33, 5.65, 556.61,
          "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B-FP8 --attention-backend "
          "flashinfer",
          "flashinfer attention"),
      q14_engine(true, Engine::kSglang, "Choosing the Inference Engine", bf16, 202, 20365.34,
                 141.30, 2542.06, "python3 -m sglang.launch_server --model-path Qwen/Qwen3-14B",
                 ""),
      q14_engine(true, Engine::kTrtllm, "Choosing the Inference Engine", bf16, 201, 15258.26,
                 130.55, 2770.99, "trtllm-serve Qwen/Qwen3-14B", ""),
      q14_engine(true, Engine::kTrtllm, "Max Batched Token Numbers in TensorRT-LLM", bf16, 202,
                 15374.97, 129.13, 2779.60, "trtllm-serve Qwen/Qwen3-14B --max_num_tokens=16384",
                 "max_num_tokens 16384"),
      q14_engine(true, Engine::kTrtllm, "Max Batched Token Numbers in TensorRT-LLM", bf16, 202,
                 16776.11, 123.01, 2716.13, "trtllm-serve Qwen/Qwen3-14B --max_num_tokens=32768",
                 "max_num_tokens 32768"),
      q14_trt_opt(32000, 99, 100, 100, 361107.28, 488.09, 13.66),
      q14_trt_opt(3996, 200, 200, 500, 155664.65, 195.11, 305.25),
      q14_trt_opt(1996, 100, 100, 500, 67624.26, 310.55, 356.52),
      q14_trt_opt(128, 4, 4, 1000, 8166.48, 536.38, 266.13),
      // qwen3-14b/h100.md (the vLLM baseline's rows are above): 217393 input tokens over 1000
      // requests; 201628, 201612, 201833, 201833, 201462 and 201602 generated.
      q14_engine(false, Engine::kSglang, "Choosing the Inference Engine", bf16, 202, 9230.85, 91.54,
                 4043.89, "python3 -m sglang.launch_server --model-path Qwen/Qwen3-14B", ""),
      q14_engine(false, Engine::kTrtllm, "Choosing the Inference Engine", bf16, 202, 10230.91,
                 84.78, 4000.99, "trtllm-serve Qwen/Qwen3-14B", ""),
      q14_engine(false, Engine::kSglang, "Quantization in SGLang", fp8, 202, 7320.60, 77.06,
                 5019.64, "python3 -m sglang.launch_server --model-path Qwen/Qwen3-14B-FP8", ""),
      q14_engine(false, Engine::kSglang, "Attention Backends in SGLang", fp8, 202, 7304.47, 76.97,
                 5023.58,
                 "python3 -m sglang.launch_server --model-path Qwen/Qwen3-14B-FP8 "
                 "--attention-backend=fa3",
                 "fa3 attention"),
      q14_engine(false, Engine::kSglang, "Attention Backends in SGLang", fp8, 201, 13440.31, 76.95,
                 4388.17,
                 "python3 -m sglang.launch_server --model-path Qwen/Qwen3-14B-FP8 "
                 "--attention-backend=flashinfer",
                 "flashinfer attention"),
      q14_engine(false, Engine::kSglang, "Attention Backends in SGLang", fp8, 202, 7297.40, 82.50,
                 4838.09,
                 "python3 -m sglang.launch_server --model-path Qwen/Qwen3-14B-FP8 "
                 "--attention-backend=triton",
                 "triton attention"),
      q14_sgl_opt(32000, 100, 100, 100, 158068.68, 211.53, 31.09),
      q14_sgl_opt(3996, 200, 200, 500, 82073.47, 84.30, 583.23),
      q14_sgl_opt(1996, 100, 100, 500, 33245.08, 140.52, 704.28),
      q14_sgl_opt(128, 4, 4, 1000, 4489.43, 556.73, 512.83),
      // gpustack/gpustack docs/performance-lab/qwen3-32b/h100.md and a100.md (Qwen3 32B at TP 1:
      // no command names a tensor-parallel size; "NVIDIA H100 GPUs" taken as H100 SXM, as the
      // lab's other H100 pages state). The vLLM baseline (217393 input tokens over 1000 ShareGPT
      // requests, 201422 and 201396 generated; random runs 7681 / 99790 / 50000 / 4000 generated
      // on the H100, 7699 / 99893 / 50000 / 4000 on the A100), then SGLang and TensorRT-LLM.
      // Not rows: the A100 page's "Max Batched Token Numbers" runs, whose command names
      // Qwen/Qwen3-14B on the Qwen3 32B page (which model ran is not stated), and its vLLM
      // FP8/AWQ runs (W8A16/W4A16 kernels on the A100).
      q14_row("ShareGPT", 217, 201, 0, 1000, 78118.74, 69.76, 1131.55, false, 32),
      // Not a row: the 32000/77 run (TTFT 585981.22 ms, ITL 42.86 ms, 6.64 tok/s), which the
      // model refuses on one H100: 61.0 GiB of weights, 2.3 GiB of activations (8192-token steps)
      // and 9.5 GiB of runtime and reserve leave less than one 32077-token request's 7.8 GiB of
      // KV cache, where vLLM ran it (docs/VALIDATION.md).
      q14_row("4000", 3996, 200, 200, 500, 482284.21, 66.29, 102.21, false, 32),
      q14_row("2000", 1996, 100, 100, 500, 163909.40, 85.97, 152.42, false, 32),
      q14_row("128", 128, 4, 4, 1000, 21648.67, 877.29, 121.66, false, 32),
      q14_row("ShareGPT", 217, 201, 0, 1000, 105557.78, 117.98, 832.43, true, 32,
              " --max-model-len 32768"),
      q14_row("32000", 32000, 77, 100, 100, 890711.38, 64.54, 4.32, true, 32),
      q14_row("4000", 3996, 200, 200, 500, 566579.70, 95.82, 87.48, true, 32),
      q14_row("2000", 1996, 100, 100, 500, 208397.03, 142.07, 120.27, true, 32),
      q14_row("128", 128, 4, 4, 1000, 31177.64, 396.42, 80.69, true, 32),
      // SGLang 201826 / 201439, TensorRT-LLM 201723 / 201412, SGLang FP8 and TensorRT-LLM FP8
      // with chunked prefill 201376 each (H100 / A100) generated over the 1000 ShareGPT requests.
      q_engine(32, false, Engine::kSglang, "Choosing the Inference Engine", bf16, 202, 115690.30,
               56.25, 814.03, "python3 -m sglang.launch_server --model-path Qwen/Qwen3-32B", ""),
      q_engine(32, false, Engine::kTrtllm, "Choosing the Inference Engine", bf16, 202, 65281.52,
               59.22, 1280.04, "trtllm-serve Qwen/Qwen3-32B", ""),
      q_engine(32, false, Engine::kSglang, "Quantization in TensorRT-LLM (an SGLang command)", fp8,
               201, 35510.55, 118.32, 1926.06,
               "python3 -m sglang.launch_server --model-path Qwen/Qwen3-32B-FP8", ""),
      q_engine(32, false, Engine::kTrtllm, "Enable Chunked Prefill in TensorRT-LLM", fp8, 201,
               31208.75, 107.04, 2060.40,
               "trtllm-serve Qwen/Qwen3-32B-FP8 --max_seq_len=40960 --enable_chunked_prefill",
               "chunked prefill"),
      trt_opt(32, false, 32000, 78, 100, 100, 396294.90, 284.98, 9.93),
      trt_opt(32, false, 3996, 200, 200, 500, 208082.20, 138.01, 234.70),
      trt_opt(32, false, 1996, 100, 100, 500, 86596.60, 221.16, 281.53),
      trt_opt(32, false, 128, 4, 4, 1000, 10718.84, 667.57, 207.33),
      q_engine(32, true, Engine::kSglang, "Choosing the Inference Engine", bf16, 201, 139199.11,
               69.65, 672.56, "python3 -m sglang.launch_server --model-path Qwen/Qwen3-32B", ""),
      q_engine(32, true, Engine::kTrtllm, "Choosing the Inference Engine", bf16, 201, 84105.84,
               78.87, 987.91, "trtllm-serve Qwen/Qwen3-32B", ""),
      // Not a row: the 32000/79 run (TTFT 1040855.88 ms, ITL 46.77 ms, 3.88 tok/s), which the
      // model refuses on one A100 (2.8 GiB of activations for 8192-token steps; the same
      // shortfall as the H100's vLLM 32000/77 run above).
      trt_opt(32, true, 3996, 200, 200, 500, 509693.25, 99.60, 97.01),
      trt_opt(32, true, 1996, 100, 100, 500, 189776.20, 144.04, 129.55),
      trt_opt(32, true, 128, 4, 4, 1000, 19761.77, 1413.87, 107.38),
  };
}

std::vector<ServeValidationRow> run_serve_validation() {
  std::vector<ServeValidationRow> rows;
  for (auto& c : serve_validation_cases()) {
    auto chassis = topo::load_chassis(c.chassis);
    // The call `linkwise serve` makes (serve_prediction): a run whose client queues every request
    // at once is replayed step by step whatever its admission, with trtllm-bench's own limits
    // through the offline front end (engine_limits); a row whose requests end at EOS
    // (replay_mean_output) is replayed at that mean; vLLM V1 past the KV cache as the CLI does.
    const ServeResult res =
        serve_prediction(chassis, find_model(c.model), c.options, {}, c.replay_mean_output);
    ServeValidationRow r;
    r.predicted = res.point;
    r.replayed = !res.replayed.empty();
    r.preemptions = res.preemptions;
    r.ttft_median_s = res.ttft_median_s;
    r.ttft_p99_s = res.ttft_p99_s;
    r.ttft_error = err(r.predicted.ttft_s, c.ttft_s);
    r.itl_error = err(r.predicted.itl_s, c.itl_s);
    r.throughput_error = err(r.predicted.output_tokens_per_s, c.output_tokens_per_s);
    r.c = std::move(c);
    rows.push_back(std::move(r));
  }
  return rows;
}

double serve_validation_median(const std::vector<ServeValidationRow>& rows, int metric) {
  std::vector<double> e;
  for (const auto& r : rows) {
    double measured = metric == 0 ? r.c.ttft_s : metric == 1 ? r.c.itl_s : r.c.output_tokens_per_s;
    if (measured <= 0) continue;
    e.push_back(std::abs(metric == 0   ? r.ttft_error
                         : metric == 1 ? r.itl_error
                                       : r.throughput_error));
  }
  if (e.empty()) return 0;
  std::sort(e.begin(), e.end());
  std::size_t n = e.size();
  return n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
}

}  // namespace linkwise::work
