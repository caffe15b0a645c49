// `linkwise bench`: every measurement in one run, its text report and its measurement file.
//
//   linkwise::measure::FakeCuda cuda(linkwise::measure::parse_fake_spec("gpus=2,p2p=370"));
//   linkwise::measure::FakeNccl nccl(cuda);
//   auto report = linkwise::measure::run_bench(cuda, &nccl, nullptr, {}, {});
//   fmt::print("{}", linkwise::report::bench_text(report));   // linkwise/report/bench_report.h
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "linkwise/comm/sweep.h"
#include "linkwise/measure/copy_bench.h"
#include "linkwise/measure/launch.h"
#include "linkwise/measure/measurement.h"
#include "linkwise/measure/nccl_bench.h"
#include "linkwise/measure/sustained.h"
#include "linkwise/util/option_spec.h"

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

/// `linkwise bench`'s flags as given: comma-separated lists, sizes as nccl-tests reads them (8,
/// 64M).
struct BenchFlags {
  std::string gpus, sizes = "64M", engines = "ce,sm", skip, ops = "all_reduce";
  int samples = 3, loops = 16;
  comm::SweepFlags sweep{"8", "128M", {}, {}};  ///< -b, -e, -f
  int iters = 20, warmup = 5, check = 1;        ///< nccl-tests -n, -w, -c
  std::string sustained, sustained_kind = "h2d", sustained_size = "256M", sustained_engine = "ce";
  int sustained_gpu = 0;
  std::string machine;
};

/// The options `flags` ask for, every flag checked (InputError naming it) before a GPU is looked
/// for, so that bad input is refused the same way on any machine.
BenchOptions bench_options(const BenchFlags& flags);
/// `linkwise bench`'s options: flags, help and ranges (util/option_spec.h).
const std::vector<OptionSpec<BenchFlags>>& bench_flags();

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
  /// Whether the run got to its end: false while it runs and when a stop request ended it early
  /// (the measurement file's "complete").
  bool complete = true;
};

/// The measurements a report holds: copy results, latency pairs, collective sizes (rows) and the
/// sustained run (one).
std::size_t measurements_finished(const BenchReport& r);

/// What run_bench will measure, planned before it starts: each copy part's list (run_bench runs
/// these very lists, copy_bench.h), the collectives with their sizes, and the sustained run. A
/// part that does not run is empty.
struct BenchPlan {
  std::vector<CopyResult> host, local, peer_on, peer_off;
  std::vector<LatencyResult> latency_on, latency_off;
  std::vector<comm::Op> ops;              ///< collectives, each run over every size below
  std::vector<std::uint64_t> nccl_sizes;  ///< nccl_sizes(o.nccl_options)
  bool sustained = false;
  /// The measurements planned, counted as measurements_finished() counts them: a run that nothing
  /// stops finishes this many (bench's progress on a terminal counts up to it).
  std::size_t measurements() const;
};
/// The plan of run_bench(cuda, nccl, ..., o, g) on `gpus` (the GPUs it measures); `with_nccl`:
/// whether NCCL loaded.
BenchPlan plan_bench(CudaApi& cuda, bool with_nccl, const std::vector<int>& gpus,
                     const BenchOptions& o, const ProcessGroup& g);

/// What a bench run tells its caller as it goes.
struct BenchHooks {
  /// Called after each finished measurement (a copy result, a latency pair, a collective size, the
  /// sustained run) with everything finished so far (`complete` false). May be empty.
  std::function<void(const BenchReport&)> finished;
  /// Polled between measurements and between the samples (iterations, sizes, windows) of one; once
  /// it returns true the run ends with what finished, `complete` false and a note saying so. Under
  /// mpirun the processes' answers are combined (any process stopping stops all) at the same
  /// points on every process. May be empty (never stop).
  std::function<bool()> stop;
};

/// Runs what `o` asks for on `cuda` (plan_bench's plan). `nccl` and `telemetry` may be null (the
/// parts that need them are skipped with a note). With `group.size` > 1 (mpirun) each process
/// drives its local_rank's GPU and only the collectives run, one rank per process. When stderr is a
/// terminal (and output is not quiet) rank 0 draws "bench: measurements: done/total" there as it
/// goes (util/verbosity.h Progress), cleared at the end.
BenchReport run_bench(CudaApi& cuda, NcclApi* nccl, GpuTelemetry* telemetry, const BenchOptions& o,
                      const ProcessGroup& group, const BenchHooks& hooks = {});

/// What a bench run on this machine measured, and the process group it ran in (only rank 0 prints;
/// finalize() it after printing).
struct BenchRun {
  BenchReport report;
  ProcessGroup group;
};
/// `linkwise bench`: the GPUs (simulated ones from `fake_spec`, measure/fake_gpu.h, when it is not
/// empty; else CUDA's), NCCL and telemetry where they load (a note says why a part was skipped),
/// the process group under mpirun, then run_bench(). Throws RuntimeError when there is no GPU.
BenchRun bench_this_machine(const BenchOptions& o, const std::string& fake_spec,
                            const BenchHooks& hooks = {});

/// The measurement file calibrate reads, with the full results in its extra sections
/// ("devices", "nccl", "latency_us", "sustained").
MeasurementFile bench_measurements(const BenchReport& r);
/// That file as `bench --json` prints it and `bench -o` writes it (JSON, two-space indent).
std::string bench_file_text(const BenchReport& r);

/// Hooks that write the measurement file to `path` after each finished measurement (rank 0 only;
/// nothing when `path` is empty), each time whole and atomically (write_file_atomic: a temporary
/// file, fsync, rename), so that at every moment `path` holds a valid file of what finished, marked
/// "complete": false until the run's own last write. `stop` becomes BenchHooks::stop.
BenchHooks write_as_it_goes(const std::string& path, std::function<bool()> stop = {});

}  // namespace linkwise::measure
