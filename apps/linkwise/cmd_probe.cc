// linkwise probe: discover this machine's topology, check its links, convert NCCL topology files.
// Flags (probe::probe_options) -> probe::ProbeRequest -> probe::run_probe -> files written (all or
// none), then report::probe_output.
#include "commands.h"
#include "linkwise/probe/probe_run.h"
#include "linkwise/report/probe_report.h"
#include "linkwise/util/text.h"

namespace linkwise::cli {

Handler setup_probe(CLI::App& sub) {
  struct Opts {
    probe::ProbeRequest req;
    bool json = false;
  };
  auto opts = std::make_shared<Opts>();
  add_options(sub, probe::probe_options(), opts->req);
  sub.add_flag("--json", opts->json, "Print as JSON");
  sub.footer(
      "Sources (at most one): this machine (default), --sysfs-root DIR, --nccl-xml FILE, --chassis "
      "CHASSIS.\n"
      "Outputs: a table (or --json); -o FILE chassis YAML; --nccl-out FILE NCCL topology XML.\n"
      "Examples:\n"
      "  linkwise probe --check --expect dgx-h100\n"
      "  linkwise probe --nccl-xml topo-dump.xml -o box.yaml\n"
      "  linkwise probe --chassis dgx-h100 --nccl-out topo.xml\n");
  return [opts] {
    auto run = probe::run_probe(opts->req);
    write_files_atomic(run.files);  // every output produced before any is written
    emit(report::probe_output(run, opts->json), "");
    return run.exit_code;
  };
}

}  // namespace linkwise::cli
