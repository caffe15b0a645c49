// Google Benchmark: the all-pairs topology analysis (linkwise topo). Results in
// docs/PERFORMANCE.md.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "linkwise/hw/catalog.h"
#include "linkwise/topo/analysis.h"
#include "linkwise/topo/chassis.h"

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

// The chassis of `linkwise collective dgx-h100 --nodes 128`: 1024 GPUs, built from the preset.
void BM_LoadChassis128Boxes(benchmark::State& state) {
  for (auto _ : state) {
    auto c = linkwise::topo::load_chassis("dgx-h100", 128);
    benchmark::DoNotOptimize(c.nodes().size());
  }
}
BENCHMARK(BM_LoadChassis128Boxes)->Unit(benchmark::kMillisecond);

// The built-in catalog parsed from its YAML text: what every command pays once at start.
void BM_CatalogParse(benchmark::State& state) {
  std::ifstream in(std::string(LINKWISE_SOURCE_DIR) + "/data/catalog.yaml");
  std::stringstream text_in;
  text_in << in.rdbuf();
  const std::string text = text_in.str();
  for (auto _ : state) {
    auto c = linkwise::hw::Catalog::parse(text, "data/catalog.yaml");
    benchmark::DoNotOptimize(c.parts().size());
  }
}
BENCHMARK(BM_CatalogParse)->Unit(benchmark::kMillisecond);

}  // namespace
