// PCI vendor/device ids and class codes -> catalog parts.
#pragma once

#include <string>

namespace linkwise::probe::detail {

/// What a PCI function is to the chassis model.
enum class DeviceKind { kGpu, kNic, kNvme, kNvSwitch, kBridge, kOther };

/// From the class code and vendor: GPUs are NVIDIA/AMD display or processing-accelerator functions
/// (a BMC's VGA function is not), NICs Ethernet or InfiniBand controllers, NVMe class 0x010802,
/// NVSwitches NVIDIA "bridge, other" functions.
DeviceKind kind_of(unsigned vendor, unsigned class_code);

struct KnownPart {
  const char* part = nullptr;  ///< catalog id, or nullptr when the id is not in the table
  const char* name = nullptr;  ///< the PCI ID repository's name for the device
};

/// The catalog part for a vendor:device id.
KnownPart known_part(unsigned vendor, unsigned device);

/// The first vendor:device id the table gives for a catalog part; false when it has none.
bool ids_for_part(const std::string& part, unsigned* vendor, unsigned* device);

/// The catalog CPU for an x86 CPUID family and model (NCCL's familyid/modelid), or "".
std::string cpu_part_for_cpuid(const std::string& vendor, int family, int model);

/// The x86 CPUID vendor string, family and model of a catalog CPU; false when the table has none.
bool cpuid_for_part(const std::string& part, std::string* vendor, int* family, int* model);

/// The catalog part closest to an unknown device of `kind`, by vendor and PCIe generation (0:
/// unknown).
std::string closest_part(DeviceKind kind, unsigned vendor, int pcie_gen);

/// The catalog CPU for a /proc/cpuinfo model name, or "" when none matches.
std::string cpu_part_for_model(const std::string& model_name);
/// The closest catalog CPU by vendor ("GenuineIntel", "AuthenticAMD") and highest PCIe generation
/// seen.
std::string closest_cpu_part(const std::string& vendor, int pcie_gen);

}  // namespace linkwise::probe::detail
