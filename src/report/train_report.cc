#include "linkwise/report/train_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "linkwise/report/json.h"
#include "linkwise/report/table.h"
#include "linkwise/util/text.h"
#include "linkwise/util/verbosity.h"

namespace linkwise::report {

std::string scaling_verdict_text(const work::ScalingVerdict& v, int largest) {
  std::string s;
  if (v.counts_that_fit == 0) {
    s = fmt::format(
        "no GPU count up to {} fits this job with its own choices: no scaling to show (--plan auto "
        "also tries full recompute, optimizer offload and every framework)\n",
        largest);
  } else if (v.counts_that_fit == 1) {
    s = fmt::format("only {} GPUs fit this job: no scaling to show\n", v.largest_fit);
  } else if (v.to == 0 && v.rise_to == 0) {
    s = fmt::format("per-GPU throughput holds within 2 % up to {} GPUs\n", v.largest_fit);
  } else if (v.to == 0) {
    s = fmt::format(
        "per-GPU throughput falls by 2 % at no doubling up to {} GPUs; it rises most from {} to {} "
        "GPUs ({:+.1f} %): the best plans differ (see the table)\n",
        v.largest_fit, v.rise_from, v.rise_to, 100 * v.per_gpu_rise);
  } else {
    s = fmt::format(
        "per-GPU throughput falls most from {} to {} GPUs ({:+.1f} %); what grew most: {}, {:.0f} "
        "% -> {:.0f} % "
        "of the step",
        v.from, v.to, 100 * v.per_gpu_change, v.term, 100 * v.term_share_from,
        100 * v.term_share_to);
    if (v.link.empty())
      s += "; not link traffic";
    else
      s += fmt::format("; {}: {} ({}), {:.0f}% of its capacity used over the step (busy {:.0f}%){}",
                       v.link_carries_term ? "the link that carries it" : "fullest link", v.link,
                       v.tech, 100 * v.link_utilisation, 100 * v.link_busy,
                       v.link_carries_term ? "" : ", mostly " + v.traffic + " traffic");
    s += fmt::format(
        "\neach GPU added from {} to {} yields {:.0f} % of what a GPU yields at {} (total tokens/s "
        "{:+.0f} %)\n",
        v.from, v.to, 100 * v.added_gpu_yield, v.from,
        100 * v.added_gpu_yield * (v.to - v.from) / v.from);
  }
  if (v.stops_paying > 0)
    s += fmt::format(
        "adding GPUs stops paying at {} GPUs: total tokens/s no higher than at half as many\n",
        v.stops_paying);
  return s;
}

nlohmann::json scaling_verdict_json(const work::ScalingVerdict& v) {
  nlohmann::json j = {{"falls_from", v.from},
                      {"falls_to", v.to},
                      {"per_gpu_change", v.per_gpu_change},
                      {"term", v.term},
                      {"term_share_from", v.term_share_from},
                      {"term_share_to", v.term_share_to},
                      {"link", v.link},
                      {"tech", v.tech},
                      {"traffic", v.traffic},
                      {"link_carries_term", v.link_carries_term},
                      {"added_gpu_yield", v.added_gpu_yield},
                      {"link_utilisation", v.link_utilisation},
                      {"link_busy_fraction", v.link_busy},
                      {"stops_paying_at", v.stops_paying},
                      {"counts_that_fit", v.counts_that_fit},
                      {"rises_from", v.rise_from},
                      {"rises_to", v.rise_to},
                      {"per_gpu_rise", v.per_gpu_rise}};
  return j;
}

std::string checkpoint_text(const work::CheckpointCost& c, int every) {
  return fmt::format(
      "checkpoint every {} steps: {:.1f} GB ({:.1f} GB per box); GPUs to host memory {:.3g} s over "
      "the "
      "PCIe tree, to {} {:.3g} s; the step waits {:.3g} s: {:.2f} % of wall time; dataset reads "
      "{:.1f} MB per step per box\n",
      every, c.bytes / 1e9, c.box_bytes / 1e9, c.d2h_s, c.sink, c.write_s, c.exposed_s,
      100 * c.share, c.read_bytes_per_step / 1e6);
}

nlohmann::json checkpoint_json(const work::CheckpointCost& c, int every) {
  return {{"every_steps", every},
          {"bytes", c.bytes},
          {"box_bytes", c.box_bytes},
          {"d2h_s", c.d2h_s},
          {"write_s", c.write_s},
          {"sink", c.sink},
          {"exposed_s", c.exposed_s},
          {"share", c.share},
          {"read_bytes_per_step", c.read_bytes_per_step}};
}

std::string job_choices(const work::Job& job) {
  std::string overlap = job.grad_overlap == work::Switch::kDefault ? ""
                        : job.grad_overlap == work::Switch::kOn    ? ", overlap on"
                                                                   : ", overlap off";
  std::string el = job.fused_elementwise == work::Switch::kDefault ? ""
                   : job.fused_elementwise == work::Switch::kOn    ? ", fused"
                                                                   : ", eager";
  std::string tpo = job.tp_overlap == work::Switch::kDefault ? ""
                    : job.tp_overlap == work::Switch::kOn    ? ", TP overlap on"
                                                             : ", TP overlap off";
  std::string red = job.grad_fp32 == work::Switch::kDefault ? ""
                    : job.grad_fp32 == work::Switch::kOn    ? ", gradients reduced in fp32"
                                                            : ", gradients reduced in 16-bit";
  return fmt::format("{}, recompute {}{}{}{}{}{}", work::to_string(job.framework),
                     work::recompute_text(job), overlap, el, tpo, red,
                     job.offload_optimizer ? ", offload" : "");
}

std::string search_notes_text(const work::SearchResult& r) {
  std::string s;
  if (r.best.size() > 1) s += work::why_first_beats_second(r.best[0], r.best[1]) + "\n";
  if (!r.passed_over.empty())
    s += fmt::format("passed over {}: {}, and a plan within 5 % of its step time is not\n",
                     r.passed_over, r.passed_over_why);
  return s;
}

std::string validation_markdown(const std::vector<work::ValidationRow>& rows) {
  std::string s =
      "| case | GPUs | plan | metric | measured | predicted | error | source "
      "|\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows)
    s += fmt::format("| {}{} | {} | {} | {} | {:.4g} | {:.4g} | {:+.1f}% | {} |\n", r.c.name,
                     r.c.open ? " (open)" : "", r.c.plan.gpus(), r.c.plan.str(), r.c.metric,
                     r.c.measured, r.predicted, 100 * r.error, r.c.source);
  return s;
}

namespace {
double gib(double b) { return b / (1ull << 30); }
}  // namespace

nlohmann::json validation_json(const std::vector<work::ValidationRow>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : rows)
    j.push_back({{"case", r.c.name},
                 {"gpus", r.c.plan.gpus()},
                 {"plan", r.c.plan.str()},
                 {"metric", r.c.metric},
                 {"measured", r.c.measured},
                 {"predicted", r.predicted},
                 {"error", r.error},
                 {"source", r.c.source},
                 {"open", r.c.open},
                 {"step_time_s", r.step.step_time_s},
                 {"mfu", r.step.mfu},
                 {"memory_GiB", gib(r.step.memory.total)},
                 {"memory_capacity_GiB", gib(r.step.memory.capacity)}});
  return with_schema({{"cases", j}});
}

