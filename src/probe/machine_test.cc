// Odd sysfs input: truncated files, "Unknown", speeds without "PCIe", garbage, symlink loops,
// permission errors, folders and FIFOs where files should be. Nothing may crash or hang, and the
// probe must say what it could not read.
#include "linkwise/probe/machine.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "cli/cli_runner.h"
#include "linkwise/probe/check.h"
#include "linkwise/probe/discover.h"
#include "linkwise/topo/chassis.h"
#include "probe/config_space.h"
#include "probe/host.h"
#include "probe/testing/fixture.h"

namespace linkwise::probe {
namespace {

namespace fs = std::filesystem;
using testing::FakeDev;
using testing::SysfsFixture;

TEST(ProbeParseTest, LinkSpeeds) {
  EXPECT_EQ(parse_link_speed("32.0 GT/s PCIe"), 5);
  EXPECT_EQ(parse_link_speed("16.0 GT/s PCIe"), 4);
  EXPECT_EQ(parse_link_speed("8.0 GT/s PCIe"), 3);
  EXPECT_EQ(parse_link_speed("8 GT/s"), 3);  // older kernels: no "PCIe"
  EXPECT_EQ(parse_link_speed("2.5 GT/s"), 1);
  EXPECT_EQ(parse_link_speed("64.0 GT/s PCIe"), 6);
  EXPECT_EQ(parse_link_speed("Unknown"), 0);
  EXPECT_EQ(parse_link_speed("Unknown speed"), 0);
  EXPECT_EQ(parse_link_speed(""), 0);
  EXPECT_EQ(parse_link_speed("12.0 GT/s PCIe"), 0);
  EXPECT_EQ(parse_link_speed("16.0 Gb/s"), 0);
  EXPECT_EQ(parse_link_speed("\xff\xfe"), 0);
}

TEST(ProbeParseTest, PrintableEscapesAndCuts) {
  EXPECT_EQ(printable("0x030200"), "0x030200");
  EXPECT_EQ(printable(std::string("\x01\xff\x1b[31m", 7)), "\\x01\\xff\\x1b[31m");
  EXPECT_EQ(printable(std::string(70, 'a')), std::string(64, 'a') + "...");
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
}

TEST(ProbeParseTest, HexAndCpuLists) {
  EXPECT_EQ(parse_hex("0x10de").value_or(0), 0x10deu);
  EXPECT_EQ(parse_hex("0x030200").value_or(0), 0x030200u);
  EXPECT_FALSE(parse_hex(""));
  EXPECT_FALSE(parse_hex("0x"));
  EXPECT_FALSE(parse_hex("zz"));
  EXPECT_FALSE(parse_hex("0x123456789"));
  EXPECT_EQ(detail::parse_cpulist("0-3,8").value(), (std::vector<int>{0, 1, 2, 3, 8}));
  EXPECT_TRUE(detail::parse_cpulist("").value().empty());
  EXPECT_FALSE(detail::parse_cpulist("0-"));
  EXPECT_FALSE(detail::parse_cpulist("3-1"));
  EXPECT_FALSE(detail::parse_cpulist("0-999999999"));
}

TEST(ProbeParseTest, ConfigSpaceOfAnyLength) {
  EXPECT_EQ(detail::parse_config_space("").port_type, PortType::kUnknown);
  EXPECT_FALSE(detail::parse_config_space(std::string(10, '\xff')).acs_p2p_redirect);
  // 256 bytes (what a non-root reader sees): standard capabilities, no ACS verdict.
  std::string b(256, '\0');
  b[0x06] = 0x10;
  b[0x34] = 0x40;
  b[0x40] = 0x10;
  b[0x42] = 0x62;  // downstream port
  auto f = detail::parse_config_space(b);
  EXPECT_EQ(f.port_type, PortType::kDownstream);
  EXPECT_FALSE(f.acs_p2p_redirect.has_value());
  // A capability list that loops on itself ends.
  b[0x40] = 0x09;
  b[0x41] = 0x40;
  EXPECT_EQ(detail::parse_config_space(b).port_type, PortType::kUnknown);
  // An extended capability list that loops.
  std::string e(4096, '\0');
  e[0x100] = 0x01;
  e[0x102] = 0x01;
  e[0x103] = 0x10;  // next = 0x100
  EXPECT_EQ(detail::parse_config_space(e).acs_p2p_redirect, std::optional<bool>(false));
}

// A reader whose reads of one file fail with a permission error, as they would for a non-root user.
class DeniedReader : public SysfsReader {
 public:
  DeniedReader(SysfsReader base, std::string denied)
      : SysfsReader(base), denied_(std::move(denied)) {}

