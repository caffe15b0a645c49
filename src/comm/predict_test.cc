// Closed forms the collective model must reproduce, and the public measurements it must match.
#include "linkwise/comm/predict.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "linkwise/topo/chassis.h"
#include "linkwise/topo/spec.h"
#include "linkwise/util/error.h"
#include "topo/testing/four_under_switch.h"

namespace linkwise::comm {
namespace {

constexpr double kExact = 1e-6;     // relative: closed forms the engine reproduces exactly
constexpr double kMeasured = 0.10;  // relative: the issue's accuracy target against measurements
constexpr double kGiB = 1024.0 * 1024 * 1024;
// NCCL's P2P and SHM transports write over PCIe with the SMs: 128 B payloads against the copy
// engines' 256 B (on which the catalog's PCIe efficiencies stand), 24 B of TLP overhead each:
// (128 / 152) / (256 / 280) of a PCIe link's rate (transport_rules.h, sm_write_share).
constexpr double kSmWrite = (128.0 / 152) / (256.0 / 280);
// A PCIe link whose two directions both carry SM-written traffic (P2P or SHM) keeps the catalog's
// duplex_efficiency per direction (pcie4 and pcie5: 0.894; docs/collectives.md, "Both directions at
// once").
constexpr double kDuplex = 0.894;

topo::Chassis from_yaml(const std::string& text) {
  return topo::build_chassis(topo::parse_chassis_spec(text, "test.yaml"));
}

using topo::testing::kFourUnderSwitch;  // four A100 PCIe under one Gen4 switch (PIX)

TEST(CommPredict, RingAllReduceOnUniformRingIsTheClosedForm) {
  // Ring 0-1-2-3 through the switch: each GPU link carries one hop out and one in, so the ring runs
  // at B = x16 Gen4 effective, in SM-written P2P payloads, both directions loaded = 16 x 1.9692
  // GB/s x 0.7935 x 0.9211 x 0.894 = 20.59 GB/s. t = α + 2(n-1)/n · S / B,  α (Simple, PCIe) =
  // 8.4 + 2(n-1) x 5.7 us = 42.6 us (NCCL tuning.cc).
  auto c = from_yaml(kFourUnderSwitch);
  Communicator comm(c);
  ASSERT_EQ(comm.rings().size(), 1u);
  const double B = 16 * 1.9692307692e9 * 0.7935 * kSmWrite * kDuplex, S = 8 * kGiB;
  auto p = comm.predict(Op::kAllReduce, S, Algo::kRing);
  EXPECT_EQ(p.protocol, Protocol::kSimple);
  double expect = 42.6e-6 + 2.0 * 3 / 4 * S / B;
  EXPECT_NEAR(p.time_s, expect, expect * kExact);
  EXPECT_NEAR(p.busbw_Bps, B, B * 2e-3);  // latency is 0.01% of 8 GiB's time
  // All-gather on the same ring: α = 8.4 + 3 x 5.7 us, (n-1)/n · S / B.
  auto ag = comm.predict(Op::kAllGather, S, Algo::kRing);
  double expect_ag = (8.4 + 3 * 5.7) * 1e-6 + 3.0 / 4 * S / B;
  EXPECT_NEAR(ag.time_s, expect_ag, expect_ag * kExact);
}

TEST(CommPredict, PeerWritesOverPcieLoseTheDuplexShareOnlyBothWays) {
  // Two A100 PCIe under one Gen4 switch (PIX: P2P). A broadcast from GPU 0 loads gpu0->sw0 and
  // sw0->gpu1 only: one direction of each link, so B = 25.0 x 0.9211 = 23.03 GB/s (SM writes,
  // 128 B payloads), busbw = S / (t - α). An all-reduce sends each way at once: every link
  // direction keeps 0.894 of that, B = 20.59 GB/s (busbw = 2(n-1)/n · S / (t - α), n = 2).
  auto c = from_yaml(kFourUnderSwitch);
  auto g = c.gpus();
  Communicator comm(c, {g[0], g[1]});
  const double one_way = 16 * 1.9692307692e9 * 0.7935 * kSmWrite, S = kGiB;
  auto bc = comm.predict(Op::kBroadcast, S, Algo::kRing);
  EXPECT_NEAR(S / (bc.time_s - bc.latency_s), one_way, one_way * kExact);
  auto ar = comm.predict(Op::kAllReduce, S, Algo::kRing);
  EXPECT_NEAR(S / (ar.time_s - ar.latency_s), one_way * kDuplex, one_way * kDuplex * kExact);
}

TEST(CommPredict, SmallMessagesAreLatency) {
  // 8 bytes on 8 H100s: ring LL, α = 6.6 + 2·7 x 0.6 us = 15.0 us; the bytes add under 0.1%.
  auto c = topo::load_chassis("dgx-h100");
  Communicator comm(c);
  auto p = comm.predict(Op::kAllReduce, 8);
  EXPECT_EQ(p.algorithm, Algo::kRing);
  EXPECT_EQ(p.protocol, Protocol::kLL);
  EXPECT_NEAR(p.time_s, 15.0e-6, 15.0e-6 * 1e-3);
  EXPECT_NEAR(p.latency_s, 15.0e-6, 1e-12);
}

TEST(CommPredict, SmallAllReduceOverPciePaysEachHopsTransport) {
  // 16 KiB all-reduce on four GPUs over PCIe (a tensor-parallel decode all-reduce: one token of a
  // 8192-wide model in 16-bit). Ring LL, 2(n-1) = 6 steps (NCCL tuning.cc: baseLat ring LL 6.6 us,
  // hwLat per step: NVLink 0.6, PCI 1.0 us).
  //  - P2P through one switch: every step 1.0 us, α = 6.6 + 6 x 1.0 = 12.6 us, as NCCL's table.
  //    The bytes: LL doubles them (8-byte lines, 4 of data), 2(n-1)/n · 2S / B at B = 20.59 GB/s
  //    (the closed-form test above): 1.5 x 32768 / 20.59e9 = 2.387 us; t = 14.99 us.
  auto c = from_yaml(kFourUnderSwitch);
  const double S = 16 * 1024, B = 16 * 1.9692307692e9 * 0.7935 * kSmWrite * kDuplex;
  auto p2p = Communicator(c).predict(Op::kAllReduce, S);
  EXPECT_EQ(p2p.algorithm, Algo::kRing);
  EXPECT_EQ(p2p.protocol, Protocol::kLL);
  EXPECT_NEAR(p2p.latency_s, 12.6e-6, 1e-12);
  const double expect = 12.6e-6 + 1.5 * 2 * S / B;
  EXPECT_NEAR(p2p.time_s, expect, expect * kExact);
  //  - P2P off (NCCL_P2P_DISABLE=1): every hop is SHM. The receive buffer is in host memory, so a
  //    step is the sender's stores crossing PCIe (1.0 us, as P2P) plus the receiver's flag polls,
  //    PCIe reads of host memory: a request and a completion, 2 x 1.0 us. 3.0 us a step:
  //    α = 6.6 + 6 x 3.0 = 24.6 us.
  CommOptions off;
  off.p2p_disable = true;
  auto shm = Communicator(c, c.gpus(), off).predict(Op::kAllReduce, S);
  EXPECT_EQ(shm.protocol, Protocol::kLL);
  EXPECT_NEAR(shm.latency_s, 24.6e-6, 1e-12);
  //    NCCL's own tuner has one per-hop figure for a non-NVLink graph (PCI, 1.0 us): its choice
  //    is made on 12.6 us, as NCCL makes it, and printed as such.
  EXPECT_NE(shm.choice.find("ring/LL"), std::string::npos) << shm.choice;
  //  - Two NVLink-bridged pairs on two sockets (examples/validation/azure-nc96ads-a100-v4.yaml):
  //    the ring alternates bridge hops (0.6 us) and SHM hops across the sockets (3.0 us); the
  //    six steps take three of each: α = 6.6 + 3 x 0.6 + 3 x 3.0 = 17.4 us (NCCL's table gives
  //    12.6: one PCI figure for any graph that is not all NVLink).
  auto az = topo::load_chassis(std::string(LINKWISE_SOURCE_DIR) +
                               "/examples/validation/azure-nc96ads-a100-v4.yaml");
  auto mixed = Communicator(az).predict(Op::kAllReduce, S);
  EXPECT_EQ(mixed.protocol, Protocol::kLL);
  EXPECT_NEAR(mixed.latency_s, 17.4e-6, 1e-12);
}

TEST(CommValidation, EightBytesOnEightGpusThroughHostMemory) {
  // Eight GeForce cards (no peer access: every hop SHM) on two sockets, 8 B all-reduce: ring LL,
  // 14 steps of 3.0 us (docs/collectives.md, "Small messages over PCIe"): 6.6 + 14 x 3.0 = 48.6 us;
  // NCCL's tuner counts 20.6. Measured on machines of that shape (all_reduce_perf -g 8): 42.14 us,
  // 8x RTX 4090 (nccl issue 1530), +15 %; 54.18 us, 8x RTX 3090 (nccl issue 1439), -10 %. The
  // chassis stands in for both (at 8 B only the hop kinds and their number count); neither
  // measurement set a figure. Held to the hand derivation.
  auto c = topo::load_chassis(std::string(LINKWISE_SOURCE_DIR) +
                              "/examples/validation/rtx5090-8gpu-2s.yaml");
  auto p = Communicator(c).predict(Op::kAllReduce, 8);
  EXPECT_EQ(p.protocol, Protocol::kLL);
  EXPECT_NEAR(p.latency_s, 48.6e-6, 1e-12);
  EXPECT_NEAR(p.time_s, 42.14e-6, 42.14e-6 * 0.16);
  EXPECT_NEAR(p.time_s, 54.18e-6, 54.18e-6 * 0.11);
}

// Two switches under a top switch (PXB between them): g0, g1 under sw0; g2, g3 under sw1.
const char* kTwoLevel = R"(
name: two-level
nodes:
  - {id: cpu0, kind: cpu, part: xeon-w9-3495x}
  - {id: top, kind: pcie_switch, part: pex88096}
  - {id: "sw{0..1}", kind: pcie_switch, part: pex88096}
  - {id: "gpu{0..3}", kind: gpu, part: a100-pcie}
links:
  - {a: top, b: cpu0, tech: pcie4, width: 16}
  - {a: "sw{0..1}", b: top, tech: pcie4, width: 16}
  - {a: "gpu{0..3}", b: "sw{0..1:2}", tech: pcie4, width: 16}
)";

TEST(CommPredict, TwoRingsThroughOneUplinkEachGetHalf) {
  // Group A = {gpu0, gpu2}, group B = {gpu1, gpu3}: both rings cross the sw0-top and sw1-top
  // uplinks in both directions. Alone, each runs at B = 25.0 x 0.9211 (SM-written P2P) = 23.03
  // GB/s; together the uplink gives each B/2, so each all-reduce (k = 2(2-1)/2 = 1) takes
  // S / (B/2), twice as long.
  auto c = from_yaml(kTwoLevel);
  auto g = c.gpus();
  Communicator a(c, {g[0], g[2]}), b(c, {g[1], g[3]});
  const double B = 16 * 1.9692307692e9 * 0.7935 * kSmWrite, S = kGiB;
  auto sa = a.schedule(Op::kAllReduce, S, Algo::kRing),
       sb = b.schedule(Op::kAllReduce, S, Algo::kRing);
  sim::Engine engine(a.resources().capacity);
  sim::TaskGraph alone;
  int x = add_schedule(alone, sa);
  double t_alone = engine.run(alone).tasks[x].end_s - sa.phases[0].latency_s;
  EXPECT_NEAR(t_alone, S / B, S / B * kExact);
  sim::TaskGraph both;
  int ia = add_schedule(both, sa), ib = add_schedule(both, sb);
  auto r = engine.run(both);
  EXPECT_NEAR(r.tasks[ia].end_s - sa.phases[0].latency_s, S / (B / 2), S / (B / 2) * kExact);
  EXPECT_NEAR(r.tasks[ib].end_s - sb.phases[0].latency_s, S / (B / 2), S / (B / 2) * kExact);
}

// Two sockets, one GPU on each CPU's root port: SYS, beyond NCCL's default p2p level (PXB).
const char* kTwoSockets = R"(
name: two-sockets
nodes:
  - {id: "cpu{0..1}", kind: cpu, part: xeon-8480c, overrides: {memory_bytes_per_s: 20.0e+9}}
  - {id: "gpu{0..1}", kind: gpu, part: a100-pcie}
links:
  - {a: cpu0, b: cpu1, tech: upi-16, width: 1}
  - {a: "gpu{0..1}", b: "cpu{0..1}", tech: pcie4, width: 16}
)";

