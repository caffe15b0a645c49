// linkwise train: step time, breakdown, memory, busiest links and time to train of a training job.
// Flags -> work::TrainOptions -> work::run_train -> report::train_output.
#include <fmt/format.h>

#include <cstdio>

#include "commands.h"
#include "linkwise/report/train_report.h"
#include "linkwise/util/error.h"
#include "linkwise/work/train_run.h"

namespace linkwise::cli {

namespace {

struct TrainFlags {
  work::TrainOptions opts;
  bool json = false;
  std::string output;
  CLI::App* app = nullptr;
};

work::TrainOptions options_of(const TrainFlags& f) {
  work::TrainOptions o = f.opts;
  o.given = given_options(*f.app);
  return o;
}

int run(TrainFlags& f) {
  auto r = work::run_train(options_of(f));
  if (!r.fits()) {  // an explicit plan that does not fit: the report on stdout, no output file
    if (f.output.empty()) emit(report::train_output(r, f.json), "");
    std::fflush(stdout);
    fmt::print(stderr, "linkwise: error: {}\n", report::train_does_not_fit(r, f.output));
    return 2;
  }
  emit(report::train_output(r, f.json), f.output);
  return 0;
}

void add_train_flags(CLI::App& sub, TrainFlags* f) {
  work::TrainOptions* o = &f->opts;
  add_chassis_arg(sub, o->chassis);
  sub.add_option(
      "--model", o->model,
      "Model preset (llama2-7b/13b/70b, llama3-8b/70b/405b, mixtral-8x7b, gpt3-175b) or YAML file");
  sub.add_option("--mode", o->mode, "pretrain, full (full fine-tune) or lora");
  sub.add_option(
      "--precision", o->precision,
      "bf16, fp16 or fp8 (default auto: bf16, or fp16 on GPUs without BF16 such as V100)");
  sub.add_option("--seq", o->seq, "Sequence length in tokens (default: the model's)")
      ->check(CLI::Range(1, 1 << 24));
  sub.add_option("--micro-batch", o->micro_batch, "Sequences per micro-batch")
      ->check(CLI::Range(1, 1 << 16));
  sub.add_option("--global-batch", o->global_batch,
                 "Sequences per optimizer step (default: 4M tokens pre-training, 64 fine-tuning)")
      ->check(CLI::Range(1, 1 << 24));
  sub.add_option("--recompute", o->recompute, "Activation recomputation: none, selective or full");
  sub.add_flag("--no-flash-attention", o->no_flash,
               "Unfused attention: the s x s scores are stored and moved");
  sub.add_option("--framework", o->framework,
                 "megatron, fsdp, deepspeed or deepspeed-0.3: how the plan's collectives run "
                 "(docs/training.md)");
  sub.add_option("--grad-overlap", o->grad_overlap,
                 "on or off: gradient reduction beside the backward (default: the framework's)");
  sub.add_option("--elementwise", o->elementwise,
                 "fused or eager norms and activations (default: the framework's)");
  sub.add_option("--checkpoint-every", o->checkpoint_every,
                 "Write a checkpoint every N steps: its host traffic and share of wall time")
      ->check(CLI::Range(1, 1 << 30));
  sub.add_flag("--checkpoint-unsharded", o->checkpoint_unsharded,
               "One GPU per box writes the checkpoint (default: every GPU its shard)");
  sub.add_flag(
      "--checkpoint-async", o->checkpoint_async,
      "The drive writes overlap the following steps (only the copy to host memory blocks)");
  sub.add_flag("--offload", o->offload, "Optimizer states and step on the CPU (ZeRO-Offload)");
  sub.add_option("--lora-rank", o->lora_rank, "LoRA rank")->check(CLI::Range(1, 1 << 16));
  sub.add_option("--lora-targets", o->lora_targets,
                 "Matrices with adapters, from q,k,v,o,gate,up,down");
  sub.add_option("--base-weights", o->base_weights,
                 "LoRA's frozen base: bf16, fp8 or nf4 (QLoRA); default fp8 for fp8 jobs");
  sub.add_option("--plan", o->plan,
                 "tp=..,pp=..,dp=..,zero=..[,ep=..,vpp=..,mb=..,sp=off,order=dp,tp,pp] or auto");
  sub.add_option("--top", o->top, "Plans listed by --plan auto")->check(CLI::Range(1, 100));
  sub.add_option("--tokens", o->tokens,
                 "Tokens to train: prints the run's wall-clock time (e.g. 1e12)");
  add_nodes_flag(sub, o->nodes);
  add_as_designed_flag(sub, o->as_designed);
  sub.add_flag("--scaling", o->scaling,
               "Best plan and scaling efficiency from 1 GPU up to the whole chassis");
  sub.add_flag("--validation", o->validation,
               "Compare predictions with published measurements (docs/VALIDATION.md)");
  add_json_output_flags(sub, f->json, f->output);
  f->app = &sub;
}

}  // namespace

Handler setup_train(CLI::App& sub) {
  auto f = std::make_shared<TrainFlags>();
  add_train_flags(sub, f.get());
  return [f] { return run(*f); };
}

work::TrainOptions train_job_options(std::string job, const std::string& chassis, int nodes) {
  const std::string given = job;
  if (job.rfind("train", 0) == 0) job.erase(0, 5);
  CLI::App app{"--job"};
  TrainFlags f;
  add_train_flags(app, &f);
  try {
    app.parse(job, false);
  } catch (const CLI::ParseError& e) {
    throw InputError(fmt::format("--job '{}': {}", given, e.what()));
  }
  auto o = options_of(f);
  if (o.chassis.empty()) o.chassis = chassis, o.nodes = nodes, o.given.push_back("CHASSIS");
  return o;
}

}  // namespace linkwise::cli
