#include "linkwise/work/validation.h"

#include <fmt/format.h>

#include <cmath>

#include "linkwise/topo/chassis.h"

namespace linkwise::work {

namespace {

// GPT models as Megatron-LM trains them: FFN 4h, vocabulary 51200, sequence 2048, dropout, no gating.
Model gpt(const std::string& id, int layers, int hidden, int heads) {
  Model m;
  m.id = m.name = id;
  m.layers = layers, m.hidden = hidden, m.heads = heads, m.kv_heads = heads, m.ffn = 4 * hidden;
  m.vocab = 51200, m.seq = 2048, m.dropout = true;
  return m;
}

// Narayanan et al. 2021 (SC21, arXiv:2104.04473), Table 1: weak scaling on Selene (DGX A100 80GB, 8 HDR
// InfiniBand NICs per node), fp16, full activation recomputation, no sequence parallelism.
ValidationCase narayanan(const std::string& size, int heads, int hidden, int layers, int tp, int pp, int gpus,
                         int batch, double tflops) {
  ValidationCase c;
  c.name = "Narayanan " + size;
  c.source = fmt::format("Narayanan et al. 2021, Table 1, {} row ({} GPUs, t={}, p={})", size, gpus, tp, pp);
  c.metric = "TFLOP/s per GPU";
  c.model = gpt("gpt-" + size, layers, hidden, heads);
  c.chassis = "dgx-a100";
  c.boxes = gpus / 8;
  c.plan.tp = tp, c.plan.pp = pp, c.plan.dp = gpus / (tp * pp), c.plan.sp = false, c.plan.micro_batch = 1;
  c.job.seq = 2048, c.job.global_batch = batch, c.job.recompute = Recompute::kFull;
  c.job.flash_attention = false;
  c.measured = tflops;
  return c;
}

// Korthikanti et al. 2022 (arXiv:2205.05198), Table 3 (configurations) and Table 5 (end-to-end iteration
// time): sequence parallelism with selective recomputation ("present work"), and the baseline of tensor
// parallelism with full recomputation.
ValidationCase korthikanti(const std::string& size, int heads, int hidden, int layers, int pp, int gpus,
                           bool present_work, double seconds) {
  ValidationCase c;
  c.name = fmt::format("Korthikanti {} {}", size, present_work ? "SP+selective" : "full recompute");
  c.source = fmt::format("Korthikanti et al. 2022, Tables 3 and 5, {} {}", size,
                         present_work ? "present work" : "full recompute");
  c.metric = "step time s";
  c.model = gpt("gpt-" + size, layers, hidden, heads);
  c.chassis = "dgx-a100";
  c.boxes = gpus / 8;
  c.plan.tp = 8, c.plan.pp = pp, c.plan.dp = gpus / (8 * pp), c.plan.sp = present_work, c.plan.micro_batch = 1;
  c.job.seq = 2048, c.job.global_batch = size == "22B" ? 4 : gpus;  // Table 3: 4 for 22B, else one per GPU
  c.job.recompute = present_work ? Recompute::kSelective : Recompute::kFull;
  c.job.flash_attention = false;
  c.measured = seconds;
  return c;
}

// Narayanan et al. eq. 3: FLOPs per iteration with full recomputation, 96·B·s·l·h²·(1 + s/6h + V/16lh).
double narayanan_flops(const Model& m, const Job& j) {
  double B = j.global_batch, s = j.seq, l = m.layers, h = m.hidden, V = m.vocab;
  return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}

}  // namespace

std::vector<ValidationCase> validation_cases() {
  return {
      narayanan("1.7B", 24, 2304, 24, 1, 1, 32, 512, 137),
      narayanan("3.6B", 32, 3072, 30, 2, 1, 64, 512, 138),
      narayanan("7.5B", 32, 4096, 36, 4, 1, 128, 512, 142),
      narayanan("18.4B", 48, 6144, 40, 8, 1, 256, 1024, 135),
      narayanan("39.1B", 64, 8192, 48, 8, 2, 512, 1536, 138),
      narayanan("76.1B", 80, 10240, 60, 8, 4, 1024, 1792, 140),
      narayanan("145.6B", 96, 12288, 80, 8, 8, 1536, 2304, 148),
      korthikanti("22B", 64, 6144, 48, 1, 8, true, 1.10),
      korthikanti("22B", 64, 6144, 48, 1, 8, false, 1.42),
      korthikanti("175B", 96, 12288, 96, 8, 64, true, 13.75),
      korthikanti("175B", 96, 12288, 96, 8, 64, false, 18.13),
      korthikanti("530B", 128, 20480, 105, 35, 280, true, 37.83),
      korthikanti("530B", 128, 20480, 105, 35, 280, false, 49.05),
      korthikanti("1T", 160, 25600, 128, 64, 512, true, 71.49),
      korthikanti("1T", 160, 25600, 128, 64, 512, false, 94.42),
  };
}

std::vector<ValidationRow> run_validation(const std::string& filter) {
  std::vector<ValidationRow> rows;
  for (const auto& c : validation_cases()) {
    if (!filter.empty() && c.name.find(filter) == std::string::npos) continue;
    auto chassis = topo::load_chassis(c.chassis, c.boxes);
    StepModel sm(chassis, c.model, c.job);
    ValidationRow r;
    r.c = c;
    r.step = sm.simulate(c.plan);
    r.predicted = c.metric == "step time s"
                      ? r.step.step_time_s
                      : narayanan_flops(c.model, sm.job()) / (r.step.step_time_s * c.plan.gpus()) / 1e12;
    r.error = (r.predicted - c.measured) / c.measured;
    rows.push_back(r);
  }
  return rows;
}

std::string validation_markdown(const std::vector<ValidationRow>& rows) {
  std::string s = "| case | GPUs | plan | metric | measured | predicted | error | source |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows)
    s += fmt::format("| {} | {} | {} | {} | {:.4g} | {:.4g} | {:+.1f}% | {} |\n", r.c.name, r.c.plan.gpus(),
                     r.c.plan.str(), r.c.metric, r.c.measured, r.predicted, 100 * r.error, r.c.source);
  return s;
}

nlohmann::json validation_json(const std::vector<ValidationRow>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : rows)
    j.push_back({{"case", r.c.name}, {"gpus", r.c.plan.gpus()}, {"plan", r.c.plan.str()}, {"metric", r.c.metric},
                 {"measured", r.c.measured}, {"predicted", r.predicted}, {"error", r.error}, {"source", r.c.source},
                 {"step_time_s", r.step.step_time_s}, {"mfu", r.step.mfu}});
  return j;
}

}  // namespace linkwise::work
