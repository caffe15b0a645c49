// `linkwise bench`: every measurement in one run, its text report and its measurement file.
//
//   linkwise::measure::FakeCuda cuda(linkwise::measure::parse_fake_spec("gpus=2,p2p=370"));
//   linkwise::measure::FakeNccl nccl(cuda);
//   auto report = linkwise::measure::run_bench(cuda, &nccl, nullptr, {}, {});
//   fmt::print("{}", linkwise::measure::bench_text(report));
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "linkwise/measure/copy_bench.h"
#include "linkwise/measure/launch.h"
#include "linkwise/measure/measurement.h"
#include "linkwise/measure/nccl_bench.h"
#include "linkwise/measure/sustained.h"

namespace linkwise::measure {

struct BenchOptions {
  std::vector<int> gpus;  ///< CUDA device numbers; empty = every visible device
  CopyOptions copy;
  bool host = true, peer = true, local = true, latency = true, nccl = true;
  std::vector<comm::Op> ops = {comm::Op::kAllReduce};
  NcclOptions nccl_options;
  std::optional<SustainedOptions> sustained;
  std::string machine;  ///< free text written into the measurement file
};

struct BenchReport {
  std::string machine;
  std::vector<DeviceInfo> devices;
  std::vector<CopyResult> host, peer_on, peer_off, local;
  std::vector<LatencyResult> latency_on, latency_off;
  std::vector<NcclSweep> nccl;
  std::optional<SustainedResult> sustained;
  CopyOptions copy;
  std::vector<std::string> notes;  ///< parts skipped and why
  int process_rank = 0;            ///< under mpirun: this process's rank (only rank 0 prints)
};

/// Runs what `o` asks for on `cuda`. `nccl` and `telemetry` may be null (the parts that need them are
/// skipped with a note). With `group.size` > 1 (mpirun) each process drives its local_rank's GPU and
/// only the collectives run, one rank per process.
BenchReport run_bench(CudaApi& cuda, NcclApi* nccl, GpuTelemetry* telemetry, const BenchOptions& o,
                      const ProcessGroup& group);

/// The readable report: host-device table, peer matrices as p2pBandwidthLatencyTest prints them
/// (diagonal: local copy), latency matrices, nccl-tests tables, the sustained run.
std::string bench_text(const BenchReport& r);
/// The measurement file calibrate reads, with the full results in its extra sections
/// ("devices", "nccl", "latency_us", "sustained").
MeasurementFile bench_measurements(const BenchReport& r);

}  // namespace linkwise::measure