namespace {

std::string pct(double x) { return fmt::format("{:.1f}%", 100 * x); }

std::string human_time(double s) {
  if (s < 120) return fmt::format("{:.1f} s", s);
  if (s < 7200) return fmt::format("{:.1f} min", s / 60);
  if (s < 172800) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} days", s / 86400);
}

std::string header_text(const work::TrainSetup& s) {
  const auto& j = s.job;
  std::string mode = work::to_string(j.mode);
  if (j.mode == work::Mode::kLora)
    mode += fmt::format(" rank {} on {}", j.lora.rank, fmt::join(j.lora.targets, ","));
  std::string notes;
  if (!quiet())
    for (const auto& n : s.notes) notes += "note: " + n + "\n";
  // A choice the plan search tries is not the job's: shown once, as searched.
  auto open = [&](const char* name) {
    return std::find(s.searched.begin(), s.searched.end(), name) != s.searched.end();
  };
  std::string job = fmt::format("{}, {}, seq {}, global batch {} sequences ({:.2f}M tokens)", mode,
                                work::to_string(j.precision), j.seq, j.global_batch,
                                static_cast<double>(j.global_batch) * j.seq / 1e6);
  if (!open("recompute")) job += fmt::format(", recompute {}", work::recompute_text(j));
  if (j.flash_attention) {
    job += ", fused attention";
    // --attention given: the kernel it picked (on Hopper; elsewhere FlashAttention-2's rate either
    // way, work::Job::cudnn_attention)
    if (j.cudnn_attention != work::Switch::kDefault)
      job += j.cudnn_attention == work::Switch::kOn ? " (cuDNN)" : " (FlashAttention-2)";
  }
  if (j.offload_optimizer && !open("optimizer offload")) job += ", optimizer offloaded to CPU";
  if (!open("framework")) job += fmt::format(", {}", work::to_string(j.framework));
  if (j.fp8_gather) job += ", fp8 weight gathers";
  if (!s.searched.empty())
    job += fmt::format("; searched with every plan: {}", fmt::join(s.searched, ", "));
  return fmt::format("{} ({:.1f}B parameters) on {} ({} x {})\njob: {}\n{}\n", s.model_name,
                     s.model_params / 1e9, s.chassis_name, s.chassis_gpus, s.gpu_part, job, notes);
}

