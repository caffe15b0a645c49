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

// One full engine evaluation of GPT-3 175B on 512 GPUs (tp=8, pp=8, dp=8), fresh StepModel each
// time: communicators, ring searches and every period's engine run are paid.
void BM_SimulateGpt3_512(benchmark::State& state) {
  auto chassis = topo::load_chassis("dgx-a100", 64);
  auto model = work::find_model("gpt3-175b");
  auto plan = work::parse_plan("tp=8,pp=8,dp=8");
  work::Job job;
  for (auto _ : state) {
    work::StepModel sm(chassis, model, job);
    benchmark::DoNotOptimize(sm.simulate(plan).step_time_s);
  }
}
BENCHMARK(BM_SimulateGpt3_512)->Unit(benchmark::kMillisecond);

// The closed-form score of one plan (StepModel::estimate) with the model's caches warm, as the plan
// search calls it: GPT-3 175B on 512 GPUs, cycling through every candidate that fits.
void BM_EstimatePerPlan(benchmark::State& state) {
  auto chassis = topo::load_chassis("dgx-a100", 64);
  auto model = work::find_model("gpt3-175b");
  work::Job job;
  work::StepModel sm(chassis, model, job);
  std::vector<work::Plan> plans;
  for (const auto& p : work::candidate_plans(sm.model(), sm.job(), 512, 8))
    if (work::plan_problem(p, sm.model(), sm.job(), 512).empty() &&
        work::memory_per_gpu(sm.model(), sm.job(), p, sm.gpu().memory_bytes).fits)
      plans.push_back(p);
  for (const auto& p : plans) sm.estimate(p);  // warm the caches
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(sm.estimate(plans[i]).step_time_s);
    i = (i + 1) % plans.size();
  }
  state.counters["plans"] = static_cast<double>(plans.size());
}
BENCHMARK(BM_EstimatePerPlan)->Unit(benchmark::kMicrosecond);

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
BENCHMARK_CAPTURE(BM_PlanAuto, llama3_70b_64gpu, "dgx-h100", 8, "llama3-70b")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PlanAuto, gpt3_175b_512gpu, "dgx-a100", 64, "gpt3-175b")
    ->Unit(benchmark::kMillisecond);

// `linkwise train --plan auto` as the CLI runs it when the job leaves every choice open: plans x
// recompute x offload x framework x gradient overlap x fusion (SearchOptions::everything()).
void BM_PlanAutoWide(benchmark::State& state) {
  auto chassis = topo::load_chassis("dgx-a100", 64);
  auto model = work::find_model("gpt3-175b");
  work::Job job;
  long long candidates = 0;
  for (auto _ : state) {
    work::StepModel sm(chassis, model, job);
    auto r = work::search_plans(sm, work::SearchOptions::everything());
    candidates = r.candidates;
    benchmark::DoNotOptimize(r.best.front().step_time_s);
  }
  state.counters["candidates"] = static_cast<double>(candidates);
}
BENCHMARK(BM_PlanAutoWide)->Unit(benchmark::kMillisecond)->Iterations(2);

void BM_Validation(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(work::run_validation().size());
}
BENCHMARK(BM_Validation)->Unit(benchmark::kMillisecond);

}  // namespace