TEST(CommPredict, PeerToPeerLessPairGoesThroughHostMemory) {
  // sendrecv on 2 ranks: 0->1 and 1->0 at once. Each is staged in its receiver's memory (written,
  // then read: 2 x the rate) of 20 GB/s, so each runs at 10 GB/s; PCIe (25.0) and UPI (32 x 0.7
  // = 22.4) are wider. busbw = algbw = 10 GB/s.
  auto c = from_yaml(kTwoSockets);
  Communicator comm(c);
  auto p = comm.predict(Op::kSendRecv, kGiB);
  EXPECT_EQ(p.algorithm, Algo::kDirect);
  EXPECT_NEAR(kGiB / (p.time_s - p.latency_s), 10e9, 10e9 * kExact);
  ASSERT_FALSE(p.bottlenecks.empty());
  EXPECT_NE(p.bottlenecks[0].find("memory"), std::string::npos);
  // Allowing peer-to-peer up to SYS, the traffic crosses PCIe and UPI directly. Both ways at once,
  // SM-written: each GPU link direction carries 25.0 x 0.9211 x 0.894 = 20.59 GB/s, under UPI's
  // 22.4 GB/s (a socket link: no duplex loss given).
  Communicator sys(c, {}, CommOptions{.p2p_level = "SYS"});
  auto q = sys.predict(Op::kSendRecv, kGiB);
  const double pcie = 16 * 1.9692307692e9 * 0.7935 * kSmWrite * kDuplex;
  EXPECT_NEAR(kGiB / (q.time_s - q.latency_s), pcie, pcie * kExact);
  EXPECT_LT(pcie, 22.4e9);
}

