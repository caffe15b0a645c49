// work::run_train: the training run behind `linkwise train` (options -> result, no rendering).
#include "linkwise/work/train_run.h"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "linkwise/topo/chassis.h"
#include "linkwise/topo/chassis_options.h"
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
  if (o.was_given("--recompute-every") && o.recompute_every > 1 && o.recompute != "full")
    throw InputError(fmt::format(
        "--recompute-every {} checkpoints one block in {}: it needs --recompute full, not '{}'",
        o.recompute_every, o.recompute_every, o.recompute));
  if (o.fp8_gather && (o.precision != "fp8" || o.framework != "fsdp"))
    throw InputError(fmt::format(
        "--fp8-gather gathers FSDP2's float8 weights (torchao): it needs --precision fp8 and "
        "--framework fsdp, not '{}' and '{}'",
        o.precision, o.framework));
  if (o.recompute == "op" && o.framework != "fsdp")
    throw InputError(fmt::format(
        "--recompute op is torchtitan's per-op checkpointing (FSDP2): it needs --framework fsdp, "
        "not '{}'",
        o.framework));
  if (o.framework == "hf" && o.master_weights == "bf16")
    throw InputError(
        "--master-weights bf16 does not apply to --framework hf, whose model keeps fp32 weights "
        "under autocast (docs/training.md)");
}

Job make_train_job(const TrainOptions& o) {
  Job j;
  j.mode = parse_mode(o.mode);
  j.precision = parse_precision(o.precision);
  j.recompute = parse_recompute(o.recompute);
  j.recompute_every = o.recompute_every;
  j.fp8_gather = o.fp8_gather;
  j.seq = o.seq;
  j.micro_batch = o.micro_batch;
  j.global_batch = o.global_batch;
  j.flash_attention = !o.no_flash;
  j.offload_optimizer = o.offload;
  j.framework = parse_framework(o.framework);
  j.base_weights = parse_base_weights(o.base_weights);
  j.grad_overlap = parse_switch(o.grad_overlap, "--grad-overlap", "on", "off");
  j.fused_elementwise = parse_switch(o.elementwise, "--elementwise", "fused", "eager");
  j.tp_overlap = parse_switch(o.tp_overlap, "--tp-overlap", "on", "off");
  j.grad_fp32 = parse_switch(o.grad_reduce, "--grad-reduce", "fp32", "half");
  j.cudnn_attention = parse_switch(o.attention, "--attention", "cudnn", "flash");
  j.recompute_early_stop =
      parse_switch(o.recompute_early_stop, "--recompute-early-stop", "on", "off");
  j.fused_optimizer = parse_switch(o.optimizer_impl, "--optimizer-impl", "fused", "foreach");
  j.fp32_master = parse_switch(o.master_weights, "--master-weights", "fp32", "bf16");
  j.grad_sync_last = parse_switch(o.grad_sync, "--grad-sync", "last", "every");
  j.tp_per_projection =
      parse_switch(o.tp_collectives, "--tp-collectives", "per-projection", "per-block");
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
    if (o.was_given("--tp-overlap")) so.tp_overlap.clear();
    for (auto [open, name] : {std::pair{!so.recompute.empty(), "recompute"},
                              {!so.offload.empty(), "optimizer offload"},
                              {!so.frameworks.empty(), "framework"},
                              {!so.grad_overlap.empty(), "gradient overlap"},
                              {!so.elementwise.empty(), "element-wise fusion"},
                              {!so.tp_overlap.empty(), "TP overlap"}})
      if (open) res.setup.searched.push_back(name);
    res.search = search_plans(sm, so);
    res.step = res.search->best.front();
    res.why_first = res.search->best.size() > 1
                        ? why_first_beats_second(res.search->best[0], res.search->best[1])
                        : "";
    // the search simulates its best simulate_top plans whatever --top is; list as many as asked
    if (static_cast<int>(res.search->best.size()) > o.top) res.search->best.resize(o.top);
  } else {
    res.step = sm.simulate(parse_plan(o.plan));
  }
  if (const MemoryBreakdown& m = res.step.memory; near_full_memory(m))
    s.notes.push_back(fmt::format(
        "the plan's peak, {:.1f} of {:.1f} GiB a GPU, leaves under {:.0f}% free: PyTorch's "
        "caching allocator may flush and retry its allocations (num_alloc_retries), which the "
        "step time does not include",
        m.total / (1ull << 30), m.capacity / (1ull << 30), 100 * kAllocatorMarginShare));
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

