// Shared by discovery and the NCCL topology import.
#pragma once

#include "linkwise/hw/catalog.h"
#include "linkwise/topo/spec.h"

namespace linkwise::probe::detail {

/// Guessed or variant parts may have fewer lanes or ports than the machine uses: records what it
/// uses as an override (pcie_lanes, lanes, pcie_width, nvlink_links, ports, socket_links), so the
/// chassis builds and says what it is.
void fit_capacities(topo::ChassisSpec& spec, const hw::Catalog& catalog);

}  // namespace linkwise::probe::detail