// Two sockets as above, one CPU's memory narrow (20 GB/s), the other's wide (200 GB/s).
const char* kTwoSocketsUnevenMemory = R"(
name: two-sockets-uneven-memory
nodes:
  - {id: cpu0, kind: cpu, part: xeon-8480c, overrides: {memory_bytes_per_s: 20.0e+9}}
  - {id: cpu1, kind: cpu, part: xeon-8480c, overrides: {memory_bytes_per_s: 200.0e+9}}
  - {id: "gpu{0..1}", kind: gpu, part: a100-pcie}
links:
  - {a: cpu0, b: cpu1, tech: upi-16, width: 1}
  - {a: "gpu{0..1}", b: "cpu{0..1}", tech: pcie4, width: 16}
)";

TEST(CommPredict, ShmLocalityPutsTheBufferWithTheSenderOrTheReceiver) {
  // NCCL's SHM transport (src/transport/shm.cc) puts an SHM hop's host buffer with the receiver
  // (NCCL_SHM_LOCALITY=2, the default) or with the sender (1); the sender's SMs write it, the
  // receiver's SMs read it, and the memory it lives in carries both (2 x the rate). A direct
  // broadcast from gpu0 to gpu1 (one flow, one direction: no duplex loss) crosses gpu0's x16 Gen4
  // link up in SM writes (25.0 x 0.9211 = 23.03 GB/s), UPI (32 x 0.7 = 22.4 GB/s) and gpu1's link
  // down (25.0 GB/s, under the A100's 25.13 GB/s of host reads) either way:
  //   locality 2: cpu1's memory, 200 / 2 = 100 GB/s: UPI binds, 22.4 GB/s;
  //   locality 1: cpu0's memory, 20 / 2 = 10 GB/s: memory binds, 10 GB/s.
  // From gpu1 to gpu0 the memories swap: 10 GB/s at the receiver, 22.4 at the sender.
  auto c = from_yaml(kTwoSocketsUnevenMemory);
  const int g0 = c.find("gpu0"), g1 = c.find("gpu1");
  auto rate = [&](std::vector<int> ranks, int locality) {
    Communicator comm(c, ranks, CommOptions{.shm_locality = locality});
    auto p = comm.predict(Op::kBroadcast, kGiB, Algo::kDirect);
    return kGiB / (p.time_s - p.latency_s);
  };
  EXPECT_NEAR(rate({g0, g1}, 2), 22.4e9, 22.4e9 * kExact);
  EXPECT_NEAR(rate({g0, g1}, 1), 10e9, 10e9 * kExact);
  EXPECT_NEAR(rate({g1, g0}, 2), 10e9, 10e9 * kExact);
  EXPECT_NEAR(rate({g1, g0}, 1), 22.4e9, 22.4e9 * kExact);
  // The flow's route names the memory of the CPU the buffer lives with, once, coefficient 2.
  for (int locality : {1, 2}) {
    Communicator comm(c, {g0, g1}, CommOptions{.shm_locality = locality});
    auto s = comm.schedule(Op::kBroadcast, kGiB, Algo::kDirect);
    ASSERT_EQ(s.phases.size(), 1u);
    ASSERT_EQ(s.phases[0].flows.size(), 1u);
    const auto& f = s.phases[0].flows[0];
    const int mem = comm.resources().memory(c.find(locality == 1 ? "cpu0" : "cpu1"));
    const int other = comm.resources().memory(c.find(locality == 1 ? "cpu1" : "cpu0"));
    auto at = std::find(f.route.begin(), f.route.end(), mem);
    ASSERT_NE(at, f.route.end()) << "locality " << locality;
    EXPECT_EQ(f.coeff[static_cast<std::size_t>(at - f.route.begin())], 2.0);
    EXPECT_EQ(std::find(f.route.begin(), f.route.end(), other), f.route.end());
  }
}

