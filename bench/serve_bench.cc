// Google Benchmark: linkwise serve's concurrency sweep. Results in docs/PERFORMANCE.md, section
// "Serving". Each iteration builds a fresh ServeModel (communicators, ring search) and
// sweeps 1..256 users, as one `linkwise serve ... --sweep concurrency` run does.
#include <benchmark/benchmark.h>

#include "linkwise/topo/chassis.h"
#include "linkwise/work/serve.h"

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

}  // namespace
