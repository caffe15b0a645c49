// linkwise probe: discover this machine's topology, check its links, convert NCCL topology files.
#include <fmt/format.h>

#include "commands.h"
#include "linkwise/probe/check.h"
#include "linkwise/probe/discover.h"
#include "linkwise/probe/nccl_xml.h"
#include "linkwise/report/probe_report.h"
#include "linkwise/report/topo_report.h"
#include "linkwise/topo/analysis.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"
#include "linkwise/util/text.h"

namespace linkwise::cli {

namespace {

struct ProbeOpts {
  std::string sysfs_root;
  std::string output;
  std::string name = "probed";
  bool check = false, strict = false, json = false, no_nvml = false;
  std::string expect;
  std::string nccl_in, nccl_out, chassis;
};

// What a chassis from --chassis or --nccl-xml holds, as `linkwise topo` shows it (it builds, or
// throws before anything is written), with what the import left out.
std::string chassis_summary(const topo::ChassisSpec& spec, const std::vector<std::string>& notes,
                            bool json) {
  auto chassis = topo::build_chassis(spec);
  auto analysis = topo::analyse(chassis);
  return json ? report::imported_json(chassis, analysis, notes).dump(2) + "\n"
              : report::imported_text(chassis, analysis, notes);
}

int run_probe(const ProbeOpts& o) {
  int sources = !o.nccl_in.empty() + !o.chassis.empty() + !o.sysfs_root.empty();
  if (sources > 1) throw InputError("give at most one of --sysfs-root, --nccl-xml and --chassis");
  if ((!o.nccl_in.empty() || !o.chassis.empty()) && o.check)
    throw InputError("--check reads a machine: it cannot be combined with --nccl-xml or --chassis");
  topo::ChassisSpec spec;
  std::string printed;
  int code = 0;
  if (!o.nccl_in.empty() || !o.chassis.empty()) {
    std::vector<std::string> notes;
    spec = o.nccl_in.empty()
               ? topo::load_spec(o.chassis)
               : probe::import_nccl_topology(read_file(o.nccl_in), o.nccl_in,
                                             o.name == "probed" ? "" : o.name, &notes);
    printed = chassis_summary(spec, notes, o.json);
  } else {
    auto [m, d] = probe::read_this_machine(o.sysfs_root, o.no_nvml, o.name);
    spec = d.spec;
    if (o.check) {
      probe::CheckOptions co;
      co.strict = o.strict;
      topo::ChassisSpec expected;
      if (!o.expect.empty()) {
        expected = topo::load_spec(o.expect);
        co.expect = &expected;
      }
      auto r = probe::check(m, d, co);
      printed = o.json ? report::check_json(r).dump(2) + "\n"
                       : report::probe_text(m, d) + "\n" + report::check_text(r);
      code = r.healthy() ? 0 : 1;
    } else {
      printed = o.json ? report::probe_json(m, d).dump(2) + "\n" : report::probe_text(m, d);
    }
  }
  // Outputs are produced in full before any is written, and each is written atomically.
  std::string yaml = o.output.empty() ? "" : topo::chassis_spec_to_yaml(spec);
  std::vector<std::string> synthetic;
  std::string xml =
      o.nccl_out.empty() ? "" : probe::export_nccl_topology(topo::build_chassis(spec), &synthetic);
  if (!o.json) printed += report::nccl_synthetic_note(synthetic);
  std::vector<std::pair<std::string, std::string>> files;  // all written or none
  if (!o.output.empty()) files.emplace_back(o.output, yaml);
  if (!o.nccl_out.empty()) files.emplace_back(o.nccl_out, xml);
  write_files_atomic(files);
  emit(printed, "");
  return code;
}

}  // namespace

Handler setup_probe(CLI::App& sub) {
  auto o = std::make_shared<ProbeOpts>();
  sub.add_option("--sysfs-root", o->sysfs_root,
                 "Read a copy of sysfs (a folder standing for /sys, or for / with sys/ and proc/)")
      ->type_name("DIR");
  sub.add_option("-o,--output", o->output,
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
  sub.add_flag("--json", o->json, "Print as JSON");
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
  return [o] {
    if (!o->expect.empty() && !o->check) throw InputError("--expect needs --check");
    return run_probe(*o);
  };
}

}  // namespace linkwise::cli