TEST(CommPredict, NvlsFollowsTheInSwitchTrafficModel) {
  // Each GPU sends and receives S(1+1/n) at 450 GB/s x nvls_efficiency 0.688 = 309.6 GB/s:
  // busbw = 2(n-1)/n · S / t = 2(n-1)/(n+1) x 309.6 GB/s at large S.
  auto c = topo::load_chassis("dgx-h100");
  for (int n = 5; n <= 8; ++n) {
    std::vector<int> gpus(c.gpus().begin(), c.gpus().begin() + n);
    Communicator comm(c, gpus);
    auto p = comm.predict(Op::kAllReduce, 8 * kGiB, Algo::kNvls);
    double bw = 450e9 * 0.688;
    double expect = 8 * kGiB * (1.0 + 1.0 / n) / bw + 25e-6;
    EXPECT_NEAR(p.time_s, expect, expect * kExact) << n;
  }
}

// measured.md: each figure a preset can represent, within 10% at large sizes (docs/VALIDATION.md).
double busbw(const topo::Chassis& c, int n, Op op, Algo a) {
  std::vector<int> gpus(c.gpus().begin(), c.gpus().begin() + n);
  return Communicator(c, gpus).predict(op, 8 * kGiB, a).busbw_Bps;
}

TEST(CommValidation, DgxA100AllReduce) {
  // nccl-tests issue 149: about 230 GB/s busbw at 8G on 8x A100 SXM.
  auto c = topo::load_chassis("dgx-a100");
  EXPECT_NEAR(busbw(c, 8, Op::kAllReduce, Algo::kAuto), 230e9, 230e9 * kMeasured);
}