std::string scaling_text(const work::TrainResult& r) {
  Table t;
  t.header({"GPUs", "best plan", "tokens/s", "tokens/s per GPU", "scaling efficiency", "MFU"});
  for (const auto& p : r.scaling) {
    if (!p.fits) {
      t.row({std::to_string(p.gpus), "does not fit", "", "", "", ""});
      continue;
    }
    t.row({std::to_string(p.gpus), p.best.plan.str(), fmt::format("{:.0f}", p.best.tokens_per_s),
           fmt::format("{:.0f}", p.best.tokens_per_s / p.gpus), pct(p.efficiency),
           pct(p.best.mfu)});
  }
  return t.render() +
         scaling_verdict_text(r.verdict, r.scaling.empty() ? 0 : r.scaling.back().gpus);
}

nlohmann::json scaling_json(const work::TrainResult& r) {
  nlohmann::json j;
  j["scaling"] = nlohmann::json::array();
  for (const auto& p : r.scaling) {
    if (!p.fits) {
      j["scaling"].push_back({{"gpus", p.gpus}, {"fits", false}});
      continue;
    }
    j["scaling"].push_back({{"gpus", p.gpus},
                            {"fits", true},
                            {"plan", p.best.plan.str()},
                            {"tokens_per_s", p.best.tokens_per_s},
                            {"efficiency", p.efficiency},
                            {"mfu", p.best.mfu}});
  }
  j["verdict"] = scaling_verdict_json(r.verdict);
  return j;
}

std::string search_text(const work::SearchResult& r) {
  Table t;
  t.header({"rank", "plan", "step s", "tokens/s", "MFU", "GiB/GPU", "how"});
  for (std::size_t i = 0; i < r.best.size(); ++i) {
    const auto& x = r.best[i];
    t.row({std::to_string(i + 1), x.plan.str(), fmt::format("{:.4g}", x.step_time_s),
           fmt::format("{:.0f}", x.tokens_per_s), pct(x.mfu),
           fmt::format("{:.1f}", gib(x.memory.total)),
           job_choices(x.job) + (x.simulated ? ", simulated" : ", estimated")});
  }
  return fit_width(
      fmt::format("plan search: {} plans enumerated, {} can run, {} fit in memory; best {}:\n",
                  r.candidates, r.runnable, r.fitting, r.best.size()) +
      t.render() + search_notes_text(r) + "\n");
}

