// Google Benchmark: training step simulation and plan search (linkwise train). Results in
// docs/PERFORMANCE.md, section "Training". Each iteration builds a fresh StepModel, so communicator
// construction and collective predictions are paid every time, as one CLI run pays them.
#include <benchmark/benchmark.h>

#include "linkwise/topo/chassis.h"
#include "linkwise/work/search.h"
#include "linkwise/work/step.h"
#include "linkwise/work/validation.h"

namespace {

using namespace linkwise;

void BM_Step70bTp8(benchmark::State& state) {
  auto chassis = topo::load_chassis("dgx-h100");
  work::Job job;
  job.mode = work::Mode::kLora;
  auto model = work::find_model("llama3-70b");
  auto plan = work::parse_plan("tp=8");
  for (auto _ : state) {
    work::StepModel sm(chassis, model, job);
    auto r = sm.simulate(plan);
    benchmark::DoNotOptimize(r.step_time_s);
  }
}
BENCHMARK(BM_Step70bTp8)->Unit(benchmark::kMillisecond);

void BM_PlanAuto(benchmark::State& state, const char* preset, int boxes, const char* model_id) {
  auto chassis = topo::load_chassis(preset, boxes);
  auto model = work::find_model(model_id);
  work::Job job;
  int plans = 0;
  for (auto _ : state) {
    work::StepModel sm(chassis, model, job);
    auto r = work::search_plans(sm);
    plans = r.fitting;
    benchmark::DoNotOptimize(r.best.front().step_time_s);
  }
  state.counters["gpus"] = static_cast<double>(chassis.gpus().size());
  state.counters["plans_ranked"] = plans;
}
BENCHMARK_CAPTURE(BM_PlanAuto, llama3_70b_64gpu, "dgx-h100", 8, "llama3-70b")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PlanAuto, gpt3_175b_512gpu, "dgx-a100", 64, "gpt3-175b")->Unit(benchmark::kMillisecond);

void BM_Validation(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(work::run_validation().size());
}
BENCHMARK(BM_Validation)->Unit(benchmark::kMillisecond);

}  // namespace
