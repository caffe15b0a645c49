// What `linkwise probe` reads from a machine: the PCIe tree, CPU sockets and NUMA nodes, the IOMMU
// mode and NVLinks, as plain facts. discover() (probe/discover.h) turns them into a chassis spec
// and the links it found; check() (probe/check.h) holds them against what they should be.
//
// Sources (all below the SysfsReader's folders):
//   bus/pci/devices/<addr>/{vendor,device,class,numa_node}                  ids and NUMA node
//   bus/pci/devices/<addr>/{current,max}_link_{speed,width}                the link above the
//   device bus/pci/devices/<addr> -> devices/pci<dom:bus>/<root port>/.../<addr>  the tree (bridges
//   above it) bus/pci/devices/<addr>/config                                          port type, ACS
//   control bus/pci/slots/<name>/address                                           physical slot
//   names devices/system/node/node*/cpulist, devices/system/cpu/cpu*/topology/physical_package_id
//   class/iommu, kernel/iommu_groups/*/type, /proc/cmdline                 IOMMU mode
//   /proc/cpuinfo                                                          CPU model name
//
//   linkwise::probe::SysfsReader sys;
//   std::string why;
//   auto nvml = linkwise::probe::open_nvml(&why);
//   auto m = linkwise::probe::read_machine(sys, nvml.get(), why);
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "linkwise/probe/nvml.h"
#include "linkwise/probe/sysfs.h"

namespace linkwise::probe {

/// One end's view of a PCIe link, as sysfs prints it. Generations and widths are 0 when unknown.
struct PcieLinkState {
  int cur_gen = 0, max_gen = 0;                ///< 1..6 from "2.5/5.0/8.0/16.0/32.0/64.0 GT/s"
  int cur_width = 0, max_width = 0;            ///< lanes
  std::string cur_speed_text, max_speed_text;  ///< as read ("16.0 GT/s PCIe"), for reports
  /// The current speed / width file is there but gives no value ("Unknown", garbage, unreadable):
  /// the trained state is unknown, and the port's view is not put in its place.
  bool cur_gen_unreadable = false, cur_width_unreadable = false;
  bool present() const { return max_gen > 0 || max_width > 0 || cur_gen > 0 || cur_width > 0; }
};

/// PCI Express Capabilities register, Device/Port Type (PCIe Base Spec, §7.5.3.2; Linux pci_regs.h
/// PCI_EXP_TYPE_*): what a bridge is.
enum class PortType {
  kUnknown,
  kEndpoint,
  kRootPort,
  kUpstream,
  kDownstream,
  kPcieToPci,
  kRcEndpoint,
  kOther
};
const char* to_string(PortType t);

/// PCIe Advanced Error Reporting counters as Linux keeps them since boot (sysfs
/// aer_dev_correctable, aer_dev_nonfatal, aer_dev_fatal;
/// Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats): one
/// "<error> <count>" line per error type and a TOTAL_ERR_* line.
struct AerCounters {
  std::optional<std::uint64_t> correctable, nonfatal,
      fatal;  ///< TOTAL_ERR_COR/NONFATAL/FATAL; nullopt: not read
  std::vector<std::pair<std::string, std::uint64_t>>
      nonzero;  ///< error types with a count above zero, as named
  bool read() const { return correctable || nonfatal || fatal; }
};

struct PciDevice {
  std::string address;     ///< "0000:1b:00.0"
  std::string sysfs_path;  ///< "devices/pci0000:17/0000:17:01.0/.../0000:1b:00.0", relative to /sys
  std::string root_bus;    ///< the host bridge's root bus, "0000:17"; "" when not under one
  std::string parent;      ///< address of the PCI device (bridge) directly above, or ""
  std::vector<std::string> chain;  ///< addresses from the top of the tree down to this device
  unsigned vendor = 0, device = 0;
  unsigned class_code = 0;  ///< 24 bits: class, subclass, programming interface (0x030200)
  bool ids_read = false;    ///< vendor, device and class were all readable and well formed
  int numa = -1;            ///< numa_node, -1 when unknown
  PcieLinkState link;       ///< this device's link files: the link to the port above it
  PortType port_type = PortType::kUnknown;  ///< from config space, when readable
  std::optional<bool> acs_p2p_redirect;     ///< ACS P2P Request Redirect enabled; nullopt: not read
  /// PCI Express Link Status register (capability + 0x12, PCIe Base Spec §7.5.3.8); nullopt: not
  /// read. Bit 14 Link Bandwidth Management Status: the link retrained or changed speed/width for
  /// reliability; bit 15 Link Autonomous Bandwidth Status: it changed on its own for another
  /// reason.
  std::optional<unsigned> link_status;
  AerCounters aer;
  std::string slot;                ///< physical slot name from bus/pci/slots, or ""
  bool virtual_function = false;   ///< an SR-IOV virtual function (has a physfn link)
  std::vector<std::string> notes;  ///< what could not be read, and why

