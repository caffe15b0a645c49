// linkwise bench: measure host-device, peer and collective bandwidth on this machine's GPUs.
#include "commands.h"
#include "linkwise/measure/bench.h"
#include "linkwise/report/bench_report.h"
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
    auto [result, group] = measure::bench_this_machine(o, f->fake);
    auto file = measure::bench_measurements(result);
    std::string json = measure::to_json(file).dump(2) + "\n";
    if (group.rank == 0) {
      emit(f->json ? json : report::bench_text(result), "");
      if (!f->output.empty()) write_file_atomic(f->output, json);
    }
    group.finalize();
    return 0;
  };
}

}  // namespace linkwise::cli