TEST(CommValidation, DgxH100RingTwoToEight) {
  // nccl issue 1455: ring all-reduce 365-370 GB/s busbw for 2 to 8 GPUs.
  auto c = topo::load_chassis("dgx-h100");
  for (int n = 2; n <= 8; ++n)
    EXPECT_NEAR(busbw(c, n, Op::kAllReduce, Algo::kRing), 367.5e9, 367.5e9 * kMeasured) << n;
}

TEST(CommValidation, DgxH100Nvls) {
  // nccl issue 1455: NVLS 420 / 440 / 460 / 480 GB/s at 5 / 6 / 7 / 8 GPUs.
  auto c = topo::load_chassis("dgx-h100");
  const double measured[] = {420e9, 440e9, 460e9, 480e9};
  for (int n = 5; n <= 8; ++n) {
    EXPECT_NEAR(busbw(c, n, Op::kAllReduce, Algo::kAuto), measured[n - 5],
                measured[n - 5] * kMeasured)
        << n;
    EXPECT_NEAR(busbw(c, n, Op::kAllReduce, Algo::kNvls), measured[n - 5],
                measured[n - 5] * kMeasured)
        << n;
  }
}

TEST(CommValidation, DgxH100PointToPoint) {
  // nccl issue 1264 (p2pBandwidthLatencyTest): 371-377 GB/s one way, 740-773 GB/s both ways.
  // sendrecv on 2 ranks sends both ways at once: one way = algbw, both ways = 2 x algbw.
  auto c = topo::load_chassis("dgx-h100");
  double one_way = busbw(c, 2, Op::kSendRecv, Algo::kAuto);
  EXPECT_NEAR(one_way, 374e9, 374e9 * kMeasured);
  EXPECT_NEAR(2 * one_way, 756.5e9, 756.5e9 * kMeasured);
}