void add_search_json(nlohmann::json& j, const work::SearchResult& r, const std::string& why_first) {
  j["candidates"] = {{"enumerated", r.candidates}, {"runnable", r.runnable}, {"fit", r.fitting}};
  j["ranking"] = nlohmann::json::array();
  for (const auto& x : r.best)
    j["ranking"].push_back({{"plan", x.plan.str()},
                            {"step_time_s", x.step_time_s},
                            {"tokens_per_s", x.tokens_per_s},
                            {"mfu", x.mfu},
                            {"memory_per_gpu_GiB", gib(x.memory.total)},
                            {"simulated", x.simulated},
                            {"job", job_choices(x.job)}});
  j["why_first"] = why_first;
  j["passed_over"] = r.passed_over;
  j["passed_over_why"] = r.passed_over_why;
}

}  // namespace

std::string step_text(const work::StepResult& r, int max_links) {
  std::ostringstream o;
  const auto& b = r.breakdown;
  double T = r.step_time_s;
  o << fmt::format("plan {} on {} GPU{} ({}), {} micro-batch{} per step\n\n", r.plan.str(), r.gpus,
                   r.gpus == 1 ? "" : "s", r.simulated ? "simulated" : "estimated", r.micro_batches,
                   r.micro_batches == 1 ? "" : "es");
  Table t;
  t.header({"step", "seconds", "share"});
  t.row({"step time", fmt::format("{:.4g}", T), "100%"});
  t.row({"  compute", fmt::format("{:.4g}", b.compute_s), pct(b.compute_s / T)});
  t.row({"  exposed communication", fmt::format("{:.4g}", b.exposed_comm_s),
         pct(b.exposed_comm_s / T)});
  for (auto [name, v] :
       std::vector<std::pair<const char*, double>>{{"tensor parallel", b.tp_s},
                                                   {"context-parallel ring", b.cp_s},
                                                   {"expert all-to-all", b.ep_s},
                                                   {"pipeline send/recv", b.pp_s},
                                                   {"data-parallel gradients", b.dp_s},
                                                   {"ZeRO gathers", b.zero_s}})
    if (v > 0) t.row({std::string("    ") + name, fmt::format("{:.4g}", v), pct(v / T)});
  if (b.contention_s > 0)
    t.row({"  compute slowed by NCCL kernels", fmt::format("{:.4g}", b.contention_s),
           pct(b.contention_s / T)});
  t.row({"  pipeline bubble", fmt::format("{:.4g}", b.bubble_s), pct(b.bubble_s / T)});
  t.row({"  host I/O (offload)", fmt::format("{:.4g}", b.io_s), pct(b.io_s / T)});
  o << t.render() << "\n";
  o << fmt::format("tokens/s {:.0f}   MFU {}   HFU {}   model TFLOP/s per GPU {:.0f}\n\n",
                   r.tokens_per_s, pct(r.mfu), pct(r.hfu), r.model_tflops_per_gpu);
  const auto& m = r.memory;
  Table mt;
  mt.header({"memory per GPU", "GiB"});
  for (auto [name, v] :
       std::vector<std::pair<const char*, double>>{{"weights", m.weights},
                                                   {"gradients", m.gradients},
                                                   {"optimizer states", m.optimizer},
                                                   {"activations", m.activations},
                                                   {"LoRA adapters", m.lora},
                                                   {"buffers and runtime", m.buffers}})
    if (v > 0) mt.row({name, fmt::format("{:.1f}", gib(v))});
  mt.row({"total", fmt::format("{:.1f} of {:.1f}", gib(m.total), gib(m.capacity))});
  mt.row({m.fits ? "fits, headroom" : "DOES NOT FIT, short by",
          fmt::format("{:.1f}", gib(std::abs(m.headroom())))});
  if (m.host_bytes > 0)
    mt.row({"host memory (offloaded)", fmt::format("{:.1f}", gib(m.host_bytes))});
  o << mt.render() << "\n";
  if (!r.links.empty()) {
    Table lt;
    lt.header({"fullest links", "technology", "used", "busy", "GB/step", "traffic"});
    for (int i = 0; i < std::min<int>(max_links, r.links.size()); ++i) {
      const auto& l = r.links[i];
      lt.row({l.link, l.tech, pct(l.utilisation), pct(l.busy_fraction),
              fmt::format("{:.1f}", l.bytes / 1e9), l.traffic});
    }
    o << lt.render()
      << "used: bytes moved / (capacity x step time); busy: share of the step any flow crossed "
         "it\n\n";
  }
  o << "bottleneck: " << r.bottleneck << "\n";
  return o.str();
}

