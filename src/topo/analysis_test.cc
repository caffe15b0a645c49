#include "linkwise/topo/analysis.h"

#include <gtest/gtest.h>

#include "linkwise/topo/spec.h"

namespace linkwise::topo {
namespace {

constexpr double kGB = 1e9;

std::vector<std::string> gpu_rows(const TopoAnalysis& a, int gpus) {
  std::vector<std::string> rows;
  for (int i = 0; i < gpus; ++i) {
    std::string row;
    for (int j = 0; j < gpus; ++j) row += (j ? " " : "") + a.matrix[i][j];
    rows.push_back(row);
  }
  return rows;
}

TEST(AnalysisTest, DgxH100IsNv18Everywhere) {
  auto c = load_chassis("dgx-h100");
  auto a = analyse(c);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) EXPECT_EQ(a.matrix[i][j], i == j ? "X" : "NV18") << i << "," << j;
  // Each GPU has 18 NVLink4 links into the NVSwitches: 18 x 25 GB/s = 450 GB/s per direction.
  for (const auto& p : a.pairs) EXPECT_NEAR(p.maxflow_bytes_per_s / kGB, 450.0, 1e-6);
  // NVLink bisection: 4 GPUs on each side, each sending 450 GB/s into the switches = 1800 GB/s.
  EXPECT_NEAR(a.bisection_nvlink_bytes_per_s / kGB, 1800.0, 1e-6);
  EXPECT_TRUE(a.bisection_exact);
}

// The DGX-1 (V100) hybrid cube mesh as its nvidia-smi topo -m prints it.
TEST(AnalysisTest, Dgx1HybridCubeMesh) {
  auto a = analyse(load_chassis("dgx1-v100"));
  std::vector<std::string> expected = {
      "X NV1 NV1 NV2 NV2 SYS SYS SYS", "NV1 X NV2 NV1 SYS NV2 SYS SYS",
      "NV1 NV2 X NV2 SYS SYS NV1 SYS", "NV2 NV1 NV2 X SYS SYS SYS NV1",
      "NV2 SYS SYS SYS X NV1 NV1 NV2", "SYS NV2 SYS SYS NV1 X NV2 NV1",
      "SYS SYS NV1 SYS NV1 NV2 X NV2", "SYS SYS SYS NV1 NV2 NV1 NV2 X"};
  EXPECT_EQ(gpu_rows(a, 8), expected);
  // GPU0-GPU1 have one NVLink2: 25 GB/s, and traffic may not pass through other GPUs.
  EXPECT_NEAR(a.pairs[0].maxflow_bytes_per_s / kGB, 25.0, 1e-6);
  EXPECT_EQ(a.pairs[0].hops, 1);
}

TEST(AnalysisTest, PcieServerShowsNodeAndSys) {
  auto c = load_chassis("pcie-8gpu-gen4");
  auto a = analyse(c);
  EXPECT_EQ(a.matrix[0][1], "PIX");
  EXPECT_EQ(a.matrix[0][2], "NODE");
  EXPECT_EQ(a.matrix[0][4], "SYS");
  bool cross_socket_warned = false;
  for (const auto& w : a.warnings) cross_socket_warned |= w.kind == "cross-socket";
  EXPECT_TRUE(cross_socket_warned);
}

// Two GPUs under one Gen4 switch with a x16 uplink: they talk through the switch at x16 Gen4, 31.5
// GB/s; each reaches host memory through the shared uplink, 31.5 GB/s alone.
TEST(AnalysisTest, HandBuiltSwitchBandwidths) {
  auto c = build_chassis(parse_chassis_spec(R"(
nodes:
  - {id: cpu0, kind: cpu, part: xeon-8380}
  - {id: sw, kind: pcie_switch, part: pex88096}
  - {id: "gpu{0..1}", kind: gpu, part: a100-pcie}
  - {id: nic0, kind: nic, part: connectx-6}
links:
  - {a: sw, b: cpu0, tech: pcie4, width: 16}
  - {a: "gpu{0..1}", b: sw, tech: pcie4, width: 16}
  - {a: nic0, b: sw, tech: pcie4, width: 16}
)",
                                            "t.yaml"));
  auto a = analyse(c);
  ASSERT_EQ(a.pairs.size(), 1u);
  EXPECT_EQ(a.pairs[0].cls, "PIX");
  EXPECT_EQ(a.pairs[0].hops, 2);
  EXPECT_NEAR(a.pairs[0].maxflow_bytes_per_s / kGB, 16 * 16 * 128.0 / 130 / 8, 0.01);
  EXPECT_NEAR(a.gpus[0].host_bytes_per_s / kGB, 31.5, 0.05);
  ASSERT_EQ(a.gpus[0].nics.size(), 1u);
  EXPECT_EQ(a.gpus[0].nics[0].cls, "PIX");
  // Three x16 links below one x16 uplink: 3:1.
  ASSERT_FALSE(a.warnings.empty());
  EXPECT_EQ(a.warnings[0].kind, "oversubscribed-uplink");
  EXPECT_NE(a.warnings[0].message.find("3.00:1"), std::string::npos) << a.warnings[0].message;
  ASSERT_EQ(a.lanes.size(), 2u);
  EXPECT_EQ(a.lanes[1].used, 64);
}

