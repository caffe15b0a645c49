// Parts of read_machine(): CPU sockets and NUMA nodes, the IOMMU mode, NVML's NVLinks.
#pragma once

#include <string>
#include <vector>

#include "linkwise/probe/machine.h"

namespace linkwise::probe::detail {

std::vector<PciDevice> read_pci_devices(const SysfsReader& sys, std::vector<std::string>& notes);
void read_cpus(const SysfsReader& sys, Machine& m);
void read_iommu(const SysfsReader& sys, Machine& m);
void read_nvml(NvmlApi* nvml, const std::string& missing_why, Machine& m);

/// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; nullopt when malformed or absurdly large.
std::optional<std::vector<int>> parse_cpulist(const std::string& text);

}  // namespace linkwise::probe::detail
