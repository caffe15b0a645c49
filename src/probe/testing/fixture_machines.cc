// The fixture machines of fixture.h.
#include <fmt/format.h>

#include "probe/testing/fixture.h"

namespace linkwise::probe::testing {

namespace {

constexpr const char* kGen4 = "16.0 GT/s PCIe";
constexpr const char* kGen5 = "32.0 GT/s PCIe";

std::string bdf(unsigned bus, unsigned dev = 0, unsigned fn = 0) {
  return fmt::format("0000:{:02x}:{:02x}.{}", bus, dev, fn);
}
std::string rootbus(unsigned bus) { return fmt::format("0000:{:02x}", bus); }

FakeDev endpoint(const std::string& addr, const std::string& parent, unsigned vendor,
                 unsigned device, unsigned cls, int numa, const std::string& speed,
                 const std::string& width) {
  FakeDev d;
  d.address = addr;
  d.parent = parent;
  d.vendor = vendor;
  d.device = device;
  d.class_code = cls;
  d.numa = numa;
  d.cur_speed = d.max_speed = speed;
  d.cur_width = d.max_width = width;
  return d;
}

}  // namespace

void build_pcie_server(SysfsFixture& fx, bool snc) {
  if (snc)
    fx.cpus_snc(2, 2, 4, "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz");
  else
    fx.cpus(2, 4);
  fx.cmdline("BOOT_IMAGE=/vmlinuz root=/dev/sda1 intel_iommu=on iommu=pt");
  fx.iommu(12, "identity");
  // Per socket: two switch root buses, then an NVMe root bus. A100 PCIe 10de:20b5, PEX88096
  // 1000:c010, ConnectX-6 15b3:101b, NVMe 1344:51c3 (an id the table does not know: the closest
  // Gen4 drive).
  const unsigned buses[2][3] = {{0x17, 0x3a, 0x5d}, {0x97, 0xba, 0xd7}};
  for (int s = 0; s < 2; ++s) {
    for (int k = 0; k < 2; ++k) {
      unsigned rb = buses[s][k];
      bool nic = k == 0;
      const int numa = snc ? 2 * s + k : s;  // with SNC, each switch on its own NUMA node
      fx.root_port(bdf(rb, 1), rootbus(rb), numa, kGen4);
      std::vector<std::string> dsps = {bdf(rb + 2, 0), bdf(rb + 2, 1)};
      if (nic) dsps.push_back(bdf(rb + 2, 2));
      fx.pcie_switch(bdf(rb, 1), bdf(rb + 1), dsps, numa, 0x1000, 0xc010, kGen4);
      for (int g = 0; g < 2; ++g) {
        FakeDev gpu =
            endpoint(bdf(rb + 3 + g), dsps[g], 0x10de, 0x20b5, 0x030200, numa, kGen4, "16");
        if (s == 0 && k == 0 && g == 1) gpu.cur_speed = "2.5 GT/s PCIe";  // idle GPU
        fx.add(gpu);
      }
      if (nic) fx.add(endpoint(bdf(rb + 5), dsps[2], 0x15b3, 0x101b, 0x020700, numa, kGen4, "16"));
    }
    unsigned nb = buses[s][2];
    const int nvme_numa = snc ? 2 * s + 1 : s;
    fx.root_port(bdf(nb, 1), rootbus(nb), nvme_numa, kGen4);
    fx.add(endpoint(bdf(nb + 1), bdf(nb, 1), 0x1344, 0x51c3, 0x010802, nvme_numa, kGen4, "4"));
  }
  // A BMC display function and a USB controller: not part of the chassis.
  FakeDev bmc = endpoint(bdf(0x02), "", 0x1a03, 0x2000, 0x030000, 0, "5.0 GT/s PCIe", "1");
  bmc.root_bus = "0000:00";
  fx.add(bmc);
  FakeDev usb = endpoint(bdf(0x00, 0x14), "", 0x8086, 0xa0ed, 0x0c0330, 0, "", "");
  usb.root_bus = "0000:00";
  fx.add(usb);
}

std::string dgx_gpu_address(int i) {
  static const unsigned kBus[8] = {0x13, 0x23, 0x33, 0x43, 0x93, 0xa3, 0xb3, 0xc3};
  return bdf(kBus[i]);
}

void build_dgx_like(SysfsFixture& fx, FakeNvml& nvml, bool faults) {
  fx.cpus(2, 4, "Intel(R) Xeon(R) Platinum 8480C");
  fx.cmdline(faults ? "BOOT_IMAGE=/vmlinuz intel_iommu=on"
                    : "BOOT_IMAGE=/vmlinuz intel_iommu=on iommu=pt");
  fx.iommu(16, faults ? "DMA-FQ" : "identity");
  for (int s = 0; s < 2; ++s) {
    for (int k = 0; k < 4; ++k) {
      unsigned rb = 0x10 + 0x80 * s + 0x10 * k;
      int i = 4 * s + k;
      fx.root_port(bdf(rb, 1), rootbus(rb), s, kGen5);
      fx.pcie_switch(bdf(rb, 1), bdf(rb + 1), {bdf(rb + 2, 0), bdf(rb + 2, 1)}, s, 0x1000, 0xc030,
                     kGen5);
      if (faults && i == 2) {  // ACS redirect on the downstream port above GPU 2
        FakeDev dsp =
            endpoint(bdf(rb + 2, 0), bdf(rb + 1), 0x1000, 0xc030, 0x060400, s, kGen5, "16");
        dsp.port_type = 6;
        dsp.acs = dsp.acs_redirect = true;
        fx.add(dsp);
      }
      FakeDev gpu = endpoint(bdf(rb + 3), bdf(rb + 2, 0), 0x10de, 0x2330, 0x030200, s, kGen5, "16");
      if (faults && i == 5)
        gpu.cur_speed = kGen4, gpu.cur_width = "8";  // Gen4 x8 under a Gen5 x16 port
      fx.add(gpu);
      fx.add(endpoint(bdf(rb + 4), bdf(rb + 2, 1), 0x15b3, 0x1021, 0x020700, s, kGen5, "16"));
    }
    unsigned nb = 0x50 + 0x80 * s;
    for (int d = 0; d < 4; ++d) {
      fx.root_port(bdf(nb, 1 + d), rootbus(nb), s, kGen5);
      fx.add(endpoint(bdf(nb + 1 + d), bdf(nb, 1 + d), 0x1e0f, 0x0013, 0x010802, s, kGen5, "4"));
    }
  }
  // Four NVSwitches, seen on PCIe as NVIDIA "bridge, other" functions.
  for (int n = 0; n < 4; ++n) {
    fx.root_port(bdf(0x60, 1 + n), rootbus(0x60), 0, "8.0 GT/s PCIe");
    fx.add(endpoint(bdf(0x61 + n), bdf(0x60, 1 + n), 0x10de, 0x22a3, 0x068000, 0, "8.0 GT/s PCIe",
                    "2"));
  }
  // NVLinks: 5 to NVSwitch 0 and 3, 4 to 1 and 2 (links 0-4, 5-8, 9-12, 13-17).
  for (int i = 0; i < 8; ++i) {
    FakeNvml::Gpu g;
    g.bus_id = "0000" + dgx_gpu_address(i);  // NVML's eight-digit domain
    for (int l = 0; l < 18; ++l) {
      FakeNvml::Link link;
      int sw = l < 5 ? 0 : l < 9 ? 1 : l < 13 ? 2 : 3;
      link.remote_bus_id = fmt::format("00000000:{:02X}:00.0", 0x61 + sw);
      if (faults && i == 3 && l == 7) link.active = false;
      if (faults && i == 6 && l == 2) link.errors[2] = 17;  // CRC flit errors
      g.links.push_back(link);
    }
    nvml.gpus.push_back(g);
  }
}

}  // namespace linkwise::probe::testing