const std::vector<OptionSpec<TrainOptions>>& train_options() {
  using T = TrainOptions;
  using Spec = OptionSpec<T>;
  static const std::vector<Spec> specs = {
      topo::chassis_option(at<&T::chassis>),
      {"--model", at<&T::model>,
       "Model preset (llama2-7b/13b/70b, llama3-8b/70b/405b, mixtral-8x7b, gpt3-175b) or YAML "
       "file"},
      {"--mode", at<&T::mode>, "pretrain, full (full fine-tune) or lora"},
      {"--precision", at<&T::precision>,
       "bf16, fp16 or fp8 (default auto: bf16, or fp16 on GPUs without BF16 such as V100)"},
      Spec{"--seq", at<&T::seq>, "Sequence length in tokens (default: the model's)"}.range(1,
                                                                                           1 << 24),
      Spec{"--micro-batch", at<&T::micro_batch>, "Sequences per micro-batch"}.range(1, 1 << 16),
      Spec{"--global-batch", at<&T::global_batch>,
           "Sequences per optimizer step (default: 4M tokens pre-training, 64 fine-tuning)"}
          .range(1, 1 << 24),
      {"--recompute", at<&T::recompute>,
       "Activation recomputation: none, selective, full or op (torchtitan's per-op policy, "
       "--framework fsdp)"},
      Spec{"--recompute-every", at<&T::recompute_every>,
           "With --recompute full: one block in N is checkpointed, the others keep their "
           "activations (torchtitan selective_ac_option N; default 1: every block)"}
          .range(1, 1 << 16),
      {"--fp8-gather", at<&T::fp8_gather>,
       "With --precision fp8 --framework fsdp: FSDP all-gathers each block's weights in fp8 "
       "(torchao enable_fsdp_float8_all_gather)"},
      Spec{"--no-flash-attention", at<&T::no_flash>,
           "Unfused attention: the s x s scores are stored and moved"}
          .python("no_flash"),
      {"--framework", at<&T::framework>,
       "megatron, fsdp, fsdp1, deepspeed, deepspeed-0.3 or hf: how the plan's collectives run "
       "(docs/training.md)"},
      {"--grad-overlap", at<&T::grad_overlap>,
       "on or off: gradient reduction beside the backward (default: the framework's)"},
      {"--elementwise", at<&T::elementwise>,
       "fused or eager norms and activations (default: the framework's)"},
      {"--tp-overlap", at<&T::tp_overlap>,
       "on or off: TP all-gathers/reduce-scatters pipelined with the GEMMs beside them "
       "(Megatron --tp-comm-overlap, PyTorch async TP; default off)"},
      {"--grad-reduce", at<&T::grad_reduce>,
       "fp32 or half: gradients reduced in fp32 or in the job's 16-bit type (FSDP reduce_dtype, "
       "Megatron --accumulate-allreduce-grads-in-fp32; default: the framework's)"},
      {"--attention", at<&T::attention>,
       "cudnn or flash: the fused attention kernel on Hopper, cuDNN's (Transformer Engine's "
       "default on sm90) or FlashAttention-2 (NVTE_FUSED_ATTN=0, PyTorch SDPA flash; default: the "
       "framework's)"},
      {"--recompute-early-stop", at<&T::recompute_early_stop>,
       "on or off: full recomputation stops before each block's last GEMM (PyTorch 2.1+ "
       "non-reentrant checkpoint) or reruns the whole block (reentrant, PyTorch 2.0 and earlier; "
       "default: the framework's)"},
      {"--optimizer-impl", at<&T::optimizer_impl>,
       "fused or foreach: PyTorch's AdamW as one fused kernel (torchtitan's default) or one kernel "
       "per tensor operation (foreach, per-parameter: Composer, torch.optim's default); fsdp, "
       "fsdp1 and hf only (default: the framework's)"},
      {"--master-weights", at<&T::master_weights>,
       "fp32 or bf16: an fp32 master copy and fp32 Adam moments beside the bf16 weights (mixed "
       "precision, default), or the bf16 weights stepped in place with bf16 moments (pure bf16)"},
      {"--grad-sync", at<&T::grad_sync>,
       "every or last: ZeRO-3 gradients reduce-scattered after every micro-batch, or only after "
       "the last, the unsharded gradients held until then (FSDP no_sync, FSDP2 "
       "set_requires_gradient_sync(False); default: the framework's, last for hf)"},
      {"--tp-collectives", at<&T::tp_collectives>,
       "per-block or per-projection: with sequence parallelism, the input the QKV (and gate/up) "
       "projections share gathered once (default) or once per projection, and their input "
       "gradients reduce-scattered likewise (DTensor ColwiseParallel on separate q, k, v, gate, up "
       "without PrepareModuleInput)"},
      Spec{"--checkpoint-every", at<&T::checkpoint_every>,
           "Write a checkpoint every N steps: its host traffic and share of wall time"}
          .range(1, 1 << 30),
      {"--checkpoint-unsharded", at<&T::checkpoint_unsharded>,
       "One GPU per box writes the checkpoint (default: every GPU its shard)"},
      {"--checkpoint-async", at<&T::checkpoint_async>,
       "The drive writes overlap the following steps (only the copy to host memory blocks)"},
      {"--offload", at<&T::offload>, "Optimizer states and step on the CPU (ZeRO-Offload)"},
      Spec{"--lora-rank", at<&T::lora_rank>, "LoRA rank"}.range(1, 1 << 16),
      {"--lora-targets", at<&T::lora_targets>, "Matrices with adapters, from q,k,v,o,gate,up,down"},
      {"--base-weights", at<&T::base_weights>,
       "LoRA's frozen base: bf16, fp8 or nf4 (QLoRA); default fp8 for fp8 jobs"},
      {"--plan", at<&T::plan>,
       "tp=..,pp=..,dp=..,zero=..[,cp=..,ep=..,vpp=..,mb=..,sp=off,shard=..,order=dp,tp,pp] or "
       "auto (cp=N: context parallelism, ring attention; shard=N with zero=3: HSDP)"},
      Spec{"--top", at<&T::top>, "Plans listed by --plan auto"}.range(1, 100),
      {"--tokens", at<&T::tokens>, "Tokens to train: prints the run's wall-clock time (e.g. 1e12)"},
      topo::nodes_option(at<&T::nodes>),
      topo::as_designed_option(at<&T::as_designed>),
      {"--scaling", at<&T::scaling>,
       "Best plan and scaling efficiency from 1 GPU up to the whole chassis"},
      {"--validation", at<&T::validation>,
       "Compare predictions with published measurements (docs/VALIDATION.md)"},
  };
  return specs;
}

}  // namespace linkwise::work