// examples/hgx-a100-4nic.yaml: 8 A100 SXM on 6 NVSwitches, four HDR NICs, NIC j and GPUs 2j, 2j+1
// under PCIe switch j.
topo::Chassis hgx_4nic(int boxes) {
  return topo::load_chassis(std::string(LINKWISE_SOURCE_DIR) + "/examples/hgx-a100-4nic.yaml",
                            boxes);
}

TEST(CommRingSearch, OneChannelPerNicAcrossBoxes) {
  // NCCL's inter-node ring (search.cc): NET j -> GPU a -> ... -> GPU x -> NET j, a and x the GPUs
  // nearest NIC j. Here that is GPU 2j in and GPU 2j+1 out of every box, so NIC j carries channel j
  // once out and once in (full duplex), and each channel runs at one NIC's effective rate:
  // HDR 200 Gb/s = 25 GB/s x 0.96 (catalog) = 24 GB/s; the NVLinks (240 GB/s a GPU) carry 4 x 24.
  // Four channels: busbw at 8 GiB = 4 x 24 = 96 GB/s less the latency (under 0.1 %).
  auto c = hgx_4nic(2);
  Communicator comm(c);
  ASSERT_EQ(comm.rings().size(), 4u);
  const double nic = 24e9;
  for (std::size_t j = 0; j < 4; ++j) {
    const auto& r = comm.rings()[j];
    EXPECT_NEAR(r.bytes_per_s, nic, nic * kExact) << j;
    ASSERT_EQ(r.order.size(), 16u);
    for (int box = 0; box < 2; ++box) {
      EXPECT_EQ(c.node(r.order[8 * box]).name, fmt::format("b{}/gpu{}", box, 2 * j)) << j;
      EXPECT_EQ(c.node(r.order[8 * box + 7]).name, fmt::format("b{}/gpu{}", box, 2 * j + 1)) << j;
    }
  }
  auto p = comm.predict(Op::kAllReduce, 8 * kGiB, Algo::kRing);
  EXPECT_NEAR(p.busbw_Bps, 4 * nic, 4 * nic * 1e-3);
}

TEST(CommPredict, AutoPicksOnlyWhatNcclsTunerWould) {
  // NCCL's tuner weighs ring, tree, NVLS (and CollNet, not modelled); hierarchical, and direct for
  // the collectives, are run only when asked for.
  for (auto c :
       {hgx_4nic(2), topo::load_chassis("dgx-a100", 2), topo::load_chassis("dgx-h100", 2)}) {
    Communicator comm(c);
    for (double bytes = 8; bytes <= 8 * kGiB; bytes *= 32) {
      for (Op op :
           {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kBroadcast, Op::kReduce}) {
        Algo a = comm.predict(op, bytes).algorithm;
        EXPECT_TRUE(a == Algo::kRing || a == Algo::kTree || a == Algo::kNvls)
            << c.name() << " " << to_string(a);
      }
      for (Op op : {Op::kAllToAll, Op::kSendRecv})
        EXPECT_EQ(comm.predict(op, bytes).algorithm, Algo::kDirect);
    }
    EXPECT_GT(comm.predict(Op::kAllReduce, 8 * kGiB, Algo::kHierarchical).busbw_Bps, 0);
    EXPECT_GT(comm.predict(Op::kAllReduce, 8 * kGiB, Algo::kDirect).busbw_Bps, 0);
  }
}

