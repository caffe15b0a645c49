// Serving predictions against published measurements (vLLM, TensorRT-LLM, SGLang and NIM benchmark
// pages).
//
// Each case names the machine (a preset, and the GPUs used), the model, the deployment (tp,
// precision), the load (concurrency, input and output tokens) and what was measured (TTFT, ITL,
// output tokens/s); run_serve_validation() predicts the same with work::serve_prediction() (the
// call `linkwise serve` makes) and reports the error. Nothing is fitted per case.
// docs/VALIDATION.md holds the table `linkwise serve --validation` prints.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "linkwise/work/serve.h"

namespace linkwise::work {

struct ServeCase {
  std::string name;
  std::string source;    ///< page, table and row
  std::string chassis;   ///< preset
  std::string model;     ///< model preset
  ServeOptions options;  ///< gpus, tp, precision, input, output, concurrency
  std::string command;   ///< what was run to measure it
  double ttft_s = 0, itl_s = 0, output_tokens_per_s = 0;  ///< measured; 0 = not reported
  /// measured median and P99 TTFT (what `vllm bench serve` prints beside the mean); 0 = not
  /// reported. Reported beside the replay's, not in the error medians
  double ttft_median_s = 0, ttft_p99_s = 0;
  /// > 0: the run is replayed engine step by engine step (ServeModel::replay) with outputs that end
  /// at EOS at this mean, capped at options.output, over options.requests requests; its TTFT, ITL,
  /// E2E and rates stand for the steady state's. A run whose client queues every request at once
  /// (options.concurrency >= options.requests) is replayed whatever this says
  /// (work::queued_at_once, serve_prediction), every request to options.output when this is 0
  double replay_mean_output = 0;
  /// Non-empty: the row's gap is open and this names the suspected mechanism; its errors are
  /// reported (and in the medians) but not bounded by the tests
  std::string open;
  /// The run is trtllm-bench's throughput command without --max_batch_size/--max_num_tokens: the
  /// engine's limits are the ones its heuristics choose from the dataset's lengths
  /// (trtllm_bench_settings), not vLLM's defaults. serve_prediction applies them by its own rule
  /// (work::engine_limits: the offline front end, queued at once, neither limit given), which
  /// every such row meets (test ServeRun.OneRuleChoosesTheReplayAndTheEngineLimits)
  bool trtllm_bench = false;
};

/// The max_batch_size and max_num_tokens `trtllm-bench throughput` gives the PyTorch backend when
/// the command names neither (tensorrt_llm/bench/benchmark/utils/general.py get_settings ->
/// tensorrt_llm/bench/build/tuning.py calc_engine_setting, finetune_setting).
struct TrtllmBenchSettings {
  int max_batch_size = 0;
  int max_num_tokens = 0;
  double kv_cache_max_requests = 0;  ///< its estimate of the requests the KV cache holds
};
/// gpu_memory_bytes per GPU, weight_bytes and kv_bytes_per_token of the whole model, the dataset's
/// input and output lengths (all alike), whole prompts (no chunked prefill).
TrtllmBenchSettings trtllm_bench_settings(double gpu_memory_bytes, int tp, int pp,
                                          double weight_bytes, double kv_bytes_per_token, int input,
                                          int output);

struct ServeValidationRow {
  ServeCase c;
  ServePoint predicted;
  double ttft_error = 0, itl_error = 0,
         throughput_error = 0;  ///< (predicted - measured) / measured
  /// the row was replayed step by step (ServeModel::replay): `predicted`'s TTFT, ITL, E2E and rates
  /// are the replay's, its bound, kv_full, queue_s and running the steady state's
  bool replayed = false;
  long preemptions = 0;  ///< the replay's preemptions (KvAdmission::kPrompt)
  /// the replay's median and P99 TTFT (ReplayResult); 0 when the row is not replayed
  double ttft_median_s = 0, ttft_p99_s = 0;
};

std::vector<ServeCase> serve_validation_cases();
std::vector<ServeValidationRow> run_serve_validation();
/// Median of |errors| over the rows that report the metric: 0 ttft, 1 itl, 2 throughput.
double serve_validation_median(const std::vector<ServeValidationRow>& rows, int metric);

}  // namespace linkwise::work
