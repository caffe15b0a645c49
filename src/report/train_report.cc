#include "linkwise/report/train_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <sstream>

#include "linkwise/report/json.h"
#include "linkwise/report/table.h"

namespace linkwise::report {

namespace {

double gib(double b) { return b / (1ull << 30); }
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
  for (const auto& n : s.notes) notes += "note: " + n + "\n";
  return fmt::format("{} ({:.1f}B parameters) on {} ({} x {})\njob: {}, {}, seq {}, global batch {} sequences "
                     "({:.2f}M tokens), recompute {}{}{}\n{}\n",
                     s.model_name, s.total_params / 1e9, s.chassis, s.chassis_gpus, s.gpu_part,
                     mode, work::to_string(j.precision), j.seq, j.global_batch,
                     static_cast<double>(j.global_batch) * j.seq / 1e6, work::to_string(j.recompute),
                     j.flash_attention ? ", fused attention" : "", j.offload_optimizer ? ", optimizer offloaded to CPU" : "",
                     notes);
}

}  // namespace

nlohmann::json step_json(const work::StepResult& r) {
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
  Table t;
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
  Table mt;
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
    Table lt;
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

std::string train_text(const work::TrainResult& r) {
  std::string text = header_text(r.setup);
  if (r.scaling) {
    Table t;
    t.header({"GPUs", "best plan", "tokens/s", "tokens/s per GPU", "scaling efficiency", "MFU"});
    for (const auto& p : *r.scaling) {
      if (!p.fits) {
        t.row({std::to_string(p.gpus), "does not fit", "", "", "", ""});
        continue;
      }
      t.row({std::to_string(p.gpus), p.best.plan.str(), fmt::format("{:.0f}", p.best.tokens_per_s),
             fmt::format("{:.0f}", p.best.tokens_per_s / p.gpus), pct(p.efficiency), pct(p.best.mfu)});
    }
    return text + t.render();
  }
  if (r.search) {
    const auto& s = *r.search;
    Table t;
    t.header({"rank", "plan", "step s", "tokens/s", "MFU", "GiB/GPU", "how"});
    for (std::size_t i = 0; i < s.best.size(); ++i) {
      const auto& x = s.best[i];
      t.row({std::to_string(i + 1), x.plan.str(), fmt::format("{:.4g}", x.step_time_s), fmt::format("{:.0f}", x.tokens_per_s),
             pct(x.mfu), fmt::format("{:.1f}", gib(x.memory.total)), x.simulated ? "simulated" : "estimated"});
    }
    text += fmt::format("plan search: {} plans enumerated, {} can run, {} fit in memory; best {}:\n", s.candidates,
                        s.runnable, s.fitting, s.best.size());
    text += t.render() + "\n";
  }
  text += step_text(r.best, 8);
  if (r.tokens > 0)
    text += fmt::format("time to train {:.3g} tokens: {} ({:.0f} steps)\n", r.tokens, human_time(r.run_time_s),
                        r.tokens / r.best.tokens_per_step);
  return text;
}

nlohmann::json train_json(const work::TrainResult& r) {
  nlohmann::json j;
  if (r.scaling) {
    j["scaling"] = nlohmann::json::array();
    for (const auto& p : *r.scaling) {
      if (!p.fits) {
        j["scaling"].push_back({{"gpus", p.gpus}, {"fits", false}});
        continue;
      }
      j["scaling"].push_back({{"gpus", p.gpus}, {"fits", true}, {"plan", p.best.plan.str()},
                              {"tokens_per_s", p.best.tokens_per_s}, {"efficiency", p.efficiency}, {"mfu", p.best.mfu}});
    }
    return with_schema(std::move(j));
  }
  if (r.search) {
    const auto& s = *r.search;
    j["candidates"] = {{"enumerated", s.candidates}, {"runnable", s.runnable}, {"fit", s.fitting}};
    j["ranking"] = nlohmann::json::array();
    for (const auto& x : s.best)
      j["ranking"].push_back({{"plan", x.plan.str()}, {"step_time_s", x.step_time_s}, {"tokens_per_s", x.tokens_per_s},
                              {"mfu", x.mfu}, {"memory_per_gpu_GiB", gib(x.memory.total)}, {"simulated", x.simulated}});
  }
  nlohmann::json s = step_json(r.best);
  for (auto it = s.begin(); it != s.end(); ++it) j[it.key()] = it.value();
  j["chassis"] = r.setup.chassis;
  j["model"] = r.setup.model_id;
  if (r.tokens > 0) {
    j["tokens"] = r.tokens;
    j["run_time_s"] = r.run_time_s;
  }
  return with_schema(std::move(j));
}

std::string does_not_fit_message(const work::StepResult& best, const std::string& output) {
  return fmt::format("plan {} does not fit: it needs {:.1f} GiB per GPU of {:.1f} GiB{}", best.plan.str(),
                     gib(best.memory.total), gib(best.memory.capacity),
                     output.empty() ? "" : fmt::format("; {} not written", output));
}

std::string validation_markdown(const std::vector<work::ValidationRow>& rows) {
  std::string s = "| case | GPUs | plan | metric | measured | predicted | error | source |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows)
    s += fmt::format("| {}{} | {} | {} | {} | {:.4g} | {:.4g} | {:+.1f}% | {} |\n", r.c.name, r.c.open ? " (open)" : "",
                     r.c.plan.gpus(),
                     r.c.plan.str(), r.c.metric, r.c.measured, r.predicted, 100 * r.error, r.c.source);
  return s;
}

nlohmann::json validation_json(const std::vector<work::ValidationRow>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : rows)
    j.push_back({{"case", r.c.name}, {"gpus", r.c.plan.gpus()}, {"plan", r.c.plan.str()}, {"metric", r.c.metric},
                 {"measured", r.c.measured}, {"predicted", r.predicted}, {"error", r.error}, {"source", r.c.source}, {"open", r.c.open},
                 {"step_time_s", r.step.step_time_s}, {"mfu", r.step.mfu}});
  return with_schema({{"cases", j}});
}

}  // namespace linkwise::report
