// Test fixtures: sysfs folder trees built from short descriptions (test code only).
//
//   SysfsFixture fx(linkwise::testing::temp_dir());
//   fx.add({.address = "0000:17:01.0", .root_bus = "0000:17", .class_code = 0x060400, .port_type =
//   4}); fx.add({.address = "0000:18:00.0", .parent = "0000:17:01.0", .vendor = 0x10de, .device =
//   0x2330}); linkwise::probe::SysfsReader sys = linkwise::probe::SysfsReader::for_copy(fx.root());
#pragma once

#include <map>
#include <string>
#include <vector>

#include "linkwise/probe/nvml_fake.h"

namespace linkwise::probe::testing {

struct FakeDev {
  std::string address;
  std::string parent;    ///< the bridge above, "" for a device on the root bus
  std::string root_bus;  ///< "0000:17"; only for devices on the root bus (others inherit it)
  unsigned vendor = 0x10de, device = 0x2330, class_code = 0x030200;
  int numa = 0;
  std::string cur_speed = "32.0 GT/s PCIe", max_speed = "32.0 GT/s PCIe";
  std::string cur_width = "16", max_width = "16";
  int port_type =
      0;  ///< PCIe Device/Port Type written to config space: 0 endpoint, 4 root port, 5/6 switch
  bool acs = false;  ///< write an ACS extended capability
  bool acs_redirect = false;
  unsigned link_status =
      0;  ///< PCI Express Link Status register written to config space (bit 14 LBMS, 15 LABS)
};

class SysfsFixture {
 public:
  /// `root` stands for "/": sys/ and proc/ are created below it.
  explicit SysfsFixture(std::string root);
  const std::string& root() const { return root_; }

  void add(const FakeDev& d);
  /// `sockets` sockets of `cpus_per_socket` CPUs, one NUMA node each.
  void cpus(int sockets, int cpus_per_socket,
            const std::string& model = "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz");
  /// Sub-NUMA clustering: `sockets` sockets of `nodes` NUMA nodes each, `cores` cores per node with
  /// two SMT threads. Node n holds cores n*cores.. and their siblings numbered after all cores:
  /// cpus_snc(2, 2, 4) gives node0 "0-3,16-19", node1 "4-7,20-23", node2 "8-11,24-27".
  void cpus_snc(int sockets, int nodes, int cores,
                const std::string& model = "Intel(R) Xeon(R) Platinum 8480+");
  void cmdline(const std::string& text);
  /// `groups` IOMMU groups of type `type` ("identity", "DMA-FQ") and one IOMMU unit.
  void iommu(int groups, const std::string& type);
  /// A file below root (parents created).
  void write(const std::string& rel, const std::string& contents);
  /// The device's folder below root, "sys/devices/pci0000:17/0000:17:01.0/...".
  std::string device_dir(const std::string& address) const;

  // Building blocks. A switch: root port `rp` on `root_bus`, upstream port, and downstream ports
  // (`dsps`), each with the device given below it.
  void root_port(const std::string& rp, const std::string& root_bus, int numa,
                 const std::string& speed);
  void pcie_switch(const std::string& rp, const std::string& usp,
                   const std::vector<std::string>& dsps, int numa, unsigned vendor, unsigned device,
                   const std::string& speed, bool acs = true);

 private:
  std::string root_;
  std::map<std::string, FakeDev> devs_;
};

/// An 8-GPU two-socket PCIe Gen4 server laid out as the pcie-8gpu-gen4 preset: per socket two root
/// buses with a PEX88096 switch each (2 A100 PCIe, and on the first a ConnectX-6), an NVMe drive on
/// a third root bus; IOMMU in pass-through; GPU 1 idles at 2.5 GT/s (a power-saving state, not a
/// fault). With `snc`: sub-NUMA clustering, two NUMA nodes per socket (cpus_snc(2, 2, 4)), each
/// switch on its own (socket s: switch k on node 2s+k, the NVMe drive on 2s+1).
void build_pcie_server(SysfsFixture& fx, bool snc = false);

/// A DGX H100-like box laid out as the dgx-h100 preset: per socket four root buses with a PEX890xx
/// switch each (one H100 SXM and one ConnectX-7), four NVMe drives on a fifth root bus; four
/// NVSwitches joined to every GPU by 5+4+4+5 NVLinks (in `nvml`). With `faults`: GPU 5 trained at
/// Gen4 x8 under a Gen5 x16 port, ACS redirect on the port above GPU 2, NVLink 7 of GPU 3 down, CRC
/// errors on NVLink 2 of GPU 6, IOMMU translating (DMA-FQ groups).
void build_dgx_like(SysfsFixture& fx, FakeNvml& nvml, bool faults);

/// The PCI address of the i-th GPU of build_dgx_like().
std::string dgx_gpu_address(int i);

}  // namespace linkwise::probe::testing