nlohmann::json step_json(const work::StepResult& r) {
  const auto& b = r.breakdown;
  const auto& m = r.memory;
  nlohmann::json links = nlohmann::json::array();
  for (const auto& l : r.links)
    links.push_back({{"link", l.link},
                     {"tech", l.tech},
                     {"utilisation", l.utilisation},
                     {"busy_fraction", l.busy_fraction},
                     {"bytes_per_step", l.bytes},
                     {"traffic", l.traffic}});
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
          {"memory",
           {{"weights_GiB", gib(m.weights)},
            {"gradients_GiB", gib(m.gradients)},
            {"optimizer_GiB", gib(m.optimizer)},
            {"activations_GiB", gib(m.activations)},
            {"lora_GiB", gib(m.lora)},
            {"buffers_GiB", gib(m.buffers)},
            {"host_GiB", gib(m.host_bytes)}}},
          {"breakdown",
           {{"compute_s", b.compute_s},
            {"exposed_comm_s", b.exposed_comm_s},
            {"bubble_s", b.bubble_s},
            {"contention_s", b.contention_s},
            {"io_s", b.io_s},
            {"optimizer_s", b.optimizer_s},
            {"exposed_comm_by_kind_s",
             {{"tp", b.tp_s},
              {"cp", b.cp_s},
              {"ep", b.ep_s},
              {"pp", b.pp_s},
              {"dp", b.dp_s},
              {"zero", b.zero_s}}}}},
          {"links", links},
          {"bottleneck", r.bottleneck}};
}

std::string train_text(const work::TrainResult& r) {
  using Kind = work::TrainResult::Kind;
  if (r.kind == Kind::kValidation) return validation_markdown(r.validation);
  std::string text = header_text(r.setup);
  if (r.kind == Kind::kScaling) return fit_width(text + scaling_text(r));
  if (r.search) text += search_text(*r.search);
  text += step_text(r.step, 8);
  if (r.checkpoint) text += checkpoint_text(*r.checkpoint, r.checkpoint_every);
  if (r.tokens > 0)
    text += fmt::format("time to train {:.3g} tokens: {} ({:.0f} steps)\n", r.tokens,
                        human_time(r.run_time_s), r.tokens / r.step.tokens_per_step);
  return fit_width(text);
}

nlohmann::json train_json(const work::TrainResult& r) {
  using Kind = work::TrainResult::Kind;
  if (r.kind == Kind::kValidation) return validation_json(r.validation);
  if (r.kind == Kind::kScaling) return with_schema(scaling_json(r));
  nlohmann::json j;
  if (r.search) add_search_json(j, *r.search, r.why_first);
  if (r.search) j["searched"] = r.setup.searched;
  if (r.checkpoint) j["checkpoint"] = checkpoint_json(*r.checkpoint, r.checkpoint_every);
  nlohmann::json s = step_json(r.step);
  for (auto it = s.begin(); it != s.end(); ++it) j[it.key()] = it.value();
  j["chassis"] = r.setup.chassis_name;
  j["model"] = r.setup.model_id;
  j["notes"] = r.setup.notes;
  if (r.tokens > 0) {
    j["tokens"] = r.tokens;
    j["run_time_s"] = r.run_time_s;
  }
  return with_schema(j);
}

std::string train_output(const work::TrainResult& r, bool json) {
  return json ? train_json(r).dump(2) + "\n" : train_text(r);
}

std::string train_does_not_fit(const work::TrainResult& r, const std::string& output) {
  return fmt::format("plan {} does not fit: it needs {:.1f} GiB per GPU of {:.1f} GiB{}",
                     r.step.plan.str(), gib(r.step.memory.total), gib(r.step.memory.capacity),
                     output.empty() ? "" : fmt::format("; {} not written", output));
}

}  // namespace linkwise::report
