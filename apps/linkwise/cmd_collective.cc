// linkwise collective CHASSIS --op OP: nccl-tests-style predictions of a collective over a size
// sweep.
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
  auto* o = &opts->req;
  add_chassis_arg(sub, o->chassis)->required();
  sub.add_option("--op", o->op,
                 "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv "
                 "(default all_reduce)");
  sub.add_option("--gpus", o->gpus, "GPUs taking part, e.g. 0,1,2,3 or 0-3 (default: all)");
  sub.add_option("-b,--minbytes", o->sweep.min,
                 "Smallest size, as nccl-tests reads it: 8, 64K, 8M, 8G (default 8)");
  sub.add_option("-e,--maxbytes", o->sweep.max, "Largest size (default 8G)");
  sub.add_option("-f,--stepfactor", o->sweep.factor,
                 "Multiply the size by this whole number (>= 2) between rows (default 2)");
  sub.add_option("-i,--stepbytes", o->sweep.step, "Or add this many bytes between rows, e.g. 1M");
  sub.add_option("--dtype", o->dtype,
                 "Element type, nccl-tests names: float, half, bfloat16, double, int8, ...");
  sub.add_option("--algo", o->algo,
                 "auto (what NCCL's tuner would pick by its own cost model: ring, tree, nvls; "
                 "direct for alltoall and sendrecv), best (the fastest schedule the flow model "
                 "finds among those), ring, tree, nvls, direct, hierarchical (default auto)");
  add_nodes_flag(sub, o->nodes);
  add_as_designed_flag(sub, o->as_designed);
  sub.add_option(
         "--nccl", o->nccl,
         std::string("NCCL settings by name, comma-separated, after the chassis file's `nccl:` "
                     "ones: ") +
             comm::nccl_settings_help())
      ->allow_extra_args(false);
  add_json_output_flags(sub, opts->json, opts->output);
  return [opts] {
    auto r = comm::predict_sweep(opts->req);
    emit(opts->json ? report::collective_json(r).dump(2) + "\n" : report::collective_text(r),
         opts->output);
    return 0;
  };
}

}  // namespace linkwise::cli
