#include "linkwise/measure/bench.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "linkwise/util/error.h"

namespace linkwise::measure {

namespace {

void run_collectives(CudaApi& cuda, NcclApi& nccl, const BenchOptions& o, const ProcessGroup& g,
                     const std::vector<int>& gpus, BenchReport& r) {
  RankSet rs;
  if (g.size > 1) {
    int dev = gpus.at(0);
    std::string id = g.broadcast(g.rank == 0 ? nccl.unique_id() : std::string());
    rs.nranks = g.size;
    rs.devices = {dev};
    rs.ranks = {g.rank};
    rs.comms = {nccl.init_rank(g.size, id, g.rank, dev)};
    rs.sum_over_processes = g.sum;
  } else {
    rs.nranks = static_cast<int>(gpus.size());
    rs.devices = gpus;
    for (int i = 0; i < rs.nranks; ++i) rs.ranks.push_back(i);
    rs.comms = nccl.init_all(gpus);
  }
  try {
    for (auto op : o.ops) {
      NcclOptions no = o.nccl_options;
      no.op = op;
      r.nccl.push_back(run_nccl_sweep(cuda, nccl, rs, no));
    }
  } catch (...) {
    for (auto c : rs.comms) try { nccl.destroy(c); } catch (...) {}
    throw;
  }
  for (auto c : rs.comms) nccl.destroy(c);
}

}  // namespace

BenchReport run_bench(CudaApi& cuda, NcclApi* nccl, GpuTelemetry* telemetry, const BenchOptions& o,
                      const ProcessGroup& g) {
  std::string why;
  int count = cuda.device_count(&why);
  if (count == 0) throw RuntimeError("no GPU found: " + why);
  BenchReport r;
  r.machine = o.machine;
  r.copy = o.copy;
  r.process_rank = g.rank;
  std::vector<int> gpus = o.gpus;
  if (g.size > 1) {
    if (g.local_rank >= count)
      throw RuntimeError(fmt::format("rank {} has local rank {} but its box has {} GPU(s)", g.rank, g.local_rank, count));
    gpus = {g.local_rank};
  } else if (gpus.empty()) {
    for (int i = 0; i < count; ++i) gpus.push_back(i);
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    int d = gpus[i];
    if (std::find(gpus.begin(), gpus.begin() + i, d) != gpus.begin() + i)
      throw InputError(fmt::format("--gpus: GPU {} is listed twice", d));
    if (d < 0 || d >= count) throw InputError(fmt::format("--gpus: no GPU {} (this machine has {})", d, count));
    r.devices.push_back(cuda.device_info(d));
  }
  if (g.size > 1) {
    r.notes.push_back("under mpirun: copy benchmarks skipped, collectives run one rank per process");
  } else {
    if (o.host) r.host = bench_host_device(cuda, gpus, o.copy);
    if (o.local) r.local = bench_local(cuda, gpus, o.copy);
    if (o.peer && gpus.size() > 1) {
      r.peer_on = bench_peer(cuda, gpus, true, o.copy);
      r.peer_off = bench_peer(cuda, gpus, false, o.copy);
    }
    if (o.latency && gpus.size() > 1) {
      r.latency_on = bench_latency(cuda, gpus, true);
      r.latency_off = bench_latency(cuda, gpus, false);
    }
    if ((o.peer || o.latency) && gpus.size() < 2) r.notes.push_back("one GPU: no peer bandwidth or latency to measure");
  }
  if (o.nccl) {
    if (nccl)
      run_collectives(cuda, *nccl, o, g, gpus, r);
    else
      r.notes.push_back("collectives skipped: NCCL is not available");
  }
  if (o.sustained && g.rank == 0) {
    SustainedOptions so = *o.sustained;
    if (std::find(gpus.begin(), gpus.end(), so.gpu) == gpus.end()) {
      // Under mpirun rank 0 holds it on its own GPU; otherwise the GPU must be one being measured.
      if (g.size == 1)
        throw InputError(fmt::format("--sustained-gpu: GPU {} is not among the measured GPUs ({})", so.gpu,
                                     fmt::join(gpus, ",")));
      so.gpu = gpus[0];
    }
    r.sustained = run_sustained(cuda, telemetry, so);
  }
  return r;
}

}  // namespace linkwise::measure
