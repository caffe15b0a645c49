#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "linkwise/util/text.h"
#include "probe/testing/fixture.h"

namespace linkwise::testing {
namespace {

using probe::testing::SysfsFixture;

nlohmann::json topo_matrix(const std::string& chassis) {
  auto r = run_cli("topo " + chassis + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out)["matrix"];
}

// The findings of a --check --json document that are faults.
int faults(const nlohmann::json& doc) {
  int n = 0;
  for (const auto& f : doc["findings"]) n += f["severity"] == "fault";
  return n;
}

TEST(ProbeCliTest, WritesAChassisWhoseTopoMatrixIsTheMachines) {
  SysfsFixture fx(temp_dir());
  probe::testing::build_pcie_server(fx);
  std::string out = temp_dir() + "/server.yaml";
  auto r = run_cli("probe --sysfs-root " + fx.root() + " -o " + out + " --name server");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.out.find("CPU: 2 socket(s), Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz, 2 NUMA node(s)"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("a100-pcie"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NVLink: not read (--sysfs-root reads a copy of sysfs"), std::string::npos)
      << r.out;
  EXPECT_EQ(topo_matrix(out), topo_matrix("pcie-8gpu-gen4"));
}

TEST(ProbeCliTest, CheckFindsThePlantedFaultsAndExitsOne) {
  SysfsFixture fx(temp_dir());
  probe::FakeNvml unused;
  probe::testing::build_dgx_like(fx, unused, true);
  auto r = run_cli("probe --check --sysfs-root " + fx.root());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(flat(r.out).find(
                flat("fault   link-below-max: gpu5 0000:a3:00.0: PCIe link to sw5 trained at "
                     "Gen4 x8, both ends can "
                     "do Gen5 x16")),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("at pci0000:a0/0000:a0:01.0/0000:a1:00.0/0000:a2:00.0/0000:a3:00.0"),
            std::string::npos);
  EXPECT_NE(r.out.find("fault   acs-redirect: switch port 0000:32:00.0"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fault   iommu-translated"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("UNHEALTHY: 3 fault(s), 0 warning(s)"), std::string::npos) << r.out;

  auto j = run_cli("probe --check --json --sysfs-root " + fx.root());
  EXPECT_EQ(j.exit_code, 1);
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["healthy"], false);
  EXPECT_EQ(faults(doc), 3);
}

TEST(ProbeCliTest, HealthyBoxMatchingItsDesignExitsZero) {
  SysfsFixture fx(temp_dir());
  probe::testing::build_pcie_server(fx);
  auto r = run_cli("probe --check --expect pcie-8gpu-gen4 --sysfs-root " + fx.root());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("HEALTHY: 0 fault(s), 5 warning(s)"), std::string::npos) << r.out;
  auto s = run_cli("probe --check --strict --sysfs-root " + fx.root());
  EXPECT_EQ(s.exit_code, 1);
  auto d = run_cli("probe --check --expect dgx-h100 --sysfs-root " + fx.root());
  EXPECT_EQ(d.exit_code, 1);
  EXPECT_NE(d.out.find("fault   differs-from-design: designed 8 nic(s), found 2"),
            std::string::npos);
  // NVLink is not read from a sysfs copy: the GPU pairs are held against the design's PCIe paths.
  EXPECT_NE(d.out.find("fault   differs-from-design: GPU0-GPU1: designed NODE, found PIX"),
            std::string::npos)
      << d.out;
  EXPECT_EQ(d.out.find("NV18, found"), std::string::npos) << d.out;
}

// A healthy DGX-like box read from a sysfs copy (so without NVLinks) against its design: the
// NVLinks and the NVMe parts the probe only guessed are not checked, and nothing is a fault.
TEST(ProbeCliTest, WhatTheProbeCannotSeeIsNotCheckedNotAFault) {
  SysfsFixture fx(temp_dir());
  probe::FakeNvml unused;
  probe::testing::build_dgx_like(fx, unused, false);
  auto r = run_cli("probe --check --expect dgx-h100 --sysfs-root " + fx.root());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("fault "), std::string::npos) << r.out;
  EXPECT_NE(flat(r.out).find(
                flat("info    design-not-checked: NVLink not read (--sysfs-root reads a copy of "
                     "sysfs, and NVML "
                     "would describe this machine instead): not checked: 4 NVSwitch(es) and the "
                     "NVLink path classes "
                     "of 28 device pair(s) (e.g. GPU0-GPU1 designed NV18); PCIe path classes are "
                     "checked against "
                     "the design without its NVLinks\n")),
            std::string::npos)
      << r.out;
  EXPECT_NE(flat(r.out).find(
                flat("info    design-not-checked: part of NVME0, NVME1, NVME2, NVME3, NVME4, "
                     "NVME5, NVME6, NVME7 not "
                     "checked: not in the catalog's id table (modelled as kioxia-cm7?), designed "
                     "samsung-pm1743\n")),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("HEALTHY: 0 fault(s), 0 warning(s), 2 design item(s) not checked\n"),
            std::string::npos)
      << r.out;
  auto j = run_cli("probe --check --json --expect dgx-h100 --sysfs-root " + fx.root());
  EXPECT_EQ(j.exit_code, 0);
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(faults(doc), 0);
  int not_checked = 0;
  for (const auto& f : doc["findings"])
    not_checked += f["kind"] == "design-not-checked" && f["severity"] == "info";
  EXPECT_EQ(not_checked, 2);
}

// Odd sysfs values: binary bytes are escaped, an unreadable current state shows "?", and a link
// that reads faster than both ends can do is flagged.
TEST(ProbeCliTest, OddLinkFilesAreShownSafelyAndFlagged) {
  SysfsFixture fx(temp_dir());
  probe::FakeNvml unused;
  probe::testing::build_dgx_like(fx, unused, false);
  std::string gpu0 = fx.device_dir(probe::testing::dgx_gpu_address(0));
  std::string gpu1 = fx.device_dir(probe::testing::dgx_gpu_address(1));
  std::string gpu2 = fx.device_dir(probe::testing::dgx_gpu_address(2));
  fx.write(gpu0 + "/current_link_speed", "garbage\n");
  fx.write(gpu0 + "/current_link_width", "zz\n");
  fx.write(gpu1 + "/current_link_speed", "64.0 GT/s PCIe\n");
  fx.write(gpu2 + "/class", std::string("\x01\xff\x1b[31mX", 8));
  auto r = run_cli("probe --check --sysfs-root " + fx.root());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  for (char c : r.out)
    EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << "raw byte " << int(c) << " in output";
  EXPECT_NE(r.out.find("0000:33:00.0: class: unreadable value '\\x01\\xff\\x1b[31mX'"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("gpu0   gpu          h100-sxm     0000:13:00.0  sw0    ?         Gen5 x16"),
            std::string::npos)
      << r.out;
  EXPECT_NE(flat(r.out).find(
                flat("warning link-above-max: gpu1 0000:23:00.0: PCIe link to sw1 reads Gen6 x16 "
                     "now, above what "
                     "both ends can do (Gen5 x16): the link state files contradict each other, "
                     "so this link is not "
                     "checked\n")),
            std::string::npos)
      << r.out;
  EXPECT_NE(flat(r.out).find(
                flat("info    link-not-read: the trained speed or width of 1 PCIe link(s) could "
                     "not be read (shown "
                     "as ?): not checked\n")),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("HEALTHY: 0 fault(s), 1 warning(s)\n"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli("probe --check --strict --sysfs-root " + fx.root()).exit_code, 1);
}

// A device with no current_link_speed file: the trained speed was not read, so it shows "?" with a
// note naming the file and --check reports the link as not read; the port's view is not put in its
// place.
TEST(ProbeCliTest, MissingCurrentLinkFileShowsUnknownWithANote) {
  SysfsFixture fx(temp_dir());
  probe::FakeNvml unused;
  probe::testing::build_dgx_like(fx, unused, false);
  std::string gpu3 = fx.root() + "/" + fx.device_dir(probe::testing::dgx_gpu_address(3));
  ASSERT_TRUE(std::filesystem::remove(gpu3 + "/current_link_speed"));
  auto r = run_cli("probe --sysfs-root " + fx.root());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("gpu3   gpu          h100-sxm     0000:43:00.0  sw3    Gen? x16  Gen5 x16"),
            std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find("  gpu3 (0000:43:00.0): current_link_speed missing: trained speed not read\n"),
      std::string::npos)
      << r.out;
  ASSERT_TRUE(std::filesystem::remove(gpu3 + "/current_link_width"));
  auto c = run_cli("probe --check --sysfs-root " + fx.root());
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_NE(c.out.find("gpu3   gpu          h100-sxm     0000:43:00.0  sw3    ?         Gen5 x16"),
            std::string::npos)
      << c.out;
  EXPECT_NE(flat(c.out).find(
                flat("  gpu3 (0000:43:00.0): current_link_speed, current_link_width missing: "
                     "trained speed and "
                     "width not read\n")),
            std::string::npos)
      << c.out;
  EXPECT_NE(flat(c.out).find(
                flat("info    link-not-read: the trained speed or width of 1 PCIe link(s) could "
                     "not be read (shown "
                     "as ?): not checked\n")),
            std::string::npos)
      << c.out;
  EXPECT_NE(c.out.find("HEALTHY: 0 fault(s), 0 warning(s)\n"), std::string::npos) << c.out;
}

// A NIC whose link files are all missing at both ends (as on a VM's virtio NIC): its PCIe
// generation and width are only assumed, so the design's pcie5 x16 is not held against the assumed
// pcie3 x16: the link is listed as not checked, not as a fault.
TEST(ProbeCliTest, AssumedLinkSpeedIsNotCheckedAgainstTheDesign) {
  SysfsFixture fx(temp_dir());
  probe::FakeNvml unused;
  probe::testing::build_dgx_like(fx, unused, false);
  std::string nic = fx.root() + "/" + fx.device_dir("0000:14:00.0");
  std::string port = fx.root() + "/" + fx.device_dir("0000:12:01.0");
  fx.write(fx.device_dir("0000:14:00.0") + "/vendor", "0x1af4\n");
  fx.write(fx.device_dir("0000:14:00.0") + "/device", "0x1041\n");
  fx.write(fx.device_dir("0000:14:00.0") + "/class", "0x020000\n");
  for (const char* f :
       {"current_link_speed", "current_link_width", "max_link_speed", "max_link_width"}) {
    ASSERT_TRUE(std::filesystem::remove(nic + "/" + f)) << f;
    ASSERT_TRUE(std::filesystem::remove(port + "/" + f)) << f;
  }
  auto r = run_cli("probe --check --expect dgx-h100 --sysfs-root " + fx.root());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("fault "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("PCIe link can do"), std::string::npos) << r.out;
  // Its width was not read either, so it is not taken for an x1/x4 management port: GPU0 has it on
  // sw0.
  EXPECT_EQ(r.out.find("gpu-nic-not-under-switch"), std::string::npos) << r.out;
  EXPECT_NE(flat(r.out).find(
                flat("  nic0 (0000:14:00.0): current_link_speed, current_link_width missing: "
                     "trained speed and "
                     "width not read; link speed not reported: assumed pcie3; link width not "
                     "reported: assumed "
                     "x16\n")),
            std::string::npos)
      << r.out;
  EXPECT_NE(flat(r.out).find(
                flat("info    design-not-checked: PCIe link of NIC0 (designed pcie5 x16) not "
                     "checked: its speed or "
                     "width was not reported, only assumed (see the notes)\n")),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("HEALTHY: 0 fault(s), 0 warning(s), 4 design item(s) not checked\n"),
            std::string::npos)
      << r.out;
  auto j = run_cli("probe --check --json --expect dgx-h100 --sysfs-root " + fx.root());
  EXPECT_EQ(j.exit_code, 0);
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(faults(doc), 0);
  for (const auto& f : doc["findings"])
    if (f["message"].get<std::string>().find("PCIe link of NIC0") != std::string::npos)
      EXPECT_EQ(f["severity"], "info");
}

TEST(ProbeCliTest, ThisMachineExitsZeroAndSaysWhatItFound) {
  auto r = run_cli("probe");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("CPU: "), std::string::npos);
  EXPECT_NE(r.out.find("NVLink: "), std::string::npos);
  EXPECT_NE(r.out.find("IOMMU: "), std::string::npos);
  auto j = run_cli("probe --json");
  EXPECT_EQ(j.exit_code, 0);
  EXPECT_TRUE(nlohmann::json::parse(j.out).contains("nvlink"));
}

TEST(ProbeCliTest, NcclTopologyExportedAndImportedKeepsTheMatrix) {
  std::string dir = temp_dir();
  auto e = run_cli("probe --chassis dgx-a100 --nccl-out " + dir + "/a100.xml");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  auto i = run_cli("probe --nccl-xml " + dir + "/a100.xml -o " + dir + "/a100.yaml");
  ASSERT_EQ(i.exit_code, 0) << i.err;
  EXPECT_EQ(topo_matrix(dir + "/a100.yaml"), topo_matrix("dgx-a100"));
}

// --chassis and --nccl-xml print what `topo` prints for the chassis, not just counts.
TEST(ProbeCliTest, ChassisAndNcclXmlPrintTheTopoSummary) {
  std::string dir = temp_dir();
  auto c = run_cli("probe --chassis dgx-h100");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out, run_cli("topo dgx-h100").out);
  ASSERT_EQ(run_cli("probe --chassis dgx-h100 --nccl-out " + dir + "/h.xml").exit_code, 0);
  auto x = run_cli("probe --nccl-xml " + dir + "/h.xml");
  ASSERT_EQ(x.exit_code, 0) << x.err;
  EXPECT_NE(x.out.find("\nh: Imported from NCCL topology XML h.xml\n"), std::string::npos) << x.out;
  EXPECT_EQ(x.out.rfind("\t\x1b[4mGPU0\t", 0), 0u) << x.out;  // the nvidia-smi matrix first
  EXPECT_NE(x.out.find("GPU0\t X \tNV18"), std::string::npos) << x.out;
  auto j = run_cli("probe --nccl-xml " + dir + "/h.xml --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["matrix"], topo_matrix("dgx-h100"));
  EXPECT_TRUE(doc["notes"].empty());
}

// An NVLink to a GPU the file does not list (a dump of a job on some of the GPUs) is left out with
// a note naming the line; a link_width that is not a PCIe width is an error naming the line.
TEST(ProbeCliTest, NcclXmlOddEntriesAreNotedOrRejectedWithTheLine) {
  std::string dir = temp_dir();
  write_file_atomic(
      dir + "/nv.xml",
      "<system version=\"1\">\n<cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\">\n"
      "<pci busid=\"0000:01:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">\n"
      "<gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\">\n"
      "<nvlink target=\"0000:99:00.0\" count=\"18\" "
      "tclass=\"0x030200\"/>\n</gpu>\n</pci>\n</cpu>\n</system>\n");
  auto r = run_cli("probe --nccl-xml " + dir + "/nv.xml");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Notes:\n  " + dir +
                       "/nv.xml:5: NVLink from GPU 0000:01:00.0 to 0000:99:00.0 (tclass 0x030200) "
                       "left out: no GPU with that busid in the file\n"),
            std::string::npos)
      << r.out;
  write_file_atomic(
      dir + "/w99.xml",
      "<system version=\"1\">\n<cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\">\n"
      "<pci busid=\"0000:01:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" "
      "link_width=\"99\">\n"
      "<gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\"/>\n</pci>\n</cpu>\n</system>\n");
  r = run_cli("probe --nccl-xml " + dir + "/w99.xml -o " + dir + "/w99.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: " + dir +
                       "/w99.xml:3: <pci busid=\"0000:01:00.0\">: link_width \"99\" is not a "
                       "pcie5 link width (1, 2, 4, 8, 16)\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/w99.yaml"));
}

// The help lists every option and the sources and outputs they select.
TEST(ProbeCliTest, HelpListsEveryOption) {
  auto r = run_cli("probe --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* opt : {"--sysfs-root DIR", "-o,--output FILE", "--name NAME", "--check",
                          "--expect CHASSIS", "--strict", "--json", "--no-nvml", "--nccl-xml FILE",
                          "--chassis CHASSIS", "--nccl-out FILE",
                          "Sources (at most one): this machine (default), --sysfs-root DIR, "
                          "--nccl-xml FILE, --chassis "
                          "CHASSIS."})
    EXPECT_NE(r.out.find(opt), std::string::npos) << opt << "\n" << r.out;
}

TEST(ProbeCliTest, BadInputExitsTwoWithTheReason) {
  std::string dir = temp_dir();
  auto r = run_cli("probe --sysfs-root " + dir + "/nope -o " + dir + "/x.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: --sysfs-root '" + dir + "/nope' is not a folder\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.yaml"));
  r = run_cli("probe --expect dgx-h100");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: --expect needs --check\n");
  write_file_atomic(dir + "/bad.xml", "<system version=\"1\">\n<cpu numaid=\"0\">\n</system>\n");
  r = run_cli("probe --nccl-xml " + dir + "/bad.xml -o " + dir + "/y.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("linkwise: error: " + dir + "/bad.xml:4: malformed NCCL topology XML", 0),
            0u)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/y.yaml"));
  r = run_cli("probe --nccl-xml a.xml --chassis dgx-h100");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: give at most one of --sysfs-root, --nccl-xml and --chassis\n");
}

}  // namespace
}  // namespace linkwise::testing
