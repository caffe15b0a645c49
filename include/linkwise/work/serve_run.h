// One call behind `linkwise serve`: the command's options in, the prediction (or the validation
// cases) out. The CLI fills ServeRunOptions from its flags; report::serve_output renders the
// result.
#pragma once

#include <string>
#include <vector>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/option_spec.h"
#include "linkwise/work/serve.h"
#include "linkwise/work/serve_validation.h"

namespace linkwise::work {

struct ServeRunOptions {
  std::string chassis, model;  ///< preset names or files ("" only with validation)
  std::string gpus;            ///< "0,1", "0-3", "GPU0,GPU1" or "" for all
  std::string precision = "bf16", kv_precision;  ///< kv_precision "" : the default for the weights
  std::string load = "page-cache";               ///< page-cache or gds
  std::string arrivals;                          ///< "" : the default of the loop
  std::string front_end;                 ///< vllm, offline, nim, sglang or trtllm-serve; "": vllm
                                         ///< (ServeOptions::front_end)
  std::string endpoint = "completions";  ///< completions or chat (ServeOptions::chat_endpoint)
  std::string sweep;                     ///< "" or "concurrency"
  int tp = 1, pp = 1, replicas = 0, input = 1024, output = 256, concurrency = 0, lora_rank = 0;
  int max_batched_tokens = 0, max_seqs = 0, sweep_max = 256;
  double rate = 0, prefix_hit = 0;
  bool as_designed =
      false;  ///< links at their design rate, not the trained one the chassis records
  bool expert_parallel = false, kv_offload = false, validation = false, no_chunked_prefill = false;
  bool no_async_scheduling = false;  ///< ServeOptions::async_scheduling off
  bool async_output_proc = false;    ///< ServeOptions::async_output_processing on (vLLM V0)
  bool prompt_only_steps = false;    ///< ServeOptions::prompt_only_steps on (vLLM V0)
  std::string kv_admission;  ///< whole-life or prompt; "": prompt with the vllm front end, else
                             ///< whole-life (ServeOptions::kv_admission)
  int requests = 0;  ///< > 0: a finite benchmark of this many requests (ServeOptions::requests)
  double tokenizer_batch_wait = 0;  ///< seconds (ServeOptions::tokenizer_batch_wait_s)
};

struct ServeRun {
  bool validation = false;
  std::vector<ServeValidationRow> rows;  ///< validation
  bool sweep = false;                    ///< result holds a concurrency sweep
  ServeResult result;                    ///< not validation
};

/// A finite closed-loop run whose client queues every request at once (requests > 0 and
/// concurrency >= requests: trtllm-bench throughput, `vllm bench serve` with as many clients as
/// prompts): the engine starts with the whole run waiting and drains at the end, a run the
/// steady-state formulas do not describe, so serve_prediction replays it step by step.
bool queued_at_once(const ServeOptions& options);

/// The options as the engine runs them: a run queued at once through the offline front end
/// (FrontEnd::kOffline, trtllm-bench throughput) that names neither max_seqs nor
/// max_batched_tokens takes trtllm-bench's own limits (trtllm_bench_settings) from the GPU's
/// memory, the weights and the KV cache's bytes a token; other options come back as they are.
ServeOptions engine_limits(const topo::Chassis& chassis, const Model& model, ServeOptions options);

/// The one serving prediction behind `linkwise serve` and `serve --validation`: the engine's
/// limits (engine_limits), the options' point (and the sweep, each point the steady state), then
/// the replay where the steady state does not hold. A run queued at once (queued_at_once), or a
/// finite run with `mean_output` > 0 (requests that end at EOS at that mean, capped at the
/// output; ReplayOptions::mean_output), has its point replayed step by step over its requests,
/// spread over the replicas, and ServeResult::replayed says so; otherwise vLLM V1 past the KV cache
/// is replayed as replay_past_kv says.
ServeResult serve_prediction(const topo::Chassis& chassis, const Model& model,
                             const ServeOptions& options, const std::vector<int>& sweep = {},
                             double mean_output = 0);

/// vLLM V1 past the KV cache: a closed loop with burst arrivals admitted by prompt
/// (KvAdmission::kPrompt) past the burst fit (ServeModel::burst_past_kv) has its point replayed
/// engine step by engine step (ServeModel::replay), a finite run of `requests` as it is or else the
/// steady state between warm-up and drain, and `r` says so (ServeResult::replayed); otherwise `r`
/// stays as it is.
/// With `answer` false the options' own point is left to the caller (sweep points only).
void replay_past_kv(const ServeModel& sm, const ServeOptions& options, ServeResult* r,
                    bool answer = true);

/// `linkwise serve`'s options: flags, help, ranges and Python keywords (util/option_spec.h).
const std::vector<OptionSpec<ServeRunOptions>>& serve_options();

/// Parses the textual options into ServeOptions; throws InputError naming the flag and value.
ServeOptions make_serve_options(const ServeRunOptions& options);
/// Checks the combination, then runs the validation cases or serve() (with the sweep when asked).
ServeRun run_serve(const ServeRunOptions& options);
/// The prediction on a chassis already built (options.chassis, as_designed and validation are not
/// read): many runs on one chassis load it once.
ServeRun run_serve(const ServeRunOptions& options, const topo::Chassis& chassis);

}  // namespace linkwise::work
