// linkwise serve: latency, throughput, memory, links and cold start of a model served on a chassis.
// Flags -> work::ServeRunOptions -> work::run_serve -> report::serve_output.
#include "commands.h"
#include "linkwise/report/serve_report.h"
#include "linkwise/work/serve_run.h"

namespace linkwise::cli {

namespace {

struct ServeFlags {
  work::ServeRunOptions opts;
  bool json = false;
  std::string output;
};

}  // namespace

Handler setup_serve(CLI::App& sub) {
  auto f = std::make_shared<ServeFlags>();
  work::ServeRunOptions* o = &f->opts;
  add_chassis_arg(sub, o->chassis);
  sub.add_option("--model", o->model,
                 "Model preset (llama3.1-70b, llama3.1-8b, qwen2.5-coder-32b, ...) or YAML file");
  sub.add_option("--tp", o->tp, "Tensor-parallel GPUs per replica")->check(CLI::Range(1, 1024));
  sub.add_option("--pp", o->pp, "Pipeline stages per replica")->check(CLI::Range(1, 1024));
  sub.add_option("--replicas", o->replicas,
                 "Independent copies of the model (default: as many as the GPUs hold)")
      ->check(CLI::Range(1, 1 << 16));
  sub.add_option("--gpus", o->gpus, "GPUs to use, e.g. 0,1 or 0-3 or GPU0,GPU1 (default: all)");
  sub.add_option("--input", o->input, "Prompt tokens per request")->check(CLI::Range(1, 1 << 24));
  sub.add_option("--output", o->output, "Output tokens per request")->check(CLI::Range(1, 1 << 24));
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
  sub.add_option("--requests", o->requests, "Closed loop: a finite benchmark of this many requests")
      ->check(CLI::Range(1, 1 << 30));
  sub.add_option("--sweep", o->sweep,
                 "concurrency: the latency/throughput curve from 1 user up, and where it bends");
  sub.add_option("--sweep-max", o->sweep_max, "Highest concurrency of the sweep")
      ->check(CLI::Range(1, 1 << 16));
  sub.add_flag("--validation", o->validation,
               "Compare predictions with published serving measurements (docs/VALIDATION.md)");
  add_as_designed_flag(sub, o->as_designed);
  add_json_output_flags(sub, f->json, f->output, "-o,--output-file");
  return [f] {
    emit(report::serve_output(work::run_serve(f->opts), f->json), f->output);
    return 0;
  };
}

}  // namespace linkwise::cli
