// Google Benchmark: collective predictions (linkwise collective). Results in docs/PERFORMANCE.md.
#include <benchmark/benchmark.h>

#include "linkwise/comm/predict.h"
#include "linkwise/topo/chassis.h"

namespace {

using linkwise::comm::Algo;
using linkwise::comm::Communicator;
using linkwise::comm::Op;

// One message size on 8 GPUs, from nothing: communicator (ring search), every algorithm and
// protocol timed through the engine, the auto choice.
void BM_OneSize8Gpus(benchmark::State& state) {
  auto chassis = linkwise::topo::load_chassis("dgx-h100");
  for (auto _ : state) {
    auto p = linkwise::comm::predict(chassis, Op::kAllReduce, chassis.gpus(), 64.0 * 1024 * 1024);
    benchmark::DoNotOptimize(p.time_s);
  }
}
BENCHMARK(BM_OneSize8Gpus)->Unit(benchmark::kMicrosecond);

// The same on 8 PCIe GPUs whose ring is staged through host memory between the switches
// (pcie-8gpu-gen4): the ring search, NCCL's channel count for the host-staged ring, auto.
void BM_OneSize8GpusHostStaged(benchmark::State& state) {
  auto chassis = linkwise::topo::load_chassis("pcie-8gpu-gen4");
  for (auto _ : state) {
    auto p = linkwise::comm::predict(chassis, Op::kAllReduce, chassis.gpus(), 64.0 * 1024 * 1024);
    benchmark::DoNotOptimize(p.time_s);
  }
}
BENCHMARK(BM_OneSize8GpusHostStaged)->Unit(benchmark::kMicrosecond);

// One more size on a communicator that exists (cached schedules): what a plan search pays per call.
void BM_OneSize8GpusWarm(benchmark::State& state) {
  auto chassis = linkwise::topo::load_chassis("dgx-h100");
  Communicator comm(chassis);
  comm.predict(Op::kAllReduce, 8);
  double s = 8;
  for (auto _ : state) {
    auto p = comm.predict(Op::kAllReduce, s);
    s = s < 8e9 ? s * 2 : 8;
    benchmark::DoNotOptimize(p.time_s);
  }
}
BENCHMARK(BM_OneSize8GpusWarm)->Unit(benchmark::kMicrosecond);

// A full sweep, 8 B to 8 GB by x2 (31 sizes), on 64 GPUs in 8 boxes, from the chassis.
void BM_Sweep64Gpus8Boxes(benchmark::State& state) {
  auto chassis = linkwise::topo::load_chassis("dgx-h100", 8);
  for (auto _ : state) {
    Communicator comm(chassis);
    double sum = 0;
    for (double s = 8; s <= 8.0 * (1ull << 30); s *= 2)
      sum += comm.predict(Op::kAllReduce, s).time_s;
    benchmark::DoNotOptimize(sum);
  }
}
BENCHMARK(BM_Sweep64Gpus8Boxes)->Unit(benchmark::kMillisecond);

// All-reduce on 1024 GPUs (128 DGX H100 boxes): ring search, then the ring channels sharing every
// NIC and NVLink by max-min in the engine, for the ring algorithm at one size.
void BM_AllReduce1024Gpus(benchmark::State& state) {
  auto chassis = linkwise::topo::load_chassis("dgx-h100", 128);
  for (auto _ : state) {
    Communicator comm(chassis);
    auto p = comm.predict(Op::kAllReduce, 1.0 * (1ull << 30), Algo::kRing);
    benchmark::DoNotOptimize(p.time_s);
  }
}
BENCHMARK(BM_AllReduce1024Gpus)->Unit(benchmark::kMillisecond);

// What `linkwise collective dgx-h100 --nodes B -b 1G -e 1G` computes, chassis built outside the
// loop: communicator (ring search), the cut bound, and one size with auto (every algorithm that
// could win).
void BM_CliPath(benchmark::State& state) {
  auto chassis = linkwise::topo::load_chassis("dgx-h100", static_cast<int>(state.range(0)));
  for (auto _ : state) {
    Communicator comm(chassis);
    auto b = comm.bound(Op::kAllReduce);
    auto p = comm.predict(Op::kAllReduce, 1.0 * (1ull << 30));
    benchmark::DoNotOptimize(p.time_s + b.busbw_Bps);
  }
  state.counters["gpus"] = static_cast<double>(chassis.gpus().size());
}
BENCHMARK(BM_CliPath)->ArgName("boxes")->Arg(128)->Arg(1024)->Unit(benchmark::kMillisecond);

// BM_CliPath at 128 boxes in steps: 0 the communicator alone, 1 and the bound, 2 and one size with
// auto.
void BM_CliPart(benchmark::State& state) {
  auto chassis = linkwise::topo::load_chassis("dgx-h100", 128);
  const int part = static_cast<int>(state.range(0));
  for (auto _ : state) {
    Communicator comm(chassis);
    if (part >= 1) benchmark::DoNotOptimize(comm.bound(Op::kAllReduce).busbw_Bps);
    if (part >= 2)
      benchmark::DoNotOptimize(comm.predict(Op::kAllReduce, 1.0 * (1ull << 30)).time_s);
  }
}
BENCHMARK(BM_CliPart)->ArgName("step")->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

}  // namespace
