// Google Benchmark: calibration against a chassis and a collective sweep on the simulated machine
// (the host-side cost of linkwise calibrate and of the nccl-tests bookkeeping). Results in
// docs/PERFORMANCE.md, section Measurement.
#include <benchmark/benchmark.h>

#include "linkwise/measure/calibrate.h"
#include "linkwise/measure/fake_gpu.h"
#include "linkwise/measure/nccl_bench.h"
#include "linkwise/topo/chassis.h"

namespace {

using namespace linkwise;

measure::MeasurementFile reference_like(int gpus) {
  measure::MeasurementFile f;
  for (int a = 0; a < gpus; ++a) {
    f.measurements.push_back({.kind = "h2d", .gpus = {a}, .measured_GBps = 55});
    for (int b = 0; b < gpus; ++b)
      if (a != b) f.measurements.push_back({.kind = "p2p", .gpus = {a, b}, .measured_GBps = 370});
  }
  std::vector<int> all;
  for (int a = 0; a < gpus; ++a) all.push_back(a);
  f.measurements.push_back(
      {.kind = "collective", .gpus = all, .op = "all_reduce", .measured_GBps = 360});
  return f;
}

void BM_CalibrateDgxH100(benchmark::State& state) {
  auto chassis = topo::load_chassis("dgx-h100");
  auto file = reference_like(8);  // 8 h2d + 56 p2p + 1 collective
  for (auto _ : state) {
    auto cal = measure::calibrate(chassis, file);
    benchmark::DoNotOptimize(cal.flagged);
  }
  state.counters["figures"] = static_cast<double>(file.measurements.size());
}
BENCHMARK(BM_CalibrateDgxH100)->Unit(benchmark::kMillisecond);

void BM_FakeAllReduceSweep(benchmark::State& state) {
  for (auto _ : state) {
    measure::FakeCuda cuda(measure::parse_fake_spec("gpus=8,p2p=370"));
    measure::FakeNccl nccl(cuda);
    measure::RankSet rs;
    rs.nranks = 8;
    for (int i = 0; i < 8; ++i) rs.devices.push_back(i), rs.ranks.push_back(i);
    rs.comms = nccl.init_all(rs.devices);
    measure::NcclOptions o;
    o.max_bytes = 1 << 16;
    o.check = false;
    auto s = measure::run_nccl_sweep(cuda, nccl, rs, o);
    benchmark::DoNotOptimize(s.avg_busbw);
  }
}
BENCHMARK(BM_FakeAllReduceSweep)->Unit(benchmark::kMillisecond);

}  // namespace
