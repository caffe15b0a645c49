// From what a machine shows (probe/machine.h) to a chassis spec that every other command loads.
//
// The PCIe tree is folded the way `nvidia-smi topo -m` and NCCL see it: a switch's upstream port
// and its downstream ports become one `pcie_switch` node; root ports belong to the CPU, and links
// from one CPU under the same root bus (host bridge, "pci0000:17") share a `root_complex` number,
// so devices under different root ports of one host bridge are PHB and devices under different host
// bridges are NODE. One `cpu` node per socket; devices go to the socket of their NUMA node.
//
// Each PCIe link is written at the lesser of its two ends' maximum generation and width (what the
// slot and the card can both do), with `trained_gen`/`trained_width` when the link is running below
// that. NVLinks come from NVML: GPU-GPU links and GPU-NVSwitch links, counted per remote device.
//
// Parts come from a table of PCI ids (src/probe/pci_ids.cc); an unknown device gets the closest
// catalog part of its kind (by vendor and PCIe generation) and a `label` that says so.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "linkwise/hw/catalog.h"
#include "linkwise/probe/machine.h"
#include "linkwise/topo/spec.h"

namespace linkwise::probe {

/// One chassis node and the PCI function behind it.
struct DiscoveredNode {
  std::string id;    ///< chassis node id: "gpu0", "sw1", "cpu0"
  std::string kind;  ///< chassis kind: gpu, cpu, pcie_switch, nvswitch, nic, nvme
  std::string part;
  std::string address;    ///< PCI address ("" for CPUs and NVSwitches not seen on PCIe)
  std::string slot_path;  ///< "pci0000:17/0000:17:01.0/0000:18:00.0" ("" when unknown)
  std::string
      description;  ///< what it is: the PCI ID repository's name, or how the part was guessed
  bool part_guessed = false;
};

/// One PCIe link of the chassis, with both ends' sysfs view.
struct DiscoveredLink {
  std::string upper, lower;    ///< node ids (CPU or switch above, device or switch below)
  std::string device_address;  ///< the lower end's PCI function
  std::string port_address;    ///< the port above it (root port or switch downstream port), or ""
  std::string slot_path;       ///< of the lower end
  PcieLinkState device, port;  ///< what each end reports
  int max_gen = 0, max_width = 0;  ///< the lesser of the two ends' maxima (0 unknown)
  int cur_gen = 0, cur_width = 0;  ///< trained, from the device's own files only (0 unknown)
  /// No end reported the speed (width): the chassis link's generation (width) is an assumption, so
  /// it is never held against a design.
  bool gen_assumed = false, width_assumed = false;
  int root_complex = -1;  ///< on links to a CPU
};

struct Discovery {
  topo::ChassisSpec spec;
  std::vector<DiscoveredNode> nodes;
  std::vector<DiscoveredLink> pcie_links;
  std::vector<std::string>
      other_devices;  ///< PCI functions not in the chassis: "0000:00:1f.0 0x060100 8086:a1c1"
  std::vector<std::string> notes;  ///< assumptions made while folding the tree

  const DiscoveredNode* node_by_address(const std::string& address) const;
  const DiscoveredNode* node_by_id(const std::string& id) const;
};

/// Folds a machine into a chassis spec named `name`. Never throws for odd machines: every device
/// the catalog cannot place exactly is placed approximately and said so.
Discovery discover(const Machine& machine, const std::string& name = "probed",
                   const hw::Catalog& catalog = hw::Catalog::builtin());

/// This machine read from sysfs (or from a copy of it at `sysfs_root`), with NVML when it describes
/// the same machine (not with a copy, nor with `no_nvml`), and discovered as chassis `name`.
/// Throws InputError when `sysfs_root` is not a folder.
std::pair<Machine, Discovery> read_this_machine(const std::string& sysfs_root, bool no_nvml,
                                                const std::string& name = "probed");

}  // namespace linkwise::probe
