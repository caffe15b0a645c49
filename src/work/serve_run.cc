// work::run_serve: the serving prediction behind `linkwise serve` (options -> result, no
// rendering).
#include "linkwise/work/serve_run.h"

#include <fmt/format.h>

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
  if (!o.kv_admission.empty())
    s.kv_admission = parse_kv_admission(o.kv_admission, "--kv-admission");
  s.requests = o.requests;
  if (!o.front_end.empty()) s.front_end = parse_front_end(o.front_end, "--front-end");
  if (o.endpoint == "chat")
    s.chat_endpoint = true;
  else if (o.endpoint != "completions")
    throw InputError(fmt::format("--endpoint must be chat or completions, not '{}'", o.endpoint));
  return s;
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
  run.result = serve(chassis, model, make_serve_options(o), points);
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
       "output fit: TensorRT-LLM; default) or prompt (its first chunk fits, preempting the latest "
       "admitted when any running request's tokens find too few blocks: vLLM V1)"},
      {"--no-chunked-prefill", at<&S::no_chunked_prefill>,
       "Each prompt runs whole in one step (TensorRT-LLM's default); vLLM chunks it"},
      {"--no-async-scheduling", at<&S::no_async_scheduling>,
       "The engine schedules each step when the last one ends (vLLM before v0.14); by default "
       "it schedules a step ahead while the GPU runs"},
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
