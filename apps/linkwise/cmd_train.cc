// linkwise train: step time, breakdown, memory, busiest links and time to train of a training job.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>

#include "commands.h"
#include "linkwise/report/train_report.h"
#include "linkwise/util/error.h"
#include "linkwise/work/train.h"
#include "linkwise/work/validation.h"

namespace linkwise::cli {

namespace {

struct TrainOpts {
  work::TrainRequest req;
  std::string output;
  bool json = false, no_flash = false, validation = false;
  CLI::App* app = nullptr;  ///< to tell which flags were given
  bool given(const char* name) const { return app->count(name) > 0; }
};

// Flags that would be ignored in the combination given: exit 2 naming them.
void check_combinations(const TrainOpts& o) {
  if (o.validation) {
    for (const CLI::Option* opt : o.app->get_options()) {
      std::string n = opt->get_name();
      if (opt->count() == 0 || n == "--validation" || n == "--json" || n == "-o,--output" || n == "--help") continue;
      throw InputError(fmt::format("--validation runs each published case on its own machine and plan; it takes no {}",
                                   opt->get_positional() ? "CHASSIS" : n));
    }
    return;
  }
  if (o.req.scaling && o.given("--plan"))
    throw InputError("--scaling searches the best plan at each GPU count itself; it takes no --plan");
  if (o.req.scaling && o.given("--top")) throw InputError("--scaling shows one plan per GPU count; it takes no --top");
  if (o.req.mode != "lora")
    for (const char* f : {"--lora-rank", "--lora-targets"})
      if (o.given(f)) throw InputError(fmt::format("{} applies only with --mode lora", f));
}

int run_train(const TrainOpts& o) {
  check_combinations(o);
  if (o.validation) {
    auto rows = work::run_validation();
    emit(o.json ? report::validation_json(rows).dump(2) + "\n" : report::validation_markdown(rows), o.output);
    return 0;
  }
  auto r = work::run_train(o.req);
  std::string printed = o.json ? report::train_json(r).dump(2) + "\n" : report::train_text(r);
  if (!r.scaling && !r.best.memory.fits) {  // an explicit plan that does not fit: the report on stdout, no output file
    if (o.output.empty()) emit(printed, "");
    std::fflush(stdout);
    fmt::print(stderr, "linkwise: error: {}\n", report::does_not_fit_message(r.best, o.output));
    return 2;
  }
  emit(printed, o.output);
  return 0;
}

}  // namespace

Handler setup_train(CLI::App& sub) {
  auto o = std::make_shared<TrainOpts>();
  sub.add_option("CHASSIS", o->req.chassis, "A preset name (linkwise presets) or a chassis YAML file");
  sub.add_option("--model", o->req.model, "Model preset (llama2-7b/13b/70b, llama3-8b/70b/405b, mixtral-8x7b, gpt3-175b) or YAML file");
  sub.add_option("--mode", o->req.mode, "pretrain, full (full fine-tune) or lora");
  sub.add_option("--precision", o->req.precision,
                 "bf16, fp16 or fp8 (default auto: bf16, or fp16 on GPUs without BF16 such as V100)");
  sub.add_option("--seq", o->req.seq, "Sequence length in tokens (default: the model's)")->check(CLI::Range(1, 1 << 24));
  sub.add_option("--micro-batch", o->req.micro_batch, "Sequences per micro-batch")->check(CLI::Range(1, 1 << 16));
  sub.add_option("--global-batch", o->req.global_batch, "Sequences per optimizer step (default: 4M tokens pre-training, 64 fine-tuning)")
      ->check(CLI::Range(1, 1 << 24));
  sub.add_option("--recompute", o->req.recompute, "Activation recomputation: none, selective or full");
  sub.add_flag("--no-flash-attention", o->no_flash, "Unfused attention: the s x s scores are stored and moved");
  sub.add_flag("--offload", o->req.offload_optimizer, "Optimizer states and step on the CPU (ZeRO-Offload)");
  sub.add_option("--lora-rank", o->req.lora_rank, "LoRA rank")->check(CLI::Range(1, 1 << 16));
  sub.add_option("--lora-targets", o->req.lora_targets, "Matrices with adapters, from q,k,v,o,gate,up,down");
  sub.add_option("--plan", o->req.plan, "tp=..,pp=..,dp=..,zero=..[,ep=..,vpp=..,mb=..,sp=off,order=dp,tp,pp] or auto");
  sub.add_option("--top", o->req.top, "Plans listed by --plan auto")->check(CLI::Range(1, 100));
  sub.add_option("--tokens", o->req.tokens, "Tokens to train: prints the run's wall-clock time (e.g. 1e12)")
      ->check([](const std::string& s) {
        try {
          std::size_t pos = 0;
          double v = std::stod(s, &pos);
          return pos == s.size() && v > 0 && std::isfinite(v) ? std::string() : "--tokens must be a positive number, not '" + s + "'";
        } catch (const std::exception&) {
          return "--tokens must be a positive number, not '" + s + "'";
        }
      });
  add_nodes_flag(sub, o->req.nodes);
  sub.add_flag("--scaling", o->req.scaling, "Best plan and scaling efficiency from 1 GPU up to the whole chassis");
  sub.add_flag("--validation", o->validation, "Compare predictions with published measurements (docs/VALIDATION.md)");
  sub.add_flag("--json", o->json, "Print as JSON");
  sub.add_option("-o,--output", o->output, "Write to this file (atomically) instead of standard output");
  o->app = &sub;
  return [o] {
    o->req.flash_attention = !o->no_flash;
    return run_train(*o);
  };
}

}  // namespace linkwise::cli
