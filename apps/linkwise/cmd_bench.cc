// linkwise bench: measure host-device, peer and collective bandwidth on this machine's GPUs.
#include <fmt/format.h>

#include "commands.h"
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
  add_options(sub, measure::bench_flags(), static_cast<measure::BenchFlags&>(*f));
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
