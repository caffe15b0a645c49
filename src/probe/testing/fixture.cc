#include "probe/testing/fixture.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

namespace linkwise::probe::testing {

namespace fs = std::filesystem;

namespace {

std::string config_bytes(const FakeDev& d) {
  std::string b(4096, '\0');
  auto put16 = [&](std::size_t at, unsigned v) {
    b[at] = static_cast<char>(v & 0xff);
    b[at + 1] = static_cast<char>((v >> 8) & 0xff);
  };
  put16(0x00, d.vendor);
  put16(0x02, d.device);
  put16(0x06, 0x0010);  // status: capability list
  b[0x09] = static_cast<char>(d.class_code & 0xff);
  b[0x0a] = static_cast<char>((d.class_code >> 8) & 0xff);
  b[0x0b] = static_cast<char>((d.class_code >> 16) & 0xff);
  b[0x0e] = (d.class_code >> 8) == 0x0604 ? 0x01 : 0x00;
  b[0x34] = 0x40;
  b[0x40] = 0x10;  // PCI Express capability, last in the list
  put16(0x42, 0x2 | (static_cast<unsigned>(d.port_type) << 4));
  put16(0x52, d.link_status);  // Link Status (capability + 0x12)
  if (d.acs) {
    put16(0x100, 0x000d);  // ACS, version 1, no next capability
    put16(0x102, 0x0001);
    put16(0x104, 0x005f);  // capabilities: SV TB RR CR UF DT
    put16(0x106, d.acs_redirect ? 0x001d : 0x0000);
  }
  return b;
}

}  // namespace

SysfsFixture::SysfsFixture(std::string root) : root_(std::move(root)) {
  fs::create_directories(root_ + "/sys/bus/pci/devices");
  fs::create_directories(root_ + "/proc");
}

void SysfsFixture::write(const std::string& rel, const std::string& contents) {
  fs::path p = fs::path(root_) / rel;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << contents;
}

std::string SysfsFixture::device_dir(const std::string& address) const {
  std::vector<std::string> chain;
  std::string rb;
  for (std::string a = address; !a.empty();) {
    const FakeDev& d = devs_.at(a);
    chain.insert(chain.begin(), a);
    rb = d.root_bus;
    a = d.parent;
  }
  std::string dir = "sys/devices/pci" + rb;
  for (const auto& c : chain) dir += "/" + c;
  return dir;
}

void SysfsFixture::add(const FakeDev& d) {
  FakeDev dev = d;
  if (!dev.parent.empty()) dev.root_bus = devs_.at(dev.parent).root_bus;
  devs_[dev.address] = dev;
  std::string dir = device_dir(dev.address);
  write(dir + "/vendor", fmt::format("0x{:04x}\n", dev.vendor));
  write(dir + "/device", fmt::format("0x{:04x}\n", dev.device));
  write(dir + "/class", fmt::format("0x{:06x}\n", dev.class_code));
  write(dir + "/numa_node", fmt::format("{}\n", dev.numa));
  if (!dev.cur_speed.empty()) write(dir + "/current_link_speed", dev.cur_speed + "\n");
  if (!dev.max_speed.empty()) write(dir + "/max_link_speed", dev.max_speed + "\n");
  if (!dev.cur_width.empty()) write(dir + "/current_link_width", dev.cur_width + "\n");
  if (!dev.max_width.empty()) write(dir + "/max_link_width", dev.max_width + "\n");
  write(dir + "/config", config_bytes(dev));
  std::error_code ec;
  fs::create_symlink("../../../" + dir.substr(4),
                     fs::path(root_) / "sys/bus/pci/devices" / dev.address, ec);
}

void SysfsFixture::cpus(int sockets, int per_socket, const std::string& model) {
  std::string info;
  for (int s = 0; s < sockets; ++s) {
    write(fmt::format("sys/devices/system/node/node{}/cpulist", s),
          fmt::format("{}-{}\n", s * per_socket, (s + 1) * per_socket - 1));
    for (int c = s * per_socket; c < (s + 1) * per_socket; ++c) {
      write(fmt::format("sys/devices/system/cpu/cpu{}/topology/physical_package_id", c),
            fmt::format("{}\n", s));
      info +=
          fmt::format("processor\t: {}\nvendor_id\t: GenuineIntel\nmodel name\t: {}\n\n", c, model);
    }
  }
  write("proc/cpuinfo", info);
}

void SysfsFixture::cpus_snc(int sockets, int nodes, int cores, const std::string& model) {
  const int all = sockets * nodes * cores;
  std::string info;
  for (int n = 0; n < sockets * nodes; ++n) {
    const int lo = n * cores, hi = (n + 1) * cores - 1;
    write(fmt::format("sys/devices/system/node/node{}/cpulist", n),
          fmt::format("{}-{},{}-{}\n", lo, hi, all + lo, all + hi));
    for (int c = lo; c <= hi; ++c)
      for (int cpu : {c, all + c})
        write(fmt::format("sys/devices/system/cpu/cpu{}/topology/physical_package_id", cpu),
              fmt::format("{}\n", n / nodes));
  }
  for (int cpu = 0; cpu < 2 * all; ++cpu)
    info +=
        fmt::format("processor\t: {}\nvendor_id\t: GenuineIntel\nmodel name\t: {}\n\n", cpu, model);
  write("proc/cpuinfo", info);
}

void SysfsFixture::cmdline(const std::string& text) { write("proc/cmdline", text + "\n"); }

void SysfsFixture::iommu(int groups, const std::string& type) {
  fs::create_directories(root_ + "/sys/class/iommu/dmar0");
  for (int g = 0; g < groups; ++g)
    write(fmt::format("sys/kernel/iommu_groups/{}/type", g), type + "\n");
}

void SysfsFixture::root_port(const std::string& rp, const std::string& root_bus, int numa,
                             const std::string& speed) {
  FakeDev d;
  d.address = rp;
  d.root_bus = root_bus;
  d.vendor = 0x8086;
  d.device = 0x347a;
  d.class_code = 0x060400;
  d.numa = numa;
  d.cur_speed = d.max_speed = speed;
  d.port_type = 4;
  add(d);
}

void SysfsFixture::pcie_switch(const std::string& rp, const std::string& usp,
                               const std::vector<std::string>& dsps, int numa, unsigned vendor,
                               unsigned device, const std::string& speed, bool acs) {
  FakeDev u;
  u.address = usp;
  u.parent = rp;
  u.vendor = vendor;
  u.device = device;
  u.class_code = 0x060400;
  u.numa = numa;
  u.cur_speed = u.max_speed = speed;
  u.port_type = 5;
  u.acs = acs;
  add(u);
  for (const auto& a : dsps) {
    FakeDev d = u;
    d.address = a;
    d.parent = usp;
    d.port_type = 6;
    add(d);
  }
}

}  // namespace linkwise::probe::testing