TEST(AnalysisTest, RootComplexGivesPhbAndGpuWithoutNicIsWarned) {
  auto c = build_chassis(parse_chassis_spec(R"(
nodes:
  - {id: "cpu{0..1}", kind: cpu, part: xeon-8480c}
  - {id: "gpu{0..2}", kind: gpu, part: h100-pcie}
  - {id: nic0, kind: nic, part: connectx-7}
links:
  - {a: cpu0, b: cpu1, tech: upi-16, links: 2}
  - {a: "gpu{0..1}", b: cpu0, tech: pcie5, width: 8, root_complex: 0}   # x8 each: one x16 root complex
  - {a: gpu2, b: cpu1, tech: pcie5, width: 16}
  - {a: nic0, b: cpu0, tech: pcie5, width: 16, root_complex: 1}
)",
                                            "t.yaml"));
  auto a = analyse(c);
  EXPECT_EQ(a.matrix[0][1], "PHB");
  EXPECT_EQ(a.matrix[0][3], "NODE");
  EXPECT_EQ(a.matrix[2][3], "SYS");
  int nic_warnings = 0;
  for (const auto& w : a.warnings) nic_warnings += w.kind == "gpu-nic-not-under-switch";
  EXPECT_EQ(nic_warnings, 3);
}

TEST(AnalysisTest, SeveralBoxesGoThroughTheNetwork) {
  auto c = load_chassis("dgx-h100", 2);
  auto a = analyse(c);
  EXPECT_EQ(a.gpus.size(), 16u);
  EXPECT_EQ(a.matrix[0][8], "NET");
  // GPU0 of box 0 to GPU0 of box 1: each GPU reaches the network through its own NDR NIC
  // (50 GB/s per direction) - the PCIe x16 Gen5 path to other NICs adds more, up to the GPU's x16
  // link.
  const PairInfo* cross = nullptr;
  for (const auto& p : a.pairs)
    if (p.name_a == "GPU0" && p.name_b == "GPU8") cross = &p;
  ASSERT_NE(cross, nullptr);
  EXPECT_NEAR(cross->path_bytes_per_s / kGB, 50.0, 1e-6);
  EXPECT_NEAR(cross->maxflow_bytes_per_s / kGB, 63.0, 0.05);
  // Exact for 16 GPUs; a box-aligned split is limited by 8 NICs x 50 GB/s.
  EXPECT_TRUE(a.bisection_exact);
  EXPECT_LE(a.bisection_bytes_per_s / kGB, 400.0 + 1e-6);
}

TEST(AnalysisTest, LargeMachinesUseTheHeuristicBisection) {
  auto c = load_chassis("dgx-h100", 4);
  PathFinder f(c);
  bool exact = true;
  double b = bisection_bytes_per_s(c, f, Fabric::kAll, &exact);
  EXPECT_FALSE(exact);
  // Two boxes on each side: 16 NICs x 50 GB/s cross the non-blocking network.
  EXPECT_NEAR(b / kGB, 800.0, 1e-6);
}

}  // namespace
}  // namespace linkwise::topo

namespace linkwise::topo {
namespace {

// Boxes are identical copies: the pairs of three boxes are those of two boxes, copied.
TEST(AnalysisTest, ManyBoxesReuseTheTwoBoxFigures) {
  auto two = analyse(load_chassis("dgx-h100", 2));
  auto three = analyse(load_chassis("dgx-h100", 3));
  ASSERT_EQ(three.pairs.size(), 24u * 23 / 2);
  auto find = [](const TopoAnalysis& a, const std::string& x, const std::string& y) {
    for (const auto& p : a.pairs)
      if (p.name_a == x && p.name_b == y) return p;
    return PairInfo{};
  };
  // GPU3 of box 1 to GPU5 of box 2 is GPU3 of box 0 to GPU5 of box 1.
  PairInfo far = find(three, "GPU11", "GPU21"), model = find(two, "GPU3", "GPU13");
  EXPECT_EQ(far.cls, "NET");
  EXPECT_DOUBLE_EQ(far.maxflow_bytes_per_s, model.maxflow_bytes_per_s);
  EXPECT_EQ(far.hops, model.hops);
  EXPECT_TRUE(three.pairs_complete);
  ASSERT_EQ(three.gpus.size(), 24u);
  EXPECT_EQ(three.gpus[17].nics[1].name, "NIC17");
  EXPECT_DOUBLE_EQ(three.gpus[17].host_bytes_per_s, two.gpus[1].host_bytes_per_s);
}

TEST(AnalysisTest, LargeMachinesListTheFirstTwoBoxes) {
  TopoOptions o;
  o.max_listed_gpus = 16;
  o.max_matrix_devices = 48;
  auto a = analyse(load_chassis("dgx-h100", 4), o);
  EXPECT_FALSE(a.pairs_complete);
  EXPECT_EQ(a.pairs.size(), 28u + 64u);  // box 0's 28 pairs and the 64 from box 0 to box 1
  EXPECT_FALSE(a.matrix_complete);
  EXPECT_EQ(a.devices.size(), 48u);  // 8 GPUs, 8 NICs, 8 NVMe in each of two boxes
  EXPECT_EQ(a.gpus.size(), 32u);
}

}  // namespace
}  // namespace linkwise::topo
