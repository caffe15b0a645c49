// What `linkwise probe` prints: the devices found, CPU sockets, IOMMU mode, NVLinks, and what could
// not be read. Rendering only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "linkwise/probe/discover.h"

namespace linkwise::probe {

std::string probe_text(const Machine& m, const Discovery& d);
/// {chassis, sockets, devices: [...], links: [...], iommu, nvlink: {read, why_not, links}, other_devices, notes}
nlohmann::json probe_json(const Machine& m, const Discovery& d);

}  // namespace linkwise::probe
