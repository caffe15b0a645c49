// Google Benchmark: one `collective` call through the library's API, the C++ side of the Python
// module's per-call cost (bench/python_collective.py runs the same calls from Python; figures in
// docs/PERFORMANCE.md).
#include <benchmark/benchmark.h>

#include "linkwise/comm/sweep.h"
#include "linkwise/topo/chassis.h"

namespace {

// What `linkwise collective dgx-h100 -b 1M -e 1M` asks: one all-reduce size on 8 GPUs.
linkwise::comm::SweepRequest one_size_request() {
  linkwise::comm::SweepRequest req;
  req.chassis = "dgx-h100";
  req.sweep.min = "1M";
  req.sweep.max = "1M";
  return req;
}

// The whole call from the preset's name: chassis read and built, communicator, one prediction.
void BM_CollectiveCallByName(benchmark::State& state) {
  auto req = one_size_request();
  for (auto _ : state) {
    auto r = linkwise::comm::predict_sweep(req);
    benchmark::DoNotOptimize(r.rows.back().prediction.time_s);
  }
}
BENCHMARK(BM_CollectiveCallByName)->Unit(benchmark::kMicrosecond);

// The same call on a chassis built once (what a sweep over sizes, ops or GPU sets reuses).
void BM_CollectiveCallLoaded(benchmark::State& state) {
  auto req = one_size_request();
  auto chassis = linkwise::topo::load_chassis(req.chassis);
  for (auto _ : state) {
    auto r = linkwise::comm::predict_sweep(req, chassis);
    benchmark::DoNotOptimize(r.rows.back().prediction.time_s);
  }
}
BENCHMARK(BM_CollectiveCallLoaded)->Unit(benchmark::kMicrosecond);

}  // namespace
