// work::run_train: the training run behind `linkwise train` (options -> result, no rendering).
#include "linkwise/work/train_run.h"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"

namespace linkwise::work {

void check_train_options(const TrainOptions& o) {
  if (o.was_given("--tokens") && !(o.tokens > 0 && std::isfinite(o.tokens)))
    throw InputError(fmt::format("--tokens must be a positive number, not '{}'", o.tokens));
  if (o.validation) {
    for (const std::string& n : o.given) {
      if (n == "--validation" || n == "--json" || n == "-o,--output" || n == "--help") continue;
      throw InputError(fmt::format(
          "--validation runs each published case on its own machine and plan; it takes no {}", n));
    }
    return;
  }
  if (o.scaling && o.was_given("--plan"))
    throw InputError(
        "--scaling searches the best plan at each GPU count itself; it takes no --plan");
  if (o.scaling && o.was_given("--top"))
    throw InputError("--scaling shows one plan per GPU count; it takes no --top");
  if (o.mode != "lora")
    for (const char* f : {"--lora-rank", "--lora-targets", "--base-weights"})
      if (o.was_given(f)) throw InputError(fmt::format("{} applies only with --mode lora", f));
}

Job make_train_job(const TrainOptions& o) {
  Job j;
  j.mode = parse_mode(o.mode);
  j.precision = parse_precision(o.precision);
  j.recompute = parse_recompute(o.recompute);
  j.seq = o.seq;
  j.micro_batch = o.micro_batch;
  j.global_batch = o.global_batch;
  j.flash_attention = !o.no_flash;
  j.offload_optimizer = o.offload;
  j.framework = parse_framework(o.framework);
  j.base_weights = parse_base_weights(o.base_weights);
  j.grad_overlap = parse_switch(o.grad_overlap, "--grad-overlap", "on", "off");
  j.fused_elementwise = parse_switch(o.elementwise, "--elementwise", "fused", "eager");
  j.lora.rank = o.lora_rank;
  j.lora.targets.clear();
  std::stringstream ss(o.lora_targets);
  for (std::string t; std::getline(ss, t, ',');)
    if (!t.empty()) j.lora.targets.push_back(t);
  return j;
}

TrainResult run_train(const TrainOptions& o) {
  check_train_options(o);
  TrainResult res;
  if (o.validation) {
    res.kind = TrainResult::Kind::kValidation;
    res.validation = run_validation();
    return res;
  }
  if (o.chassis.empty())
    throw InputError("train needs a CHASSIS (a preset name or a chassis file)");
  if (o.model.empty())
    throw InputError("train needs --model (a preset such as llama3-70b, or a model YAML file)");
  auto chassis = topo::load_chassis(o.chassis, o.nodes, topo::link_rates(o.as_designed));
  return run_train(o, chassis);
}

TrainResult run_train(const TrainOptions& o, const topo::Chassis& chassis) {
  check_train_options(o);
  TrainResult res;
  if (o.model.empty())
    throw InputError("train needs --model (a preset such as llama3-70b, or a model YAML file)");
  StepModel sm(chassis, find_model(o.model), make_train_job(o));
  TrainSetup& s = res.setup;
  s.model_id = sm.model().id;
  s.model_name = sm.model().name;
  s.model_params = sm.model().total_params();
  s.chassis_name = sm.chassis().name();
  s.chassis_gpus = static_cast<int>(sm.chassis().gpus().size());
  s.gpu_part = sm.gpu().part;
  s.job = sm.job();
  s.notes = sm.notes();
  if (auto links = topo::link_rates_note(chassis); !links.empty()) s.notes.push_back(links);
  if (o.scaling) {
    res.kind = TrainResult::Kind::kScaling;
    res.scaling = scaling(sm);
    res.verdict = scaling_verdict(res.scaling);
    return res;
  }
  res.kind = TrainResult::Kind::kStep;
  if (o.plan == "auto") {
    SearchOptions so = SearchOptions::everything();
    so.top = o.top;
    if (o.was_given("--recompute")) so.recompute.clear();
    if (o.was_given("--offload")) so.offload.clear();
    if (o.was_given("--framework")) so.frameworks.clear();
    if (o.was_given("--grad-overlap")) so.grad_overlap.clear();
    if (o.was_given("--elementwise")) so.elementwise.clear();
    res.search = search_plans(sm, so);
    res.step = res.search->best.front();
    res.why_first = res.search->best.size() > 1
                        ? why_first_beats_second(res.search->best[0], res.search->best[1])
                        : "";
  } else {
    res.step = sm.simulate(parse_plan(o.plan));
  }
  if (o.checkpoint_every > 0) {
    res.checkpoint = checkpoint_cost(sm, res.step, o.checkpoint_every, !o.checkpoint_unsharded,
                                     o.checkpoint_async);
    res.checkpoint_every = o.checkpoint_every;
  }
  if (o.tokens > 0) {
    res.tokens = o.tokens;
    res.run_time_s = time_to_train_s(res.step, o.tokens);
  }
  return res;
}

}  // namespace linkwise::work
