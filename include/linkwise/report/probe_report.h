// What `linkwise probe` prints: the devices found, CPU sockets, IOMMU mode, NVLinks, and what could
// not be read; and what `linkwise probe --check` found. Rendering only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "linkwise/probe/check.h"
#include "linkwise/probe/discover.h"
#include "linkwise/probe/probe_run.h"
#include "linkwise/topo/analysis.h"

namespace linkwise::report {

std::string probe_text(const probe::Machine& m, const probe::Discovery& d);
/// {chassis, sockets, devices: [...], links: [...], iommu, nvlink: {read, why_not, links},
/// other_devices, notes}
nlohmann::json probe_json(const probe::Machine& m, const probe::Discovery& d);
/// A chassis read from a file (--chassis, --nccl-xml) as `linkwise topo` shows it, with what the
/// import left out (`notes`).
std::string imported_text(const topo::Chassis& chassis, const topo::TopoAnalysis& a,
                          const std::vector<std::string>& notes);
nlohmann::json imported_json(const topo::Chassis& chassis, const topo::TopoAnalysis& a,
                             const std::vector<std::string>& notes);
/// The findings of --check, worst first, and the verdict.
std::string check_text(const probe::CheckReport& r);
nlohmann::json check_json(const probe::CheckReport& r);

/// The line `probe --nccl-out` prints when bus IDs of the exported topology are synthetic; "" when
/// none.
std::string nccl_synthetic_note(const std::vector<std::string>& synthetic);

/// Everything `linkwise probe` prints for `run`: the imported chassis, the machine, or the machine
/// and its check; then the synthetic bus id note (text only).
std::string probe_output(const probe::ProbeRun& run, bool json);

}  // namespace linkwise::report
