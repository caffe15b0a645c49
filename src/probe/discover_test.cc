#include "linkwise/probe/discover.h"

#include <gtest/gtest.h>

#include <set>

#include "cli/cli_runner.h"
#include "linkwise/probe/check.h"
#include "linkwise/topo/analysis.h"
#include "linkwise/topo/chassis.h"
#include "probe/testing/fixture.h"

namespace linkwise::probe {
namespace {

using testing::SysfsFixture;

struct Matrix {
  std::vector<std::string> devices;
  std::vector<std::vector<std::string>> cls;
  bool operator==(const Matrix& o) const { return devices == o.devices && cls == o.cls; }
};

Matrix matrix_of(const topo::ChassisSpec& spec) {
  auto c = topo::build_chassis(spec);
  topo::TopoOptions opt;
  opt.pairs = false;
  opt.bisection = false;
  auto a = topo::analyse(c, opt);
  return {a.devices, a.matrix};
}

std::string dump(const Matrix& m) {
  std::string s;
  for (std::size_t i = 0; i < m.devices.size(); ++i) {
    s += m.devices[i] + ":";
    for (const auto& c : m.cls[i]) s += " " + c;
    s += "\n";
  }
  return s;
}

Discovery probe_fixture(const SysfsFixture& fx, NvmlApi* nvml, Machine* out = nullptr) {
  auto sys = SysfsReader::for_copy(fx.root());
  auto m = read_machine(sys, nvml, nvml ? "" : "no NVML in this test");
  auto d = discover(m, "fixture");
  if (out) *out = m;
  return d;
}

// The findings, one line each, for a failing expectation's message.
std::string findings_text(const CheckReport& r) {
  std::string s;
  for (const auto& f : r.findings)
    s += std::string(to_string(f.severity)) + " " + f.kind + ": " + f.message + "\n";
  return s;
}

TEST(ProbeDiscoverTest, PcieServerHasThePresetsMatrix) {
  SysfsFixture fx(linkwise::testing::temp_dir());
  testing::build_pcie_server(fx);
  auto d = probe_fixture(fx, nullptr);
  auto got = matrix_of(d.spec);
  auto want = matrix_of(topo::load_spec("pcie-8gpu-gen4"));
  EXPECT_EQ(got, want) << "probed:\n" << dump(got) << "preset:\n" << dump(want);
  // Parts from the id table, the CPU from its model name; the drive is guessed and says so.
  EXPECT_EQ(d.node_by_id("gpu0")->part, "a100-pcie");
  EXPECT_EQ(d.node_by_id("sw0")->part, "pex88096");
  EXPECT_EQ(d.node_by_id("nic0")->part, "connectx-6");
  EXPECT_EQ(d.node_by_id("cpu0")->part, "xeon-8380");
  EXPECT_TRUE(d.node_by_id("nvme0")->part_guessed);
  EXPECT_EQ(d.other_devices.size(), 2u);  // BMC display and USB
}

TEST(ProbeDiscoverTest, DgxLikeBoxHasThePresetsMatrix) {
  SysfsFixture fx(linkwise::testing::temp_dir());
  FakeNvml nvml;
  testing::build_dgx_like(fx, nvml, false);
  auto d = probe_fixture(fx, &nvml);
  auto got = matrix_of(d.spec);
  auto want = matrix_of(topo::load_spec("dgx-h100"));
  EXPECT_EQ(got, want) << "probed:\n" << dump(got) << "preset:\n" << dump(want);
  EXPECT_EQ(nvml.init_calls, 1);
  EXPECT_EQ(nvml.shutdown_calls, 1);
  int nvswitches = 0;
  for (const auto& n : d.nodes) nvswitches += n.kind == "nvswitch";
  EXPECT_EQ(nvswitches, 4);
}

TEST(ProbeDiscoverTest, ChassisYamlRoundTripsAndBuilds) {
  SysfsFixture fx(linkwise::testing::temp_dir());
  FakeNvml nvml;
  testing::build_dgx_like(fx, nvml, true);
  auto d = probe_fixture(fx, &nvml);
  auto again = topo::parse_chassis_spec(topo::chassis_spec_to_yaml(d.spec), "probed.yaml");
  EXPECT_EQ(matrix_of(again), matrix_of(d.spec));
  // The Gen4 x8 link is written at its capability with what it trained at.
  bool found = false;
  for (const auto& l : again.links)
    if (l.b == "gpu5") {
      found = true;
      EXPECT_EQ(l.tech, "pcie5");
      EXPECT_EQ(l.width, 16);
      EXPECT_EQ(l.trained_gen.value_or(0), 4);
      EXPECT_EQ(l.trained_width.value_or(0), 8);
    }
  EXPECT_TRUE(found);
}

// The server has NICs under two of its four switches (as the preset): the GPUs under the other two
// are warned about, and the idle GPU gets a note, but nothing is a fault.
TEST(ProbeCheckTest, HealthyServerHasNoFaults) {
  SysfsFixture fx(linkwise::testing::temp_dir());
  testing::build_pcie_server(fx);
  Machine m;
  auto d = probe_fixture(fx, nullptr, &m);
  auto r = check(m, d);
  EXPECT_TRUE(r.healthy()) << findings_text(r);
  EXPECT_EQ(r.count(Severity::kFault), 0);
  ASSERT_EQ(r.count(Severity::kWarning), 5) << findings_text(r);
  EXPECT_EQ(r.findings[0].kind, "link-speed-idle");
  for (int i = 1; i < 5; ++i) EXPECT_EQ(r.findings[i].kind, "gpu-nic-not-under-switch");
  EXPECT_EQ(r.findings[0].address, "0000:1b:00.0");
  EXPECT_NE(r.findings[0].advice.find("under load"), std::string::npos);
  EXPECT_EQ(m.iommu.mode, "pass-through");
  CheckOptions strict;
  strict.strict = true;
  EXPECT_FALSE(check(m, d, strict).healthy());
}

TEST(ProbeCheckTest, FindsExactlyThePlantedFaults) {
  SysfsFixture fx(linkwise::testing::temp_dir());
  FakeNvml nvml;
  testing::build_dgx_like(fx, nvml, true);
  Machine m;
  auto d = probe_fixture(fx, &nvml, &m);
  auto r = check(m, d);
  EXPECT_FALSE(r.healthy());
  std::multiset<std::string> faults;
  for (const auto& f : r.findings)
    if (f.severity == Severity::kFault) faults.insert(f.kind + " " + f.address);
  std::multiset<std::string> planted = {
      "link-below-max " + testing::dgx_gpu_address(5), "acs-redirect 0000:32:00.0",
      "nvlink-down " + testing::dgx_gpu_address(3), "nvlink-errors " + testing::dgx_gpu_address(6),
      "iommu-translated "};
  EXPECT_EQ(faults, planted) << findings_text(r);
  EXPECT_EQ(r.count(Severity::kWarning), 0) << findings_text(r);
  for (const auto& f : r.findings)
    if (f.kind == "link-below-max") {
      EXPECT_EQ(f.slot_path, "pci0000:a0/0000:a0:01.0/0000:a1:00.0/0000:a2:00.0/0000:a3:00.0");
      EXPECT_NE(f.message.find("trained at Gen4 x8, both ends can do Gen5 x16"), std::string::npos)
          << f.message;
    }
}

TEST(ProbeCheckTest, ExpectReportsEveryDifferenceFromTheDesign) {
  SysfsFixture fx(linkwise::testing::temp_dir());
  testing::build_pcie_server(fx);
  Machine m;
  auto d = probe_fixture(fx, nullptr, &m);
  auto designed = topo::load_spec("pcie-8gpu-gen4");
  EXPECT_TRUE(compare_with_design(d, designed).empty());
  // The same box checked against a DGX: counts, parts and path classes differ.
  auto diffs = compare_with_design(d, topo::load_spec("dgx-h100"));
  ASSERT_FALSE(diffs.empty());
  std::string all;
  for (const auto& f : diffs) all += f.message + "\n";
  EXPECT_NE(all.find("designed 8 nic(s), found 2"), std::string::npos) << all;
  EXPECT_NE(all.find("GPU0 is a100-pcie, designed h100-sxm"), std::string::npos) << all;
  EXPECT_NE(all.find("GPU0-GPU1: designed NV18, found PIX"), std::string::npos) << all;
}

}  // namespace
}  // namespace linkwise::probe
