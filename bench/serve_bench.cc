// Google Benchmark: linkwise serve's concurrency sweep. Results in docs/PERFORMANCE.md, section
// "Serving". Each iteration builds a fresh ServeModel (communicators, ring search) and
// sweeps 1..256 users, as one `linkwise serve ... --sweep concurrency` run does.
#include <benchmark/benchmark.h>

#include "linkwise/topo/chassis.h"
#include "linkwise/work/serve.h"
#include "linkwise/work/serve_run.h"

namespace {

using namespace linkwise;

void BM_ServeSweep70bTp8(benchmark::State& state, const char* preset, int tp) {
  auto chassis = topo::load_chassis(preset);
  auto model = work::find_model("llama3.1-70b");
  work::ServeOptions o;
  o.tp = tp;
  o.input = 8192;
  o.output = 512;
  auto points = work::sweep_concurrencies(256);
  for (auto _ : state) {
    auto r = work::serve(chassis, model, o, points);
    benchmark::DoNotOptimize(r.sweep.back().output_tokens_per_s);
  }
  state.counters["points"] = static_cast<double>(points.size());
}
BENCHMARK_CAPTURE(BM_ServeSweep70bTp8, dgx_h100_tp8, "dgx-h100", 8)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ServeSweep70bTp8, appliance_tp4, "inference-appliance", 4)
    ->Unit(benchmark::kMillisecond);

// The same sweep as a finite benchmark of 1000 requests: each point also steps its first cohort's
// prompt train (about one engine step per prompt).
void BM_ServeSweepFinite70bTp8(benchmark::State& state) {
  auto chassis = topo::load_chassis("dgx-h100");
  auto model = work::find_model("llama3.1-70b");
  work::ServeOptions o;
  o.tp = 8;
  o.input = 8192;
  o.output = 512;
  o.requests = 1000;
  auto points = work::sweep_concurrencies(256);
  for (auto _ : state) {
    auto r = work::serve(chassis, model, o, points);
    benchmark::DoNotOptimize(r.sweep.back().output_tokens_per_s);
  }
}
BENCHMARK(BM_ServeSweepFinite70bTp8)->Unit(benchmark::kMillisecond);

// The sweep as `linkwise serve ... --sweep concurrency` runs it (work::run_serve): the vllm front
// end admits by prompt, so the points past the KV cache (256 users on the DGX H100, 64-256 on the
// appliance) are replayed, two replays each (docs/serving.md, "Replay").
void BM_ServeSweepCli70b(benchmark::State& state, const char* preset, int tp) {
  auto chassis = topo::load_chassis(preset);
  work::ServeRunOptions o;
  o.model = "llama3.1-70b";
  o.tp = tp;
  o.input = 8192;
  o.output = 512;
  o.sweep = "concurrency";
  for (auto _ : state) {
    auto r = work::run_serve(o, chassis);
    benchmark::DoNotOptimize(r.result.sweep.back().output_tokens_per_s);
  }
}
BENCHMARK_CAPTURE(BM_ServeSweepCli70b, dgx_h100_tp8, "dgx-h100", 8)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ServeSweepCli70b, appliance_tp4, "inference-appliance", 4)
    ->Unit(benchmark::kMillisecond);

// Every concurrency from 1 to 256, not only powers of two.
void BM_ServeEveryConcurrency70bTp8(benchmark::State& state) {
  auto chassis = topo::load_chassis("dgx-h100");
  auto model = work::find_model("llama3.1-70b");
  work::ServeOptions o;
  o.tp = 8;
  o.input = 8192;
  o.output = 512;
  std::vector<int> points;
  for (int c = 1; c <= 256; ++c) points.push_back(c);
  for (auto _ : state) {
    auto r = work::serve(chassis, model, o, points);
    benchmark::DoNotOptimize(r.sweep.back().output_tokens_per_s);
  }
}
BENCHMARK(BM_ServeEveryConcurrency70bTp8)->Unit(benchmark::kMillisecond);

// The step-by-step replay of a finite benchmark (ServeModel::replay): the RTX 4090 validation row
// at 48 users (300 requests, EOS-ended outputs of mean 100 capped at 128) and a max-throughput run
// of 3000 requests of 1000/1000 on two H100 (every request queued at once, ~230 running).
void BM_ServeReplay(benchmark::State& state, bool rtx) {
  auto chassis = topo::load_chassis(rtx ? "workstation-rtx4090" : "dgx-h100");
  work::ServeOptions o;
  o.gpus = rtx ? std::vector<std::string>{"GPU0"} : std::vector<std::string>{"GPU0", "GPU1"};
  o.tp = rtx ? 1 : 2;
  o.replicas = 1;
  o.precision = rtx ? work::NumberFormat::kBf16 : work::NumberFormat::kFp8;
  o.chunked_prefill = rtx;
  o.input = rtx ? 256 : 1000;
  o.output = rtx ? 128 : 1000;
  work::ServeModel sm(chassis, work::find_model(rtx ? "mistral-7b" : "llama3.1-70b"), o);
  work::ReplayOptions r;
  r.concurrency = rtx ? 48 : 3000;
  r.requests = rtx ? 300 : 3000;
  r.mean_output = rtx ? 100 : 0;
  long steps = 0;
  for (auto _ : state) {
    auto res = sm.replay(r);
    steps = res.steps;
    benchmark::DoNotOptimize(res.output_tokens_per_s);
  }
  state.counters["steps"] = static_cast<double>(steps);
}
BENCHMARK_CAPTURE(BM_ServeReplay, rtx4090_c48_300, true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ServeReplay, h100_tp2_3000, false)->Unit(benchmark::kMillisecond);

}  // namespace
