// linkwise probe: discover this machine's topology, check its links, convert NCCL topology files.
// Flags -> probe::ProbeRequest -> probe::run_probe -> files written (all or none), then
// report::probe_output.
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
  auto* o = &opts->req;
  sub.add_option("--sysfs-root", o->sysfs_root,
                 "Read a copy of sysfs (a folder standing for /sys, or for / with sys/ and proc/)")
      ->type_name("DIR");
  sub.add_option("-o,--output", o->yaml_out,
                 "Write the machine (or the --chassis/--nccl-xml chassis) as a chassis YAML file "
                 "(atomically)")
      ->type_name("FILE");
  sub.add_option("--name", o->name,
                 "Chassis name written with -o (default: probed; for --nccl-xml, the file name)")
      ->type_name("NAME");
  sub.add_flag("--check", o->check,
               "Check links, ACS, IOMMU and NVLinks; exit 1 when something is wrong");
  sub.add_option("--expect", o->expect,
                 "With --check: the designed chassis (preset or YAML) to compare against")
      ->type_name("CHASSIS");
  sub.add_flag("--strict", o->strict, "With --check: warnings count as faults");
  sub.add_flag("--json", opts->json, "Print as JSON");
  sub.add_flag("--no-nvml", o->no_nvml, "Do not load NVML (NVLinks are not read)");
  sub.add_option("--nccl-xml", o->nccl_in,
                 "Read NCCL's topology dump (NCCL_TOPO_DUMP_FILE) instead of the machine")
      ->type_name("FILE");
  sub.add_option(
         "--chassis", o->chassis,
         "Use a designed chassis (preset or YAML) instead of the machine, e.g. to export it")
      ->type_name("CHASSIS");
  sub.add_option("--nccl-out", o->nccl_out,
                 "Write the chassis as an NCCL topology file (for NCCL_TOPO_FILE)")
      ->type_name("FILE");
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
