// probe::run_probe: the probe command's sources, checks and output files (no rendering).
#include "linkwise/probe/probe_run.h"

#include "linkwise/probe/nccl_xml.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"
#include "linkwise/util/text.h"

namespace linkwise::probe {

ProbeRun run_probe(const ProbeRequest& r) {
  int sources = !r.nccl_in.empty() + !r.chassis.empty() + !r.sysfs_root.empty();
  if (sources > 1) throw InputError("give at most one of --sysfs-root, --nccl-xml and --chassis");
  bool from_file = !r.nccl_in.empty() || !r.chassis.empty();
  if (from_file && r.check)
    throw InputError("--check reads a machine: it cannot be combined with --nccl-xml or --chassis");
  if (!r.expect.empty() && !r.check) throw InputError("--expect needs --check");
  ProbeRun run;
  topo::ChassisSpec spec;
  if (from_file) {
    run.kind = ProbeRun::Kind::kImported;
    spec = r.nccl_in.empty() ? topo::load_spec(r.chassis)
                             : import_nccl_topology(read_file(r.nccl_in), r.nccl_in,
                                                    r.name == "probed" ? "" : r.name, &run.notes);
    // As `linkwise topo` shows it: it builds, or throws before anything is written.
    run.chassis = topo::build_chassis(spec);
    run.analysis = topo::analyse(*run.chassis);
  } else {
    std::tie(run.machine, run.discovery) = read_this_machine(r.sysfs_root, r.no_nvml, r.name);
    spec = run.discovery.spec;
    if (r.check) {
      run.kind = ProbeRun::Kind::kCheck;
      CheckOptions co;
      co.strict = r.strict;
      topo::ChassisSpec expected;
      if (!r.expect.empty()) {
        expected = topo::load_spec(r.expect);
        co.expect = &expected;
      }
      run.check = check(run.machine, run.discovery, co);
      run.exit_code = run.check->healthy() ? 0 : 1;
    }
  }
  if (!r.yaml_out.empty()) run.files.emplace_back(r.yaml_out, topo::chassis_spec_to_yaml(spec));
  if (!r.nccl_out.empty())
    run.files.emplace_back(r.nccl_out,
                           export_nccl_topology(topo::build_chassis(spec), &run.synthetic));
  return run;
}

const std::vector<OptionSpec<ProbeRequest>>& probe_options() {
  using P = ProbeRequest;
  using Spec = OptionSpec<P>;
  static const std::vector<Spec> specs = {
      Spec{"--sysfs-root", at<&P::sysfs_root>,
           "Read a copy of sysfs (a folder standing for /sys, or for / with sys/ and proc/)"}
          .type("DIR"),
      Spec{"-o,--output", at<&P::yaml_out>,
           "Write the machine (or the --chassis/--nccl-xml chassis) as a chassis YAML file "
           "(atomically)"}
          .type("FILE"),
      Spec{"--name", at<&P::name>,
           "Chassis name written with -o (default: probed; for --nccl-xml, the file name)"}
          .type("NAME"),
      {"--check", at<&P::check>,
       "Check links, ACS, IOMMU and NVLinks; exit 1 when something is wrong"},
      Spec{"--expect", at<&P::expect>,
           "With --check: the designed chassis (preset or YAML) to compare against"}
          .type("CHASSIS"),
      {"--strict", at<&P::strict>, "With --check: warnings count as faults"},
      {"--no-nvml", at<&P::no_nvml>, "Do not load NVML (NVLinks are not read)"},
      Spec{"--nccl-xml", at<&P::nccl_in>,
           "Read NCCL's topology dump (NCCL_TOPO_DUMP_FILE) instead of the machine"}
          .type("FILE"),
      Spec{"--chassis", at<&P::chassis>,
           "Use a designed chassis (preset or YAML) instead of the machine, e.g. to export it"}
          .type("CHASSIS"),
      Spec{"--nccl-out", at<&P::nccl_out>,
           "Write the chassis as an NCCL topology file (for NCCL_TOPO_FILE)"}
          .type("FILE"),
  };
  return specs;
}

}  // namespace linkwise::probe
