// linkwise collective CHASSIS --collective NAME: a collective predicted over a size sweep, printed
// as nccl-tests prints, with nccl-tests' flags where they mean the same (docs/collectives.md).
#include "commands.h"
#include "linkwise/comm/sweep.h"
#include "linkwise/report/collective_report.h"

namespace linkwise::cli {

Handler setup_collective(CLI::App& sub) {
  struct Opts {
    comm::SweepRequest req;
    std::string output;
    bool json = false;
  };
  auto opts = std::make_shared<Opts>();
  add_options(sub, comm::sweep_options(), opts->req);
  add_json_output_flags(sub, opts->json, opts->output, "--output");
  return [opts] {
    auto r = comm::predict_sweep(opts->req);
    emit(opts->json ? report::collective_json(r).dump(2) + "\n" : report::collective_text(r),
         opts->output);
    return 0;
  };
}

}  // namespace linkwise::cli