TEST(CommValidation, HgxA100FourNicsTwoBoxes) {
  // nccl-tests issue 100: two HGX A100 with four ConnectX-6 HDR each, all_reduce_perf -b 1G -e 8G:
  // 91 GB/s busbw. Model: four channels of 24 GB/s (CommRingSearch.OneChannelPerNicAcrossBoxes).
  auto c = hgx_4nic(2);
  Communicator comm(c);
  for (double s = kGiB; s <= 8 * kGiB; s *= 2) {
    auto p = comm.predict(Op::kAllReduce, s);
    EXPECT_EQ(p.algorithm, Algo::kRing) << s;
    EXPECT_NEAR(p.busbw_Bps, 91e9, 91e9 * kMeasured) << s;
  }
}

TEST(CommValidation, HgxA100FourNicsThreeBoxesAt128M) {
  // nccl-tests issue 119: three such servers (Xeon 8358), all_reduce_perf -b 8 -e 128M: average
  // 84.8 GB/s, peak 96 GB/s busbw. Sizes stop at 128M, so the largest size is held against both.
  auto c = hgx_4nic(3);
  auto p = Communicator(c).predict(Op::kAllReduce, 128.0 * 1024 * 1024);
  EXPECT_NEAR(p.busbw_Bps, 96e9, 96e9 * kMeasured);
  EXPECT_NEAR(p.busbw_Bps, 84.8e9, 84.8e9 * kMeasured);
}

TEST(CommValidation, DgxH100TwoBoxesRingPerNic) {
  // nccl-tests issue 290 (NVIDIA): NDR 400 Gb/s NICs should give 46-48 GB/s each; a DGX H100 has
  // eight, one per GPU: ring busbw 368-384 GB/s on two boxes. Model: 8 channels x 47.5 GB/s.
  auto c = topo::load_chassis("dgx-h100", 2);
  auto p = Communicator(c).predict(Op::kAllReduce, 8 * kGiB, Algo::kRing);
  EXPECT_NEAR(p.busbw_Bps, 376e9, 376e9 * kMeasured);
}

TEST(CommPredict, BoundHoldsAndRingMeetsItOnAUniformRing) {
  // On the switch box: each rank's x16 link gives t >= S/B (busbw 1.5 B), and 2(n-1)·S bytes must
  // leave the four GPUs' links of B each: t >= 6 S / 4B, busbw bound = B; ring meets it.
  auto c = from_yaml(kFourUnderSwitch);
  Communicator comm(c);
  const double B = 16 * 1.9692307692e9 * 0.7935;
  auto b = comm.bound(Op::kAllReduce);
  EXPECT_NEAR(b.busbw_Bps, B, B * kExact);
  for (Op op :
       {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kBroadcast, Op::kAllToAll}) {
    auto p = comm.predict(op, 8 * kGiB);
    EXPECT_LE(p.busbw_Bps, comm.bound(op).busbw_Bps * (1 + kExact)) << to_string(op);
  }
  // Predictions never beat the bound on the presets either.
  for (const char* preset :
       {"dgx-h100", "dgx-a100", "dgx1-v100", "pcie-8gpu-gen4", "workstation-4gpu-nvlink"}) {
    auto pc = topo::load_chassis(preset);
    Communicator pcomm(pc);
    for (Op op :
         {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kAllToAll, Op::kBroadcast})
      EXPECT_LE(pcomm.predict(op, 8 * kGiB).busbw_Bps, pcomm.bound(op).busbw_Bps * (1 + 1e-6))
          << preset << " " << to_string(op);
  }
}

TEST(CommPredict, MultiBoxUsesTheNetwork) {
  auto c = topo::load_chassis("dgx-h100", 2);
  Communicator comm(c);
  EXPECT_EQ(comm.ranks().size(), 16u);
  auto p = comm.predict(Op::kAllReduce, 8 * kGiB, Algo::kRing);
  // 8 NICs of 400 Gb/s x 0.95 per box = 380 GB/s out of each box, shared by the ring channels.
  EXPECT_LE(p.busbw_Bps, 380e9 * 1.0001);
  EXPECT_GT(p.busbw_Bps, 300e9);
  auto h = comm.predict(Op::kAllReduce, 8 * kGiB, Algo::kHierarchical);
  EXPECT_GT(h.busbw_Bps, 0);
  EXPECT_FALSE(comm.supports(Algo::kNvls, Op::kAllReduce));
  EXPECT_THROW(comm.predict(Op::kAllReduce, 8, Algo::kNvls), InputError);
}

