// One call behind `linkwise probe`: which source to read (this machine, a copy of sysfs, an NCCL
// topology dump or a designed chassis), what to check, and the files to write, all produced before
// anything is written. report::probe_output renders the result.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "linkwise/probe/check.h"
#include "linkwise/probe/discover.h"
#include "linkwise/topo/analysis.h"
#include "linkwise/util/option_spec.h"

namespace linkwise::probe {

struct ProbeRequest {
  std::string sysfs_root;  ///< a copy of sysfs; "" with no other source: this machine
  std::string nccl_in;     ///< NCCL's topology dump (NCCL_TOPO_DUMP_FILE) to read instead
  std::string chassis;     ///< a designed chassis (preset or YAML) to read instead
  std::string name = "probed";
  bool check = false, strict = false, no_nvml = false;
  std::string expect;              ///< with check: the designed chassis to compare against
  std::string yaml_out, nccl_out;  ///< files to produce ("" for none)
};

struct ProbeRun {
  enum class Kind { kMachine, kCheck, kImported };
  Kind kind = Kind::kMachine;
  Machine machine;                             ///< kMachine, kCheck
  Discovery discovery;                         ///< kMachine, kCheck
  std::optional<CheckReport> check;            ///< kCheck
  std::optional<topo::Chassis> chassis;        ///< kImported: the chassis read, built
  std::optional<topo::TopoAnalysis> analysis;  ///< kImported
  std::vector<std::string> notes;              ///< kImported: what the import left out
  std::vector<std::string> synthetic;          ///< NCCL export: devices whose bus ids are synthetic
  /// (path, contents) of every file asked for; write all or none (util write_files_atomic).
  std::vector<std::pair<std::string, std::string>> files;
  int exit_code = 0;  ///< 1 when the check found the machine unhealthy
};

/// Reads the source `r` names and produces every output. Throws InputError for contradictory
/// flags (two sources, --check with a file source, --expect without --check) and bad files.
ProbeRun run_probe(const ProbeRequest& r);
/// `linkwise probe`'s options: flags, help and Python keywords (util/option_spec.h).
const std::vector<OptionSpec<ProbeRequest>>& probe_options();

}  // namespace linkwise::probe
