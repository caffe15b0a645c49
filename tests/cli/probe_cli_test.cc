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

TEST(ProbeCliTest, WritesAChassisWhoseTopoMatrixIsTheMachines) {
  SysfsFixture fx(temp_dir());
  probe::testing::build_pcie_server(fx);
  std::string out = temp_dir() + "/server.yaml";
  auto r = run_cli("probe --sysfs-root " + fx.root() + " -o " + out + " --name server");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("CPU: 2 socket(s), Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz, 2 NUMA node(s)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("a100-pcie"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NVLink: not read (--sysfs-root reads a copy of sysfs"), std::string::npos) << r.out;
  EXPECT_EQ(topo_matrix(out), topo_matrix("pcie-8gpu-gen4"));
}

TEST(ProbeCliTest, CheckFindsThePlantedFaultsAndExitsOne) {
  SysfsFixture fx(temp_dir());
  probe::FakeNvml unused;
  probe::testing::build_dgx_like(fx, unused, true);
  auto r = run_cli("probe --check --sysfs-root " + fx.root());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("fault   link-below-max: gpu5 0000:a3:00.0: PCIe link to sw5 trained at Gen4 x8, both ends can "
                       "do Gen5 x16"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("at pci0000:a0/0000:a0:01.0/0000:a1:00.0/0000:a2:00.0/0000:a3:00.0"), std::string::npos);
  EXPECT_NE(r.out.find("fault   acs-redirect: switch port 0000:32:00.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fault   iommu-translated"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("UNHEALTHY: 3 fault(s), 0 warning(s)"), std::string::npos) << r.out;

  auto j = run_cli("probe --check --json --sysfs-root " + fx.root());
  EXPECT_EQ(j.exit_code, 1);
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["healthy"], false);
  EXPECT_EQ(doc["faults"], 3);
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
  EXPECT_NE(d.out.find("fault   differs-from-design: designed 8 nic(s), found 2"), std::string::npos);
  EXPECT_NE(d.out.find("differs-from-design: GPU0-GPU1: designed NV18, found PIX"), std::string::npos) << d.out;
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
  EXPECT_EQ(r.err.rfind("linkwise: error: " + dir + "/bad.xml:4: malformed NCCL topology XML", 0), 0u) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/y.yaml"));
  r = run_cli("probe --nccl-xml a.xml --chassis dgx-h100");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: give at most one of --sysfs-root, --nccl-xml and --chassis\n");
}

}  // namespace
}  // namespace linkwise::testing
