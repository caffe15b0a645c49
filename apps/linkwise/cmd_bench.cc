// linkwise bench: measure host-device, peer and collective bandwidth on this machine's GPUs.
#include <fmt/format.h>

#include "commands.h"
#include "linkwise/comm/sweep.h"
#include "linkwise/measure/bench.h"
#include "linkwise/report/bench_report.h"
#include "linkwise/util/stop_signals.h"
#include "linkwise/util/text.h"

namespace linkwise::cli {

Handler setup_bench(CLI::App& sub) {
  struct Flags : measure::BenchFlags {
    std::string output, fake;
    bool json = false;
  };
  auto f = std::make_shared<Flags>();
  sub.add_option("--gpus", f->gpus, "CUDA devices to measure, e.g. 0,1 (default: all)");
  sub.add_option("--sizes", f->sizes, "Copy sizes, e.g. 4M,64M,256M (default 64M, as nvbandwidth)");
  sub.add_option("--engines", f->engines, "Copy engines: ce (cudaMemcpyAsync), sm (copy kernel)");
  sub.add_option("--samples", f->samples, "Samples per figure; the median is reported (default 3)")
      ->check(CLI::Range(1, 1000));
  sub.add_option("--loops", f->loops, "Copies per sample (default 16)")
      ->check(CLI::Range(1, 100000));
  sub.add_option("--skip", f->skip, "Parts to skip: host, local, peer, latency, nccl");
  sub.add_option("--ops", f->ops,
                 "Collectives: all_reduce, all_gather, reduce_scatter, broadcast, reduce, "
                 "alltoall, sendrecv, or all");
  sub.add_option("-b,--minbytes", f->sweep.min,
                 "Smallest collective size (nccl-tests -b; default 8)");
  sub.add_option("-e,--maxbytes", f->sweep.max,
                 "Largest collective size (nccl-tests -e; default 128M)");
  sub.add_option("-f,--stepfactor", f->sweep.factor,
                 "Size factor between collective sizes, a whole number >= 2 (nccl-tests -f; "
                 "default 2)");
  sub.add_option("-n,--iters", f->iters, "Timed collective iterations (nccl-tests -n; default 20)")
      ->check(CLI::Range(1, 100000));
  sub.add_option("-w,--warmup_iters", f->warmup, "Warm-up iterations (nccl-tests -w; default 5)")
      ->check(CLI::Range(0, 100000));
  sub.add_option("-c,--check", f->check, "Check collective results (nccl-tests -c; default 1)")
      ->check(CLI::Range(0, 1));
  auto* sustained =
      sub.add_option("--sustained", f->sustained,
                     "Hold a transfer this long (90s, 5m) beside temperature, clocks and power");
  sub.add_option("--sustained-kind", f->sustained_kind,
                 "Transfer to hold: h2d, d2h, bidir, p2p, d2d_local (default h2d)")
      ->needs(sustained);
  sub.add_option("--sustained-size", f->sustained_size, "Size of each held copy (default 256M)")
      ->needs(sustained);
  sub.add_option("--sustained-engine", f->sustained_engine, "ce or sm (default ce)")
      ->needs(sustained);
  sub.add_option("--sustained-gpu", f->sustained_gpu, "GPU of the held transfer (default 0)")
      ->needs(sustained);
  sub.add_option("--machine", f->machine,
                 "Free text naming the machine, written into the measurement file");
  sub.add_flag("--json", f->json, "Print the measurement file (JSON) instead of tables");
  sub.add_option("-o,--output", f->output,
                 "Also write the measurement file (JSON, for linkwise calibrate) here");
  sub.add_option("--fake-gpus", f->fake, "Run on a simulated machine (tests)")->group("");
  return [f] {
    auto o = measure::bench_options(*f);
    StopSignals sig;  // Ctrl-C, SIGTERM: stop after the measurement in progress, keep what finished
    auto [result, group] = measure::bench_this_machine(
        o, f->fake, measure::write_as_it_goes(f->output, [&sig] { return sig.requested(); }));
    std::string json = measure::bench_file_text(result);
    if (group.rank == 0) {
      emit(f->json ? json : report::bench_text(result), "");
      if (!f->output.empty()) write_file_atomic(f->output, json);
      fmt::print(stderr, "{}", report::bench_stopped_line(result, sig.name(), f->output));
    }
    group.finalize();
    return sig.exit_code();
  };
}

}  // namespace linkwise::cli
