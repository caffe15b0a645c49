// linkwise train: step time, breakdown, memory, busiest links and time to train of a training job.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "commands.h"
#include "linkwise/report/json.h"
#include "linkwise/report/table.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"
#include "linkwise/util/text.h"
#include "linkwise/work/search.h"
#include "linkwise/work/validation.h"
#include "linkwise/report/train_report.h"
#include "linkwise/work/checkpoint.h"

namespace linkwise::cli {

namespace {

struct TrainOpts {
  std::string chassis, model = "", mode = "pretrain", precision = "auto", recompute = "selective";
  std::string plan = "auto", lora_targets = "q,k,v,o", output, tokens;
  std::string framework = "megatron", grad_overlap = "default", elementwise = "default", base_weights = "auto";
  int checkpoint_every = 0;
  bool checkpoint_unsharded = false, checkpoint_async = false;
  int seq = 0, micro_batch = 1, global_batch = 0, nodes = 0, lora_rank = 16, top = 5;
  bool json = false, as_designed = false, scaling = false, offload = false, no_flash = false, validation = false;
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
  if (o.scaling && o.given("--plan"))
    throw InputError("--scaling searches the best plan at each GPU count itself; it takes no --plan");
  if (o.scaling && o.given("--top")) throw InputError("--scaling shows one plan per GPU count; it takes no --top");
  if (o.mode != "lora")
    for (const char* f : {"--lora-rank", "--lora-targets", "--base-weights"})
      if (o.given(f)) throw InputError(fmt::format("{} applies only with --mode lora", f));
}

double gib(double b) { return b / (1ull << 30); }
std::string pct(double x) { return fmt::format("{:.1f}%", 100 * x); }

std::string human_time(double s) {
  if (s < 120) return fmt::format("{:.1f} s", s);
  if (s < 7200) return fmt::format("{:.1f} min", s / 60);
  if (s < 172800) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} days", s / 86400);
}

nlohmann::json to_json(const work::StepResult& r) {
  const auto& b = r.breakdown;
  const auto& m = r.memory;
  nlohmann::json links = nlohmann::json::array();
  for (const auto& l : r.links)
    links.push_back({{"link", l.link}, {"tech", l.tech}, {"busy_fraction", l.busy_fraction},
                     {"bytes_per_step", l.bytes}, {"traffic", l.traffic}});
  return {{"plan", r.plan.str()},
          {"gpus", r.gpus},
          {"simulated", r.simulated},
          {"micro_batches", r.micro_batches},
          {"step_time_s", r.step_time_s},
          {"tokens_per_step", r.tokens_per_step},
          {"tokens_per_s", r.tokens_per_s},
          {"mfu", r.mfu},
          {"hfu", r.hfu},
          {"memory_per_gpu_GiB", gib(m.total)},
          {"memory_capacity_GiB", gib(m.capacity)},
          {"headroom_GiB", gib(m.headroom())},
          {"fits", m.fits},
          {"memory", {{"weights_GiB", gib(m.weights)}, {"gradients_GiB", gib(m.gradients)},
                      {"optimizer_GiB", gib(m.optimizer)}, {"activations_GiB", gib(m.activations)},
                      {"lora_GiB", gib(m.lora)}, {"buffers_GiB", gib(m.buffers)}, {"host_GiB", gib(m.host_bytes)}}},
          {"breakdown", {{"compute_s", b.compute_s}, {"exposed_comm_s", b.exposed_comm_s}, {"bubble_s", b.bubble_s},
                         {"contention_s", b.contention_s}, {"io_s", b.io_s}, {"optimizer_s", b.optimizer_s},
                         {"exposed_comm_by_kind_s", {{"tp", b.tp_s}, {"ep", b.ep_s}, {"pp", b.pp_s}, {"dp", b.dp_s},
                                                     {"zero", b.zero_s}}}}},
          {"links", links},
          {"bottleneck", r.bottleneck}};
}

std::string step_text(const work::StepResult& r, int max_links) {
  std::ostringstream o;
  const auto& b = r.breakdown;
  double T = r.step_time_s;
  o << fmt::format("plan {} on {} GPUs ({}), {} micro-batches per step\n\n", r.plan.str(), r.gpus,
                   r.simulated ? "simulated" : "estimated", r.micro_batches);
  report::Table t;
  t.header({"step", "seconds", "share"});
  t.row({"step time", fmt::format("{:.4g}", T), "100%"});
  t.row({"  compute", fmt::format("{:.4g}", b.compute_s), pct(b.compute_s / T)});
  t.row({"  exposed communication", fmt::format("{:.4g}", b.exposed_comm_s), pct(b.exposed_comm_s / T)});
  for (auto [name, v] : std::vector<std::pair<const char*, double>>{{"tensor parallel", b.tp_s}, {"expert all-to-all", b.ep_s},
                                                                    {"pipeline send/recv", b.pp_s}, {"data-parallel gradients", b.dp_s},
                                                                    {"ZeRO gathers", b.zero_s}})
    if (v > 0) t.row({std::string("    ") + name, fmt::format("{:.4g}", v), pct(v / T)});
  if (b.contention_s > 0)
    t.row({"  compute slowed by NCCL kernels", fmt::format("{:.4g}", b.contention_s), pct(b.contention_s / T)});
  t.row({"  pipeline bubble", fmt::format("{:.4g}", b.bubble_s), pct(b.bubble_s / T)});
  t.row({"  host I/O (offload)", fmt::format("{:.4g}", b.io_s), pct(b.io_s / T)});
  o << t.render() << "\n";
  o << fmt::format("tokens/s {:.0f}   MFU {}   HFU {}   model TFLOP/s per GPU {:.0f}\n\n", r.tokens_per_s, pct(r.mfu),
                   pct(r.hfu), r.model_tflops_per_gpu);
  const auto& m = r.memory;
  report::Table mt;
  mt.header({"memory per GPU", "GiB"});
  for (auto [name, v] : std::vector<std::pair<const char*, double>>{{"weights", m.weights}, {"gradients", m.gradients},
                                                                    {"optimizer states", m.optimizer}, {"activations", m.activations},
                                                                    {"LoRA adapters", m.lora}, {"buffers and runtime", m.buffers}})
    if (v > 0) mt.row({name, fmt::format("{:.1f}", gib(v))});
  mt.row({"total", fmt::format("{:.1f} of {:.1f}", gib(m.total), gib(m.capacity))});
  mt.row({m.fits ? "fits, headroom" : "DOES NOT FIT, short by", fmt::format("{:.1f}", gib(std::abs(m.headroom())))});
  if (m.host_bytes > 0) mt.row({"host memory (offloaded)", fmt::format("{:.1f}", gib(m.host_bytes))});
  o << mt.render() << "\n";
  if (!r.links.empty()) {
    report::Table lt;
    lt.header({"busiest links", "technology", "busy", "GB/step", "traffic"});
    for (int i = 0; i < std::min<int>(max_links, r.links.size()); ++i) {
      const auto& l = r.links[i];
      lt.row({l.link, l.tech, pct(l.busy_fraction), fmt::format("{:.1f}", l.bytes / 1e9), l.traffic});
    }
    o << lt.render() << "\n";
  }
  o << "bottleneck: " << r.bottleneck << "\n";
  return o.str();
}

std::string header_text(const work::StepModel& sm) {
  const auto& m = sm.model();
  const auto& j = sm.job();
  std::string mode = work::to_string(j.mode);
  if (j.mode == work::Mode::kLora)
    mode += fmt::format(" rank {} on {}", j.lora.rank, join(j.lora.targets, ","));
  std::string notes;
  for (const auto& n : sm.notes()) notes += "note: " + n + "\n";
  if (auto links = topo::link_rates_note(sm.chassis()); !links.empty()) notes += "note: " + links + "\n";
  return fmt::format("{} ({:.1f}B parameters) on {} ({} x {})\njob: {}, {}, seq {}, global batch {} sequences "
                     "({:.2f}M tokens), recompute {}{}{}, {}\n{}\n",
                     m.name, m.total_params() / 1e9, sm.chassis().name(), sm.chassis().gpus().size(), sm.gpu().part,
                     mode, work::to_string(j.precision), j.seq, j.global_batch,
                     static_cast<double>(j.global_batch) * j.seq / 1e6, work::to_string(j.recompute),
                     j.flash_attention ? ", fused attention" : "", j.offload_optimizer ? ", optimizer offloaded to CPU" : "",
                     work::to_string(j.framework), notes);
}

work::Job make_job(const TrainOpts& o) {
  work::Job j;
  j.mode = work::parse_mode(o.mode);
  j.precision = work::parse_precision(o.precision);
  j.recompute = work::parse_recompute(o.recompute);
  j.seq = o.seq;
  j.micro_batch = o.micro_batch;
  j.global_batch = o.global_batch;
  j.flash_attention = !o.no_flash;
  j.offload_optimizer = o.offload;
  j.framework = work::parse_framework(o.framework);
  j.base_weights = work::parse_base_weights(o.base_weights);
  j.grad_overlap = work::parse_switch(o.grad_overlap, "--grad-overlap", "on", "off");
  j.fused_elementwise = work::parse_switch(o.elementwise, "--elementwise", "fused", "eager");
  j.lora.rank = o.lora_rank;
  j.lora.targets.clear();
  std::stringstream ss(o.lora_targets);
  for (std::string t; std::getline(ss, t, ',');)
    if (!t.empty()) j.lora.targets.push_back(t);
  return j;
}

int run_train(const TrainOpts& o) {
  check_combinations(o);
  if (o.validation) {
    auto rows = work::run_validation();
    emit(o.json ? report::validation_json(rows).dump(2) + "\n" : report::validation_markdown(rows), o.output);
    return 0;
  }
  if (o.chassis.empty()) throw InputError("train needs a CHASSIS (a preset name or a chassis file)");
  if (o.model.empty()) throw InputError("train needs --model (a preset such as llama3-70b, or a model YAML file)");
  auto chassis = topo::load_chassis(o.chassis, o.nodes,
                                    o.as_designed ? topo::LinkRates::kAsDesigned : topo::LinkRates::kAsBuilt);
  work::StepModel sm(chassis, work::find_model(o.model), make_job(o));
  double tokens = o.tokens.empty() ? 0 : std::stod(o.tokens);
  nlohmann::json j;
  std::string text = header_text(sm);
  if (o.scaling) {
    auto pts = work::scaling(sm);
    report::Table t;
    t.header({"GPUs", "best plan", "tokens/s", "tokens/s per GPU", "scaling efficiency", "MFU"});
    j["scaling"] = nlohmann::json::array();
    for (const auto& p : pts) {
      if (!p.fits) {
        t.row({std::to_string(p.gpus), "does not fit", "", "", "", ""});
        j["scaling"].push_back({{"gpus", p.gpus}, {"fits", false}});
        continue;
      }
      t.row({std::to_string(p.gpus), p.best.plan.str(), fmt::format("{:.0f}", p.best.tokens_per_s),
             fmt::format("{:.0f}", p.best.tokens_per_s / p.gpus), pct(p.efficiency), pct(p.best.mfu)});
      j["scaling"].push_back({{"gpus", p.gpus}, {"fits", true}, {"plan", p.best.plan.str()},
                              {"tokens_per_s", p.best.tokens_per_s}, {"efficiency", p.efficiency}, {"mfu", p.best.mfu}});
    }
    text += t.render();
    auto verdict = work::scaling_verdict(pts);
    text += report::scaling_verdict_text(verdict, pts.empty() ? 0 : pts.back().gpus);
    j["verdict"] = report::scaling_verdict_json(verdict);
    emit(o.json ? report::with_schema(j).dump(2) + "\n" : text, o.output);
    return 0;
  }
  work::StepResult best;
  if (o.plan == "auto") {
    work::SearchOptions so = work::SearchOptions::everything();
    so.top = o.top;
    if (o.given("--recompute")) so.recompute.clear();
    if (o.given("--offload")) so.offload.clear();
    if (o.given("--framework")) so.frameworks.clear();
    if (o.given("--grad-overlap")) so.grad_overlap.clear();
    if (o.given("--elementwise")) so.elementwise.clear();
    auto r = work::search_plans(sm, so);
    best = r.best.front();
    report::Table t;
    t.header({"rank", "plan", "step s", "tokens/s", "MFU", "GiB/GPU", "how"});
    j["candidates"] = {{"enumerated", r.candidates}, {"runnable", r.runnable}, {"fit", r.fitting}};
    j["ranking"] = nlohmann::json::array();
    for (std::size_t i = 0; i < r.best.size(); ++i) {
      const auto& x = r.best[i];
      t.row({std::to_string(i + 1), x.plan.str(), fmt::format("{:.4g}", x.step_time_s), fmt::format("{:.0f}", x.tokens_per_s),
             pct(x.mfu), fmt::format("{:.1f}", gib(x.memory.total)),
             report::job_choices(x.job) + (x.simulated ? ", simulated" : ", estimated")});
      j["ranking"].push_back({{"plan", x.plan.str()}, {"step_time_s", x.step_time_s}, {"tokens_per_s", x.tokens_per_s},
                              {"mfu", x.mfu}, {"memory_per_gpu_GiB", gib(x.memory.total)}, {"simulated", x.simulated},
                              {"job", report::job_choices(x.job)}});
    }
    text += fmt::format("plan search: {} plans enumerated, {} can run, {} fit in memory; best {}:\n", r.candidates,
                        r.runnable, r.fitting, r.best.size());
    text += t.render();
    text += report::search_notes_text(r);
    j["why_first"] = r.best.size() > 1 ? work::why_first_beats_second(r.best[0], r.best[1]) : "";
    j["passed_over"] = r.passed_over;
    text += "\n";
  } else {
    best = sm.simulate(work::parse_plan(o.plan));
  }
  text += step_text(best, 8);
  if (o.checkpoint_every > 0) {
    auto ck = work::checkpoint_cost(sm, best, o.checkpoint_every, !o.checkpoint_unsharded, o.checkpoint_async);
    text += report::checkpoint_text(ck, o.checkpoint_every);
    j["checkpoint"] = report::checkpoint_json(ck, o.checkpoint_every);
  }
  nlohmann::json s = to_json(best);
  for (auto it = s.begin(); it != s.end(); ++it) j[it.key()] = it.value();
  j["chassis"] = chassis.name();
  j["model"] = sm.model().id;
  if (tokens > 0) {
    double t = work::time_to_train_s(best, tokens);
    text += fmt::format("time to train {:.3g} tokens: {} ({:.0f} steps)\n", tokens, human_time(t),
                        tokens / best.tokens_per_step);
    j["tokens"] = tokens;
    j["run_time_s"] = t;
  }
  if (!best.memory.fits) {  // an explicit plan that does not fit: the report on stdout, no output file
    if (o.output.empty()) emit(o.json ? report::with_schema(j).dump(2) + "\n" : text, "");
    std::fflush(stdout);
    fmt::print(stderr, "linkwise: error: plan {} does not fit: it needs {:.1f} GiB per GPU of {:.1f} GiB{}\n",
               best.plan.str(), gib(best.memory.total), gib(best.memory.capacity),
               o.output.empty() ? "" : fmt::format("; {} not written", o.output));
    return 2;
  }
  emit(o.json ? report::with_schema(j).dump(2) + "\n" : text, o.output);
  return 0;
}

}  // namespace

