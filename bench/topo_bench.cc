// Google Benchmark: the all-pairs topology analysis (linkwise topo). Results in
// docs/PERFORMANCE.md.
#include <benchmark/benchmark.h>

#include "linkwise/topo/analysis.h"

namespace {

void BM_TopoAnalyse(benchmark::State& state, const char* preset, int boxes) {
  auto chassis = linkwise::topo::load_chassis(preset, boxes);
  for (auto _ : state) {
    auto a = linkwise::topo::analyse(chassis);
    benchmark::DoNotOptimize(a.bisection_bytes_per_s);
  }
  state.counters["gpus"] = static_cast<double>(chassis.gpus().size());
}

BENCHMARK_CAPTURE(BM_TopoAnalyse, dgx_h100_1box, "dgx-h100", 1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TopoAnalyse, dgx1_v100_1box, "dgx1-v100", 1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TopoAnalyse, dgx_h100_2box, "dgx-h100", 2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TopoAnalyse, dgx_h100_8box, "dgx-h100", 8)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TopoAnalyse, training_appliance_8box, "training-appliance", 8)
    ->Unit(benchmark::kMillisecond);

void BM_LoadChassis(benchmark::State& state) {
  for (auto _ : state) {
    auto c = linkwise::topo::load_chassis("dgx-h100", 8);
    benchmark::DoNotOptimize(c.nodes().size());
  }
}
BENCHMARK(BM_LoadChassis)->Unit(benchmark::kMicrosecond);

}  // namespace
