// linkwise serve: latency, throughput, memory, links and cold start of a model served on a chassis.
#include <fmt/format.h>

#include <sstream>

#include "commands.h"
#include "linkwise/report/serve_report.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"
#include "linkwise/work/serve.h"
#include "linkwise/work/serve_validation.h"

namespace linkwise::cli {

namespace {

struct ServeOpts {
  std::string chassis, model, gpus, precision = "bf16", kv_precision, sweep, load = "page-cache",
                                    output, arrivals;
  int tp = 1, pp = 1, replicas = 0, input = 1024, out_tokens = 256, concurrency = 0, lora_rank = 0;
  int max_batched_tokens = 0, max_seqs = 0, sweep_max = 256;
  double rate = 0, prefix_hit = 0;
  bool json = false, as_designed = false, expert_parallel = false, kv_offload = false, validation = false,
       no_chunked_prefill = false;
};

work::ServeOptions make_options(const ServeOpts& o) {
  work::ServeOptions s;
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
  s.output = o.out_tokens;
  s.concurrency = o.concurrency;
  s.rate = o.rate;
  if (!o.arrivals.empty()) s.arrivals = work::parse_arrivals(o.arrivals, "--arrivals");
  s.precision = work::parse_number_format(o.precision, "--precision");
  if (!o.kv_precision.empty()) {
    s.kv_precision = work::parse_number_format(o.kv_precision, "--kv-precision");
    s.kv_precision_given = true;
  }
  s.prefix_hit = o.prefix_hit;
  s.expert_parallel = o.expert_parallel;
  s.kv_offload = o.kv_offload;
  if (o.load == "gds")
    s.load = work::LoadPath::kGds;
  else if (o.load != "page-cache")
    throw InputError(fmt::format("--load must be page-cache or gds, not '{}'", o.load));
  s.lora_rank = o.lora_rank;
  s.max_batched_tokens = o.max_batched_tokens;
  s.max_seqs = o.max_seqs;
  s.chunked_prefill = !o.no_chunked_prefill;
  return s;
}

int run_serve(const ServeOpts& o) {
  if (o.validation) {
    if (!o.chassis.empty() || !o.model.empty())
      throw InputError(
          "--validation runs each published case on its own machine; it takes no CHASSIS or "
          "--model");
    auto rows = work::run_serve_validation();
    emit(o.json ? work::serve_validation_json(rows).dump(2) + "\n"
                : work::serve_validation_markdown(rows),
         o.output);
    return 0;
  }
  if (o.chassis.empty())
    throw InputError("serve needs a CHASSIS (a preset name or a chassis file)");
  if (o.model.empty())
    throw InputError("serve needs --model (a preset such as llama3.1-70b, or a model YAML file)");
  if (!o.sweep.empty() && o.sweep != "concurrency")
    throw InputError(fmt::format("--sweep takes 'concurrency', not '{}'", o.sweep));
  if (!o.sweep.empty() && o.rate > 0)
    throw InputError("--sweep concurrency is a closed loop; it takes no --rate");
  auto chassis = topo::load_chassis(o.chassis, 0,
                                    o.as_designed ? topo::LinkRates::kAsDesigned : topo::LinkRates::kAsBuilt);
  auto model = work::find_model(o.model);
  std::vector<int> points =
      o.sweep.empty() ? std::vector<int>{} : work::sweep_concurrencies(o.sweep_max);
  auto r = work::serve(chassis, model, make_options(o), points);
  if (auto links = topo::link_rates_note(chassis); !links.empty()) r.notes.push_back(links);
  std::string text = o.json
                         ? report::serve_json(r).dump(2) + "\n"
                         : (points.empty() ? report::serve_text(r) : report::serve_sweep_text(r));
  emit(text, o.output);
  return 0;
}

}  // namespace

Handler setup_serve(CLI::App& sub) {
  auto o = std::make_shared<ServeOpts>();
  sub.add_option("CHASSIS", o->chassis, "A preset name (linkwise presets) or a chassis YAML file");
  sub.add_option("--model", o->model,
                 "Model preset (llama3.1-70b, llama3.1-8b, qwen2.5-coder-32b, ...) or YAML file");
  sub.add_option("--tp", o->tp, "Tensor-parallel GPUs per replica")->check(CLI::Range(1, 1024));
  sub.add_option("--pp", o->pp, "Pipeline stages per replica")->check(CLI::Range(1, 1024));
  sub.add_option("--replicas", o->replicas,
                 "Independent copies of the model (default: as many as the GPUs hold)")
      ->check(CLI::Range(1, 1 << 16));
  sub.add_option("--gpus", o->gpus, "GPUs to use, e.g. 0,1 or 0-3 or GPU0,GPU1 (default: all)");
  sub.add_option("--input", o->input, "Prompt tokens per request")->check(CLI::Range(1, 1 << 24));
  sub.add_option("--output", o->out_tokens, "Output tokens per request")
      ->check(CLI::Range(1, 1 << 24));
  sub.add_option("--concurrency", o->concurrency,
                 "Closed loop: this many users, each sending its next request when the last ends")
      ->check(CLI::Range(1, 1 << 20));
  sub.add_option("--rate", o->rate, "Open loop: requests per second arriving")
      ->check(CLI::PositiveNumber);
  sub.add_option("--arrivals", o->arrivals,
                 "Closed loop: burst (clients start together, equal lengths: benchmark clients; "
                 "default) or poisson (independent arrivals)");
  sub.add_option("--precision", o->precision, "Weights: bf16, fp8 or int4 (AWQ/GPTQ, group 128)");
  sub.add_option("--kv-precision", o->kv_precision,
                 "KV cache: bf16 or fp8 (default: fp8 with fp8 weights, else bf16)");
  sub.add_option("--prefix-cache", o->prefix_hit,
                 "Fraction of each prompt found in the prefix cache (shared context)")
      ->check(CLI::Range(0.0, 0.999999));
  sub.add_flag("--expert-parallel", o->expert_parallel,
               "MoE: experts whole on each GPU, tokens sent by all-to-all");
  sub.add_flag("--kv-offload", o->kv_offload,
               "Keep the KV cache that does not fit in host memory (over PCIe each step)");
  sub.add_option("--load", o->load,
                 "How weights reach the GPUs at start: page-cache or gds (GPUDirect Storage)");
  sub.add_option("--lora-rank", o->lora_rank,
                 "Also show the swap time of one LoRA adapter of this rank")
      ->check(CLI::Range(1, 1 << 16));
  sub.add_option("--max-batched-tokens", o->max_batched_tokens,
                 "Token budget per engine step (default: vLLM's)")
      ->check(CLI::Range(1, 1 << 24));
  sub.add_option("--max-seqs", o->max_seqs, "Most sequences per engine step (default: vLLM's)")
      ->check(CLI::Range(1, 1 << 20));
  sub.add_flag("--no-chunked-prefill", o->no_chunked_prefill,
               "Each prompt runs whole in one step (TensorRT-LLM's default); vLLM chunks it");
  sub.add_option("--sweep", o->sweep,
                 "concurrency: the latency/throughput curve from 1 user up, and where it bends");
  sub.add_option("--sweep-max", o->sweep_max, "Highest concurrency of the sweep")
      ->check(CLI::Range(1, 1 << 16));
  sub.add_flag("--validation", o->validation,
               "Compare predictions with published serving measurements (docs/VALIDATION.md)");
  add_as_designed_flag(sub, o->as_designed);
  sub.add_flag("--json", o->json, "Print as JSON");
  sub.add_option("-o,--output-file", o->output,
                 "Write to this file (atomically) instead of standard output");
  return [o] { return run_serve(*o); };
}

}  // namespace linkwise::cli