Handler setup_train(CLI::App& sub) {
  auto o = std::make_shared<TrainOpts>();
  sub.add_option("CHASSIS", o->chassis, "A preset name (linkwise presets) or a chassis YAML file");
  sub.add_option("--model", o->model, "Model preset (llama2-7b/13b/70b, llama3-8b/70b/405b, mixtral-8x7b, gpt3-175b) or YAML file");
  sub.add_option("--mode", o->mode, "pretrain, full (full fine-tune) or lora");
  sub.add_option("--precision", o->precision,
                 "bf16, fp16 or fp8 (default auto: bf16, or fp16 on GPUs without BF16 such as V100)");
  sub.add_option("--seq", o->seq, "Sequence length in tokens (default: the model's)")->check(CLI::Range(1, 1 << 24));
  sub.add_option("--micro-batch", o->micro_batch, "Sequences per micro-batch")->check(CLI::Range(1, 1 << 16));
  sub.add_option("--global-batch", o->global_batch, "Sequences per optimizer step (default: 4M tokens pre-training, 64 fine-tuning)")
      ->check(CLI::Range(1, 1 << 24));
  sub.add_option("--recompute", o->recompute, "Activation recomputation: none, selective or full");
  sub.add_flag("--no-flash-attention", o->no_flash, "Unfused attention: the s x s scores are stored and moved");
  sub.add_option("--framework", o->framework, "megatron, fsdp, deepspeed or deepspeed-0.3: how the plan's collectives run (docs/training.md)");
  sub.add_option("--grad-overlap", o->grad_overlap, "on or off: gradient reduction beside the backward (default: the framework's)");
  sub.add_option("--elementwise", o->elementwise, "fused or eager norms and activations (default: the framework's)");
  sub.add_option("--checkpoint-every", o->checkpoint_every, "Write a checkpoint every N steps: its host traffic and share of wall time")
      ->check(CLI::Range(1, 1 << 30));
  sub.add_flag("--checkpoint-unsharded", o->checkpoint_unsharded, "One GPU per box writes the checkpoint (default: every GPU its shard)");
  sub.add_flag("--checkpoint-async", o->checkpoint_async, "The drive writes overlap the following steps (only the copy to host memory blocks)");
  sub.add_flag("--offload", o->offload, "Optimizer states and step on the CPU (ZeRO-Offload)");
  sub.add_option("--lora-rank", o->lora_rank, "LoRA rank")->check(CLI::Range(1, 1 << 16));
  sub.add_option("--lora-targets", o->lora_targets, "Matrices with adapters, from q,k,v,o,gate,up,down");
  sub.add_option("--base-weights", o->base_weights, "LoRA's frozen base: bf16, fp8 or nf4 (QLoRA); default fp8 for fp8 jobs");
  sub.add_option("--plan", o->plan, "tp=..,pp=..,dp=..,zero=..[,ep=..,vpp=..,mb=..,sp=off,order=dp,tp,pp] or auto");
  sub.add_option("--top", o->top, "Plans listed by --plan auto")->check(CLI::Range(1, 100));
  sub.add_option("--tokens", o->tokens, "Tokens to train: prints the run's wall-clock time (e.g. 1e12)")
      ->check([](const std::string& s) {
        try {
          std::size_t pos = 0;
          double v = std::stod(s, &pos);
          return pos == s.size() && v > 0 && std::isfinite(v) ? std::string() : "--tokens must be a positive number, not '" + s + "'";
        } catch (const std::exception&) {
          return "--tokens must be a positive number, not '" + s + "'";
        }
      });
  add_nodes_flag(sub, o->nodes);
  add_as_designed_flag(sub, o->as_designed);
  sub.add_flag("--scaling", o->scaling, "Best plan and scaling efficiency from 1 GPU up to the whole chassis");
  sub.add_flag("--validation", o->validation, "Compare predictions with published measurements (docs/VALIDATION.md)");
  sub.add_flag("--json", o->json, "Print as JSON");
  sub.add_option("-o,--output", o->output, "Write to this file (atomically) instead of standard output");
  o->app = &sub;
  return [o] { return run_train(*o); };
}

}  // namespace linkwise::cli
