// Google Benchmark: the design search (linkwise design). Results in docs/PERFORMANCE.md, section
// "Design". BM_DesignClosedForm builds, budget-checks and scores in closed form every candidate of
// an 8-GPU space with one training workload (the space of
// examples/design/training-appliance-space.yaml with 8 GPUs only and one workload);
// candidates_per_s counts every candidate of the space per second of wall time. A fresh score cache
// each iteration: every distinct chassis is scored every time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <ctime>

#include "linkwise/design/search.h"

namespace {

using namespace linkwise;

const char* kSpace = R"(
name: bench-8gpu
gpus:
  - {part: h200-sxm, counts: [8], fabrics: [nvswitch]}
  - {part: h100-pcie, counts: [8], fabrics: [none, bridge-pairs]}
  - {part: a100-pcie, counts: [8], fabrics: [none, bridge-pairs]}
cpus:
  - {part: xeon-6960p, sockets: [1, 2]}
  - {part: epyc-9654, sockets: [1, 2], socket_links: 3}
pcie:
  generations: [4, 5]
  arrangements: [root-ports, switch-per-2, switch-per-4, cascaded]
  uplink_widths: [8, 16]
  switch: pex89144
  retimer: astera-aries-pt5161l
nvswitch: {part: nvswitch-gen3, count: 4}
board:
  materials: [fr4, nelco-4000-6, megtron6]
  slots: [{trace_mm: 120}, {trace_mm: 160}, {trace_mm: 200}, {trace_mm: 240}, {trace_mm: 280}, {trace_mm: 320}, {trace_mm: 360}, {trace_mm: 400}]
  uplink: {trace_mm: 450, material: twinax-cable, connectors: 2}
nics:
  - {part: connectx-7, counts: [2, 8]}
nvme: {part: kioxia-cm7, count: 4, width: 4}
budgets:
  power: {supplies: 6, supply_w: 3000, redundant: 3}
  cooling_zones:
    - {id: gpu, capacity_w: 7000, kinds: [gpu, nvswitch]}
    - {id: host, capacity_w: 2200, kinds: [cpu, pcie_switch, nic, nvme, retimer]}
workloads:
  - {name: llama70b-full, model: llama3-70b, mode: full, recompute: full}
)";

void BM_DesignClosedForm(benchmark::State& state) {
  auto space = design::parse_space(kSpace, "bench.yaml");
  std::uint64_t distinct = 0, feasible = 0;
  // Process CPU time (every thread): on a machine shared with other jobs the wall time says how
  // much of the cores this process got, the CPU time what the work costs.
  double cpu_s = 0;
  for (auto _ : state) {
    std::clock_t c0 = std::clock();
    feasible = design::score_all(space, static_cast<int>(state.range(0)), &distinct);
    cpu_s += static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  }
  state.counters["candidates_per_cpu_s"] = static_cast<double>(space.candidate_count()) *
                                           static_cast<double>(state.iterations()) /
                                           std::max(cpu_s, 1e-9);
  state.counters["candidates"] = static_cast<double>(space.candidate_count());
  state.counters["distinct_chassis"] = static_cast<double>(distinct);
  state.counters["feasible"] = static_cast<double>(feasible);
  state.counters["candidates_per_s"] = benchmark::Counter(
      static_cast<double>(space.candidate_count()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_DesignClosedForm)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
