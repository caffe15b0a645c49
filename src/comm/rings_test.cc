// The ring search on meshes of direct NVLinks (bridges on PCIe cards): every bridge link carries
// traffic, as NCCL's channels of one speed do (rings.cc, header comment).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "linkwise/comm/predict.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/topo/spec.h"

namespace linkwise::comm {
namespace {

constexpr double kExact = 1e-6;  // relative: rates the search must reproduce exactly
constexpr double kGiB = 1024.0 * 1024 * 1024;

topo::Chassis from_yaml(const std::string& text) {
  return topo::build_chassis(topo::parse_chassis_spec(text, "test.yaml"));
}

// Four H200 NVL on one 4-way bridge: six links between every two GPUs (NV6), each GPU on its own
// Gen5 x16 root port.
const char* kFourWayBridge = R"(
name: four-way-bridge
nodes:
  - {id: cpu0, kind: cpu, part: xeon-8480p}
  - {id: "gpu{0..3}", kind: gpu, part: h200-nvl}
links:
  - {a: "gpu{0..3}", b: cpu0, tech: pcie5, width: 16}
  - {a: gpu0, b: gpu1, tech: nvlink4-nvl-bridge, width: 6}
  - {a: gpu0, b: gpu2, tech: nvlink4-nvl-bridge, width: 6}
  - {a: gpu0, b: gpu3, tech: nvlink4-nvl-bridge, width: 6}
  - {a: gpu1, b: gpu2, tech: nvlink4-nvl-bridge, width: 6}
  - {a: gpu1, b: gpu3, tech: nvlink4-nvl-bridge, width: 6}
  - {a: gpu2, b: gpu3, tech: nvlink4-nvl-bridge, width: 6}
)";

// Per resource: the sum of the rates of the ring hops crossing it.
std::map<int, double> ring_loads(const Communicator& comm) {
  std::map<int, double> load;
  for (const auto& r : comm.rings())
    for (std::size_t i = 0; i < r.hop_end.size(); ++i)
      for (int res : r.hop(i)) load[res] += r.bytes_per_s;
  return load;
}

TEST(CommRingSearch, FourWayBridgeUsesEveryBridgeLinkBothWays) {
  // Hand derivation. Each directed pair has C = 6 links x 25 GB/s x 0.824 (nvlink4-nvl-bridge:
  // NCCL's SM90_NVLINK_BW 20.6 GB/s a link) = 123.6 GB/s. A ring taking all it can (C) exhausts
  // its four directed pairs; its reverse takes the next four; the four left (0<->2, 1<->3) hold no
  // cycle, so that search ends at 2C = 247.2 GB/s with the diagonals idle. Rings of one speed C/2
  // = 61.8 GB/s (NCCL: channels of one speed): the three undirected Hamiltonian cycles of four GPUs
  // (0123, 0132, 0213), each both ways, are the six directed cycles; each of the six bridge pairs
  // lies on two of the three, so each directed pair carries two rings: 2 x 61.8 = C, every link
  // full both ways. Total 6 x 61.8 = 370.8 GB/s = 3C (NCCL 2.28.9 on this bridge: the same six
  // orders, nChannels 12 at 30 GB/s, "totalBw 370.8").
  auto c = from_yaml(kFourWayBridge);
  Communicator comm(c);
  const double C = 6 * 25e9 * 0.824;
  ASSERT_EQ(comm.rings().size(), 6u);
  std::set<std::vector<int>> orders;
  for (const auto& r : comm.rings()) {
    EXPECT_NEAR(r.bytes_per_s, C / 2, C / 2 * kExact);
    orders.insert(r.order);
  }
  EXPECT_EQ(orders.size(), 6u);  // six different ring orders
  // Every bridge link carries C in each direction; nothing else is crossed.
  const auto load = ring_loads(comm);
  int bridge_dirs = 0;
  for (const auto& l : c.links()) {
    if (l.family() != hw::LinkFamily::kNvlink) continue;
    for (bool from_a : {true, false}) {
      const int r = sim::ChassisResources::link_dir(l.index, from_a);
      ASSERT_TRUE(load.count(r)) << "bridge direction left idle";
      EXPECT_NEAR(load.at(r), C, C * kExact);
      ++bridge_dirs;
    }
  }
  EXPECT_EQ(bridge_dirs, 12);
  EXPECT_EQ(load.size(), 12u);  // no PCIe hop
  // All-reduce busbw = Σ ring rates = 3C, less the latency share at 8 GiB (NVLink ring, Simple:
  // tens of µs against 8 GiB x 1.5 / 370.8 GB/s = 34.7 ms: under 0.2 %).
  auto p = comm.predict(Op::kAllReduce, 8 * kGiB, Algo::kRing);
  EXPECT_NEAR(p.busbw_Bps, 3 * C, 3 * C * 2e-3);
  EXPECT_LT(p.busbw_Bps, 3 * C);
}

TEST(CommRingSearch, PartialMeshReachesEveryGpusLinks) {
  // Four GPUs, NV6 around the cycle 0-1-2-3-0 and NV2 across (0-2, 1-3). Per link 25 x 0.824 = 20.6
  // GB/s. Every ring leaves each GPU once, so Σ ring rates <= a GPU's links out: (6 + 6 + 2) x 20.6
  // = 288.4 GB/s. Rings taking all they can: the side cycle and its reverse at 6 x 20.6 = 123.6
  // each (247.2), the NV2 links idle. Rings of one speed 20.6 (the first ring's 123.6 / 6): the
  // four directed cycles over both diagonals (0213, 0312, 0132, 0231) once each (each directed
  // diagonal on two of them: 2 x 20.6, full), each also crossing one side edge each way, and the
  // side cycle and its reverse five times each (5 + 1 = 6 rings a side edge a direction, full):
  // 4 + 10 = 14 rings of 20.6 = 288.4 GB/s, every link full both ways.
  auto c = from_yaml(R"(
name: partial-mesh
nodes:
  - {id: cpu0, kind: cpu, part: xeon-8480p}
  - {id: "gpu{0..3}", kind: gpu, part: h200-nvl}
links:
  - {a: "gpu{0..3}", b: cpu0, tech: pcie5, width: 16}
  - {a: "gpu{0,1,2,3}", b: "gpu{1,2,3,0}", tech: nvlink4-nvl-bridge, width: 6}
  - {a: "gpu{0,1}", b: "gpu{2,3}", tech: nvlink4-nvl-bridge, width: 2}
)");
  Communicator comm(c);
  const double link = 25e9 * 0.824;
  double total = 0;
  for (const auto& r : comm.rings()) total += r.bytes_per_s;
  EXPECT_EQ(comm.rings().size(), 14u);
  EXPECT_NEAR(total, 14 * link, 14 * link * kExact);
  const auto load = ring_loads(comm);
  for (const auto& l : c.links()) {
    if (l.family() != hw::LinkFamily::kNvlink) continue;
    for (bool from_a : {true, false}) {
      const int r = sim::ChassisResources::link_dir(l.index, from_a);
      ASSERT_TRUE(load.count(r)) << "bridge direction left idle";
      EXPECT_NEAR(load.at(r), l.width * link, l.width * link * kExact);
    }
  }
}

TEST(CommRingSearch, BridgedPairAndRingMeshKeepTheirRings) {
  // Where the rings that take all they can already leave no direct NVLink idle, or no ring could
  // use the idle one, nothing changes:
  // two GPUs on one bridge (one ring, both directions of the bridge) and four GPUs bridged only
  // around a cycle 0-1-2-3-0 (the ring and its reverse fill every link both ways: 2C in all).
  auto pair = from_yaml(R"(
name: pair
nodes:
  - {id: cpu0, kind: cpu, part: xeon-8480p}
  - {id: "gpu{0..1}", kind: gpu, part: h200-nvl}
links:
  - {a: "gpu{0..1}", b: cpu0, tech: pcie5, width: 16}
  - {a: gpu0, b: gpu1, tech: nvlink4-nvl-bridge, width: 6}
)");
  const double C = 6 * 25e9 * 0.824;
  Communicator two(pair);
  ASSERT_EQ(two.rings().size(), 1u);
  EXPECT_NEAR(two.rings()[0].bytes_per_s, C, C * kExact);
  auto cycle = from_yaml(R"(
name: cycle
nodes:
  - {id: cpu0, kind: cpu, part: xeon-8480p}
  - {id: "gpu{0..3}", kind: gpu, part: h200-nvl}
links:
  - {a: "gpu{0..3}", b: cpu0, tech: pcie5, width: 16}
  - {a: gpu0, b: gpu1, tech: nvlink4-nvl-bridge, width: 6}
  - {a: gpu1, b: gpu2, tech: nvlink4-nvl-bridge, width: 6}
  - {a: gpu2, b: gpu3, tech: nvlink4-nvl-bridge, width: 6}
  - {a: gpu3, b: gpu0, tech: nvlink4-nvl-bridge, width: 6}
)");
  Communicator four(cycle);
  ASSERT_EQ(four.rings().size(), 2u);
  for (const auto& r : four.rings()) EXPECT_NEAR(r.bytes_per_s, C, C * kExact);
  // The cycle plus one diagonal (0-2): GPUs 1 and 3 reach only 0 and 2, so every Hamiltonian cycle
  // is 0-1-2-3-0 one way or the other and the diagonal can carry no ring. The diagonal is idle, the
  // rings of one speed find no more (2C), and the first rings are kept.
  auto chord = from_yaml(R"(
name: chord
nodes:
  - {id: cpu0, kind: cpu, part: xeon-8480p}
  - {id: "gpu{0..3}", kind: gpu, part: h200-nvl}
links:
  - {a: "gpu{0..3}", b: cpu0, tech: pcie5, width: 16}
  - {a: "gpu{0,1,2,3}", b: "gpu{1,2,3,0}", tech: nvlink4-nvl-bridge, width: 6}
  - {a: gpu0, b: gpu2, tech: nvlink4-nvl-bridge, width: 6}
)");
  Communicator kept(chord);
  ASSERT_EQ(kept.rings().size(), 2u);
  for (const auto& r : kept.rings()) EXPECT_NEAR(r.bytes_per_s, C, C * kExact);
}

}  // namespace
}  // namespace linkwise::comm