  bool is_bridge() const { return (class_code >> 8) == 0x0604; }
  /// "pci0000:17/0000:17:01.0/0000:18:00.0/0000:1b:00.0": the slot path used in reports.
  std::string slot_path() const;
};

struct CpuSocket {
  int id = 0;                   ///< physical_package_id
  std::vector<int> numa_nodes;  ///< sorted
  int cpus = 0;                 ///< logical CPUs
  std::string cpulist;          ///< e.g. "0-55,112-167"
};

struct IommuState {
  bool enabled = false;      ///< an IOMMU is active (class/iommu has entries, or groups exist)
  bool passthrough = false;  ///< every group is "identity", or iommu=pt on the command line
  std::string mode;          ///< "off", "pass-through", "translated", "unknown"
  std::vector<std::string> evidence;  ///< what the verdict rests on
};

struct NvlinkState {
  std::string gpu;  ///< the GPU's PCI address
  unsigned link = 0;
  bool active = false;
  int generation = 0;  ///< 1..5, 0 unknown
  std::string remote;  ///< PCI address of the other end, "" when not read
  std::array<std::uint64_t, kNvlinkErrorCounters> errors{};  ///< by NvlinkErrorCounter
  bool errors_read = false;
};

/// A GPU's field health as NVML reports it; nullopt: not supported or not read.
struct GpuHealth {
  std::optional<std::uint64_t> throttle_reasons;  ///< kNvmlThrottle* mask
  std::optional<unsigned> temperature_c, slowdown_temperature_c;
  std::optional<unsigned> power_mw, power_limit_mw;
  std::optional<std::uint64_t> ecc_corrected, ecc_uncorrected;  ///< aggregate (lifetime) counts
  std::optional<NvmlRemappedRows> remapped_rows;
  std::optional<std::uint64_t> bar1_total_bytes;
  std::optional<unsigned> fabric_state;  ///< kNvmlFabric*
  NvmlReturn fabric_status = kNvmlSuccess;
};

struct NvmlGpu {
  std::string address;
  std::string name;
  unsigned pci_device_id = 0;
  GpuHealth health;
};

struct NvmlFacts {
  bool read = false;    ///< NVML answered
  std::string why_not;  ///< when not read: the reason (no library, init failed, ...)
  std::vector<NvmlGpu> gpus;
  std::vector<NvlinkState> links;
};

/// An XID event of the NVIDIA driver from the kernel log ("NVRM: Xid (PCI:0000:3b:00): 79, pid=...,
/// GPU has fallen off the bus.").
struct XidEvent {
  std::string address;  ///< the GPU's PCI address, "0000:3b:00.0"
  int xid = 0;
  std::string text;  ///< what the driver wrote after the number, made printable
};

struct Machine {
  std::vector<PciDevice> devices;           ///< sorted by address
  std::vector<CpuSocket> sockets;           ///< sorted by id; at least one
  std::map<int, int> numa_socket;           ///< NUMA node -> socket id
  std::map<int, std::string> numa_cpulist;  ///< NUMA node -> its CPUs ("0-13,112-125")
  std::string cpu_model;                    ///< /proc/cpuinfo "model name", or ""
  std::string cpu_vendor;                   ///< "GenuineIntel", "AuthenticAMD", or ""
  std::string cmdline;                      ///< /proc/cmdline, or ""
  IommuState iommu;
  NvmlFacts nvml;
  std::vector<XidEvent> xids;      ///< from the kernel log (dev/kmsg below the root), oldest first
  std::string kernel_log_why_not;  ///< "" when the kernel log was read, else why not
  std::vector<std::string> notes;  ///< machine-wide reading problems

  const PciDevice* find(const std::string& address) const;
};

/// Reads the machine. Never throws for what it cannot read: each problem becomes a note. `nvml` may
/// be null, in which case `nvml_missing_why` says why (it is reported as the reason NVLink was not
/// read).
Machine read_machine(const SysfsReader& sys, NvmlApi* nvml,
                     const std::string& nvml_missing_why = "");

/// Parses a sysfs link speed: "32.0 GT/s PCIe" -> 5, "8 GT/s" -> 3, "2.5 GT/s" -> 1; 0 for
/// "Unknown" or anything else.
int parse_link_speed(const std::string& text);
/// Parses an unsigned hexadecimal sysfs value ("0x10de"); nullopt when malformed.
std::optional<unsigned> parse_hex(const std::string& text);

}  // namespace linkwise::probe
