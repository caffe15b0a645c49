// probe --check field health on fixture machines: AER error counters, a retraining link, no GPUs,
// and what a downtrained link costs an all-reduce. Each finding is checked as printed.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "probe/testing/fixture.h"

namespace linkwise::testing {
namespace {

using probe::testing::SysfsFixture;

// gpu0 of build_pcie_server(): 0000:1a:00.0 below the first socket-0 switch.
constexpr const char* kGpu0 = "0000:1a:00.0";

// Sets the PCI Express Link Status register (capability at 0x40, register at +0x12) in a device's
// config.
void set_link_status(SysfsFixture& fx, const std::string& address, unsigned status) {
  std::string rel = fx.device_dir(address) + "/config";
  std::ifstream in(fx.root() + "/" + rel, std::ios::binary);
  std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GE(b.size(), 0x54u);
  b[0x52] = static_cast<char>(status & 0xff);
  b[0x53] = static_cast<char>(status >> 8);
  fx.write(rel, b);
}

// The findings of one kind as printed: the message line, then its slot path and advice lines.
// The finding that starts with `head`, its continuation lines (wrapped at 100 columns, indented)
// joined back with single spaces.
std::string finding(const std::string& out, const std::string& head) {
  auto p = out.find(head);
  if (p == std::string::npos) return "";
  auto e = out.find("\n", p);
  std::string line = out.substr(p, e - p);
  while (e != std::string::npos && out.compare(e + 1, 4, "    ") == 0) {
    auto next = out.find("\n", e + 1);
    std::string cont = out.substr(e + 1, next == std::string::npos ? next : next - e - 1);
    cont = cont.substr(cont.find_first_not_of(' '));
    if (cont.rfind("at ", 0) == 0 || cont.rfind("-> ", 0) == 0) break;  // the finding's details
    line += " " + cont;
    e = next;
  }
  return line;
}

TEST(HealthCli, CorrectableErrorStormOnOneLink) {
  SysfsFixture fx(temp_dir());
  probe::testing::build_pcie_server(fx);
  // As the kernel prints aer_dev_correctable (drivers/pci/pcie/aer.c aer_stats_dev_attr).
  fx.write(fx.device_dir(kGpu0) + "/aer_dev_correctable",
           "RxErr 1200\nBadTLP 37\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr "
           "0\nHeaderOF 0\n"
           "TOTAL_ERR_COR 1237\n");
  fx.write(fx.device_dir("0000:3e:00.0") + "/aer_dev_correctable",
           "RxErr 3\nBadTLP 0\nTOTAL_ERR_COR 3\n");
  fx.write(
      fx.device_dir("0000:9a:00.0") + "/aer_dev_nonfatal",
      "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 2\nCmpltAbrt 0\nTOTAL_ERR_NONFATAL 2\n");
  fx.write(fx.device_dir("0000:9a:00.0") + "/aer_dev_fatal",
           "Undefined 0\nDLP 0\nTOTAL_ERR_FATAL 0\n");
  auto r = run_cli("probe --check --sysfs-root " + fx.root());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(finding(r.out, "warning pcie-aer-correctable: gpu0"),
            "warning pcie-aer-correctable: gpu0 0000:1a:00.0: 1237 correctable PCIe error(s) since "
            "boot (RxErr 1200, "
            "BadTLP 37) (a storm: 100 or more)");
  EXPECT_EQ(finding(r.out, "info    pcie-aer-correctable: gpu3"),
            "info    pcie-aer-correctable: gpu3 0000:3e:00.0: 3 correctable PCIe error(s) since "
            "boot (RxErr 3)");
  EXPECT_EQ(finding(r.out, "fault   pcie-aer-uncorrectable:"),
            "fault   pcie-aer-uncorrectable: gpu4 0000:9a:00.0: 2 uncorrectable PCIe error(s) "
            "since boot (2 non-fatal, 0 "
            "fatal) (CmpltTO 2)");
  EXPECT_NE(flat(r.out).find(flat("UNHEALTHY: 1 fault(s), 6 warning(s)")), std::string::npos)
      << r.out;
}

TEST(HealthCli, RetrainingLink) {
  SysfsFixture fx(temp_dir());
  probe::testing::build_pcie_server(fx);
  set_link_status(fx, "0000:3d:00.0", 0x4000 | 0x1000 | 0x0104);  // LBMS, DLLLA, x16 at 16 GT/s
  set_link_status(fx, "0000:9a:00.0", 0x8000 | 0x0104);           // LABS
  auto r = run_cli("probe --check --sysfs-root " + fx.root());
  EXPECT_EQ(r.exit_code, 0) << r.out;  // warnings only
  EXPECT_EQ(finding(r.out, "warning link-retrained:"),
            "warning link-retrained: gpu2 0000:3d:00.0: the link retrained or changed speed/width "
            "for reliability since "
            "the status was last cleared (Link Status 0x5104: Link Bandwidth Management Status)");
  EXPECT_EQ(finding(r.out, "info    link-bandwidth-changed:"),
            "info    link-bandwidth-changed: gpu4 0000:9a:00.0: the link changed speed or width on "
            "its own (Link Status "
            "0x8104: Link Autonomous Bandwidth Status), e.g. for power saving");
  EXPECT_EQ(run_cli("probe --check --strict --sysfs-root " + fx.root()).exit_code, 1);
}

TEST(HealthCli, DowntrainedLinkSaysWhatItCostsAnAllReduce) {
  SysfsFixture fx(temp_dir());
  probe::testing::build_pcie_server(fx);
  fx.write(fx.device_dir(kGpu0) + "/current_link_width", "8\n");
  auto r = run_cli("probe --check --sysfs-root " + fx.root());
  EXPECT_EQ(r.exit_code, 1);
  // The ring's slowest link: designed 25.00 GB/s (pcie4 x16 at efficiency 0.7935) x duplex
  // efficiency 0.894 x 0.9211 (the SMs write it in 128 B payloads, comm transport_rules.h) = 20.6
  // GB/s; but the ring's hops between the switches are host-staged (SHM) and NCCL's search gives
  // it 2 channels of 7.32 GB/s (comm nccl_channels.h): 14.6 GB/s as designed. As built gpu0's x8
  // link halves the link figure, 10.3 GB/s, under the channels: 1.42x the time.
  EXPECT_NE(finding(r.out, "fault   link-below-max: gpu0")
                .find("; it costs a 1 GiB all-reduce over the 8 GPUs 1.42x (128.5 -> 182.7 ms, "
                      "busbw 14.6 -> 10.3 GB/s)"),
            std::string::npos)
      << r.out;
}

TEST(HealthCli, NoGpuIsAFault) {
  SysfsFixture fx(temp_dir());
  fx.cpus(1, 4);
  fx.root_port("0000:17:01.0", "0000:17", 0, "16.0 GT/s PCIe");
  probe::testing::FakeDev nvme;
  nvme.address = "0000:18:00.0";
  nvme.parent = "0000:17:01.0";
  nvme.vendor = 0x144d;
  nvme.device = 0xa80a;
  nvme.class_code = 0x010802;
  nvme.cur_speed = nvme.max_speed = "16.0 GT/s PCIe";
  nvme.cur_width = nvme.max_width = "4";
  fx.add(nvme);
  auto r = run_cli("probe --check --sysfs-root " + fx.root());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(finding(r.out, "fault   no-gpu:"),
            "fault   no-gpu: no GPU found among 2 PCI function(s)");
  EXPECT_NE(r.out.find("UNHEALTHY: 1 fault(s), 0 warning(s)"), std::string::npos) << r.out;
  auto j = run_cli("probe --check --json --sysfs-root " + fx.root());
  EXPECT_EQ(j.exit_code, 1);
  EXPECT_FALSE(nlohmann::json::parse(j.out)["healthy"].get<bool>());
}

}  // namespace
}  // namespace linkwise::testing