 protected:
  ReadResult read_file(const std::string& path, std::size_t max_bytes) const override {
    if (path.find(denied_) != std::string::npos) return {ReadStatus::kNoPermission, {}};
    return SysfsReader::read_file(path, max_bytes);
  }

 private:
  std::string denied_;
};

SysfsFixture odd_machine() {
  SysfsFixture fx(linkwise::testing::temp_dir());
  fx.cpus(1, 2);
  fx.root_port("0000:00:01.0", "0000:00", 0, "8 GT/s");
  FakeDev gpu;
  gpu.address = "0000:01:00.0";
  gpu.parent = "0000:00:01.0";
  gpu.cur_speed = "Unknown";
  gpu.max_speed = "8 GT/s";
  gpu.cur_width = "zz";
  fx.add(gpu);
  FakeDev nic = gpu;
  nic.address = "0000:02:00.0";
  nic.parent = "";
  nic.root_bus = "0000:00";
  nic.vendor = 0x8086;
  nic.device = 0x1572;
  nic.class_code = 0x020000;
  nic.cur_speed = nic.max_speed = "garbage";
  nic.cur_width = nic.max_width = "";
  fx.add(nic);
  FakeDev trunc = nic;
  trunc.address = "0000:03:00.0";
  fx.add(trunc);
  fx.write(fx.device_dir("0000:03:00.0") + "/vendor", "");          // truncated
  fx.write(fx.device_dir("0000:03:00.0") + "/config", "\x86\x80");  // truncated config space
  fx.write(fx.device_dir("0000:02:00.0") + "/numa_node", "banana");
  fs::remove(fs::path(fx.root()) / fx.device_dir("0000:01:00.0") / "class");
  fs::create_directory(fs::path(fx.root()) / fx.device_dir("0000:01:00.0") /
                       "class");  // a folder, not a file
  fs::remove(fs::path(fx.root()) / fx.device_dir("0000:02:00.0") / "device");
  ::mkfifo((fx.root() + "/" + fx.device_dir("0000:02:00.0") + "/device").c_str(), 0600);  // a FIFO
  // A symlink loop and a dangling link among the devices.
  fs::create_symlink("0000:09:00.0", fs::path(fx.root()) / "sys/bus/pci/devices/0000:08:00.0");
  fs::create_symlink("0000:08:00.0", fs::path(fx.root()) / "sys/bus/pci/devices/0000:09:00.0");
  fs::create_symlink("../../../devices/nowhere",
                     fs::path(fx.root()) / "sys/bus/pci/devices/0000:0a:00.0");
  fx.write("sys/bus/pci/devices/not-an-address", "");
  fx.write("sys/devices/system/node/node1/cpulist", "0-");
  fx.write("proc/cmdline", "");
  return fx;
}

TEST(ProbeOddInputTest, NothingCrashesAndEveryProblemIsNoted) {
  SysfsFixture fx = odd_machine();
  auto m = read_machine(SysfsReader::for_copy(fx.root()), nullptr, "no NVML here");
  ASSERT_NE(m.find("0000:01:00.0"), nullptr);
  const PciDevice& gpu = *m.find("0000:01:00.0");
  EXPECT_EQ(gpu.link.max_gen, 3);  // "8 GT/s" without "PCIe"
  EXPECT_EQ(gpu.link.cur_gen, 0);  // "Unknown"
  EXPECT_EQ(gpu.link.cur_width, 0);
  EXPECT_FALSE(gpu.ids_read);  // class is a folder
  auto has_note = [](const PciDevice& d, const std::string& text) {
    for (const auto& n : d.notes)
      if (n.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has_note(gpu, "class: not a regular file"));
  EXPECT_TRUE(has_note(gpu, "current_link_width: unreadable value 'zz'"));
  const PciDevice& nic = *m.find("0000:02:00.0");
  EXPECT_TRUE(has_note(nic, "device: not a regular file"));  // a FIFO: read without blocking
  EXPECT_TRUE(has_note(nic, "numa_node: unreadable value 'banana'"));
  EXPECT_TRUE(has_note(nic, "max_link_speed: unreadable value 'garbage'"));
  EXPECT_TRUE(has_note(*m.find("0000:03:00.0"), "vendor: unreadable value ''"));
  EXPECT_TRUE(has_note(*m.find("0000:08:00.0"), "does not resolve"));
  EXPECT_TRUE(has_note(*m.find("0000:0a:00.0"), "does not resolve"));
  EXPECT_EQ(m.find("not-an-address"), nullptr);
  EXPECT_EQ(m.nvml.why_not, "no NVML here");
  // The folded chassis still builds, and the check runs.
  auto d = discover(m);
  EXPECT_NO_THROW(topo::build_chassis(d.spec));
  EXPECT_NO_THROW(check(m, d));
}

TEST(ProbeOddInputTest, PermissionErrorsAreNotedNotThrown) {
  SysfsFixture fx = odd_machine();
  DeniedReader sys(SysfsReader::for_copy(fx.root()), "0000:02:00.0/vendor");
  auto m = read_machine(sys, nullptr);
  bool noted = false;
  for (const auto& n : m.find("0000:02:00.0")->notes) noted |= n == "vendor: permission denied";
  EXPECT_TRUE(noted);
  // The same through the file system, where it can be tested (not as root, who may read anything).
  if (::geteuid() != 0) {
    fs::permissions(fs::path(fx.root()) / fx.device_dir("0000:01:00.0") / "vendor",
                    fs::perms::none);
    auto m2 = read_machine(SysfsReader::for_copy(fx.root()), nullptr);
    bool noted2 = false;
    for (const auto& n : m2.find("0000:01:00.0")->notes) noted2 |= n == "vendor: permission denied";
    EXPECT_TRUE(noted2);
  }
}

TEST(ProbeOddInputTest, EmptyOrMissingTreeIsAMachineWithOneSocket) {
  auto m = read_machine(SysfsReader(linkwise::testing::temp_dir() + "/missing", ""), nullptr);
  EXPECT_TRUE(m.devices.empty());
  ASSERT_EQ(m.sockets.size(), 1u);
  EXPECT_FALSE(m.notes.empty());
  auto d = discover(m);
  EXPECT_NO_THROW(topo::build_chassis(d.spec));
}

TEST(ProbeOddInputTest, ReaderResolvesOnlyInsideItsRoot) {
  SysfsFixture fx(linkwise::testing::temp_dir());
  fs::create_directories(fs::path(fx.root()) / "sys/devices/pci0000:00/0000:00:01.0");
  fs::create_symlink("../../../../../../..",
                     fs::path(fx.root()) / "sys/bus/pci/devices/0000:00:02.0");
  fs::create_symlink("../../../devices/pci0000:00/0000:00:01.0",
                     fs::path(fx.root()) / "sys/bus/pci/devices/0000:00:01.0");
  auto sys = SysfsReader::for_copy(fx.root());
  EXPECT_EQ(sys.resolve_sys("bus/pci/devices/0000:00:01.0").value_or(""),
            "devices/pci0000:00/0000:00:01.0");
  EXPECT_FALSE(sys.resolve_sys("bus/pci/devices/0000:00:02.0"));
}

}  // namespace
}  // namespace linkwise::probe