TEST(CommPredict, BadInput) {
  auto c = topo::load_chassis("dgx-h100");
  EXPECT_THROW(Communicator(c, {c.gpus()[0]}), InputError);
  EXPECT_THROW(Communicator(c, {c.gpus()[0], c.gpus()[0]}), InputError);
  EXPECT_THROW(Communicator(c, {c.gpus()[0], c.find("cpu0")}), InputError);
  Communicator comm(c);
  EXPECT_THROW(comm.predict(Op::kAllReduce, 0), InputError);
  EXPECT_THROW(comm.predict(Op::kAllReduce, 2.0 * 1099511627776.0), InputError);
}

}  // namespace
}  // namespace linkwise::comm

namespace linkwise::comm {
namespace {

TEST(CommValidation, DgxA100TwoBoxes) {
  // NVIDIA/nccl issue 812 (NVIDIA): 192 GB/s all-reduce busbw between DGX A100s, 8x 200 Gb/s IB.
  // Model: eight channels, one per HDR NIC at 25 GB/s x 0.96 = 24 GB/s: busbw = 8 x 24 = 192 GB/s
  // at large sizes, less the latency term (under 0.2% at 8 GiB).
  auto c = topo::load_chassis("dgx-a100", 2);
  Communicator comm(c);
  auto p = comm.predict(Op::kAllReduce, 8.0 * (1ull << 30));
  EXPECT_EQ(p.algorithm, Algo::kRing);
  EXPECT_NEAR(p.busbw_Bps, 192e9, 192e9 * 0.10);  // the issue's 10% bound
  EXPECT_NEAR(p.busbw_Bps, 8 * 24e9, 8 * 24e9 * 2e-3);
}

}  // namespace
}  // namespace linkwise::comm

namespace linkwise::comm {
namespace {

TEST(CommRingSearch, ReversedRingUsesTheFreePcieDirections) {
  // workstation-4gpu-nvlink: two NVLink-bridged pairs, the pairs joined only through the CPU (PCIe
  // Gen4 x16 per GPU: 31.5 GB/s x 0.79 = 25 GB/s per direction). Ring 0 (GPU0 GPU1 GPU2 GPU3)
  // crosses PCIe GPU1->GPU2 and GPU3->GPU0 in one direction of each GPU's link; the reversed ring
  // uses the other direction, so the search finds two rings. The PCIe hops are SHM (NODE is beyond
  // NCCL's P2P level PXB): the sender's SMs write up to host memory (25 x 0.9211 = 23.03 GB/s per
  // ring), and the two rings load both directions of every GPU's link with host-memory traffic, so
  // each keeps pcie4 duplex_efficiency 0.894: ring busbw at 1 GiB is 2 x 25 x 0.894 x 0.9211 =
  // 41.2 GB/s, less the latency term, with NCCL_MIN_NCHANNELS=8 (8 x 7.32 = 59 GB/s of host-staged
  // channels, nccl_channels.h). By default NCCL's search gives four channels: one of each order
  // at 20 GB/s (each SHM hop takes 6/5 of it on this Intel host's 24 GB/s links, and the reverse
  // order takes the directions the first leaves free), doubled by ncclTopoPostset: 4 x 7.32 =
  // 29.28 GB/s (two before the reverse order was searched: 14.64).
  auto c = topo::load_chassis("workstation-4gpu-nvlink");
  EXPECT_NEAR(Communicator(c).predict(Op::kAllReduce, 1.0 * (1ull << 30), Algo::kRing).busbw_Bps,
              29.28e9, 29.28e9 * 0.01);
  CommOptions eight;
  eight.min_channels = 8;
  Communicator comm(c, {}, eight);
  ASSERT_EQ(comm.rings().size(), 2u);
  for (const auto& r : comm.rings())
    EXPECT_NEAR(r.bytes_per_s, 25e9 * kSmWrite, 25e9 * kSmWrite * 0.01);
  auto p = comm.predict(Op::kAllReduce, 1.0 * (1ull << 30), Algo::kRing);
  const double expect = 50e9 * 0.894 * kSmWrite;
  EXPECT_NEAR(p.busbw_Bps, expect, expect * 0.01);
}

}  // namespace
}  // namespace linkwise::comm
