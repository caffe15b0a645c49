// NCCL's ring channel count (nccl_channels.h), derived by hand from NCCL's search.
#include "nccl_channels.h"

#include <gtest/gtest.h>

#include <string>

#include "linkwise/comm/predict.h"
#include "linkwise/topo/chassis.h"

namespace linkwise::comm {
namespace {

using detail::NcclLinkLoad;
using detail::NcclSpeeds;

TEST(CommNcclChannels, TwoGpusBehindOneSwitchOnAnIntelHost) {
  // Two Hopper GPUs behind one Gen5 x16 switch (48 GB/s), P2P off: both hops go up the switch's
  // uplink and down again, each taking 6/5 of the speed (Intel PHB), so the uplink carries 2.4 s
  // each way: c <= 48 / (2.4 s) = 20 / s. sm90 array from 40 (<= 48): 40, 30, 24 fit none; 20 fits
  // one (kept, 20); 15, 12 and 11 (11 / 20 > 0.49) one each, less; 6 / 20 < 0.49 stops. Pass 2: 24
  // fits none. One channel at 20 (< 25: no duplication); ncclTopoPostset: two (NCCL's log of
  // this machine: 2 channels).
  std::vector<NcclLinkLoad> loads = {{48, 1.2}, {48, 2.4}, {48, 2.4}, {48, 1.2}};
  auto g = detail::nccl_ring_search(loads, 48, NcclSpeeds::kHopper);
  EXPECT_EQ(g.channels, 1);
  EXPECT_DOUBLE_EQ(g.speed_GBps, 20);
  EXPECT_EQ(detail::nccl_ring_channels(g, 0, 32), 2);
}

TEST(CommNcclChannels, FourGpusOnRootPortsOfAnAmdHost) {
  // Four Blackwell GPUs each on its own Gen5 x16 root port (48), every hop through the CPU: each
  // GPU link carries one crossing a channel each way, c <= 48 / s. sm100 array from 45: 45, 40, 30
  // one channel (45 kept); 24 two (48 > 45, kept); 20, 19, 18 two, less. Pass 2: 30 fits one < 2.
  // Two at 24, doubled: four.
  std::vector<NcclLinkLoad> loads(8, {48, 1.0});
  auto g = detail::nccl_ring_search(loads, 48, NcclSpeeds::kBlackwell);
  EXPECT_EQ(g.channels, 2);
  EXPECT_DOUBLE_EQ(g.speed_GBps, 24);
  EXPECT_EQ(detail::nccl_ring_channels(g, 0, 32), 4);
  // NCCL_MIN_NCHANNELS=8 copies the rings up to eight; NCCL_MAX_NCHANNELS=1 keeps the first.
  EXPECT_EQ(detail::nccl_ring_channels(g, 8, 32), 8);
  EXPECT_EQ(detail::nccl_ring_channels(g, 0, 1), 1);
}

TEST(CommNcclChannels, FastGraphsAreDuplicated) {
  // Two NVLink-bridged pairs joined across a socket link of 40 (ERP_QPI_BW): the widest path is the
  // NVLink pair (123.6) so the sm90 array starts at 60; 60 and 50 fit none on the socket link, 40
  // one (kept); 30, 24 one; 20 two (40, not more); 15 / 40 < 0.49 stops. 40 >= 25: duplicated to
  // two at 20, then four (NCCL's log of that machine: four channels).
  std::vector<NcclLinkLoad> loads = {{40, 1}, {40, 1}, {48, 1}, {48, 1}, {123.6, 1}, {123.6, 1}};
  auto g = detail::nccl_ring_search(loads, 123.6, NcclSpeeds::kHopper);
  EXPECT_EQ(g.channels, 2);
  EXPECT_DOUBLE_EQ(g.speed_GBps, 20);
  EXPECT_EQ(detail::nccl_ring_channels(g, 0, 32), 4);
}

TEST(CommNcclChannels, Gen3SwitchPairsOnAnIntelHost) {
  // Four pre-Hopper GPUs in pairs behind two Gen3 x16 switches (12 GB/s each link in NCCL's
  // figures) on one Intel socket, ring 0 1 2 3: hops 0->1 and 2->3 stay in a switch (one crossing
  // each of two GPU links); hops 1->2 and 3->0 go through the CPU (PHB: 6/5 of the speed on each of
  // four PCIe links: the sender's link up, its switch's uplink up, the other uplink down, the
  // receiver's link down). Widest path 12: the array from 12; 12 fits none (14.4 > 12); 10 one
  // (12 / 12), kept; 9, 7, 6 one each, less; 5 two (12 / 6), 10, not more; 4 / 10 < 0.49 stops.
  // Pass 2: 12 fits none. One channel at 10, doubled: two.
  std::vector<NcclLinkLoad> loads = {{12, 1}, {12, 1}, {12, 1.2}, {12, 1.2}, {12, 1.2}, {12, 1.2},
                                     {12, 1}, {12, 1}, {12, 1.2}, {12, 1.2}, {12, 1.2}, {12, 1.2}};
  auto g = detail::nccl_ring_search(loads, 12, NcclSpeeds::kPreHopper);
  EXPECT_EQ(g.channels, 1);
  EXPECT_DOUBLE_EQ(g.speed_GBps, 10);
  EXPECT_EQ(detail::nccl_ring_channels(g, 0, 32), 2);
}

TEST(CommNcclChannels, ChannelRateByPcieGeneration) {
  // What one host-staged channel moves: 3.9 GB/s up to Gen3 (nccl issue 384), 7.32 from Gen4 on
  // (row 18 of docs/VALIDATION.md; assumed for Gen4 and Gen6).
  EXPECT_DOUBLE_EQ(detail::shm_channel_bytes_per_s(3), 3.9e9);
  EXPECT_DOUBLE_EQ(detail::shm_channel_bytes_per_s(4), 7.32e9);
  EXPECT_DOUBLE_EQ(detail::shm_channel_bytes_per_s(5), 7.32e9);
  EXPECT_DOUBLE_EQ(detail::shm_channel_bytes_per_s(6), 7.32e9);
  // One way only (a broadcast or reduce between two GPUs): 10.31 GB/s up to Gen3 (nccl issue 384's
  // broadcast on the same channel), no figure (0: the links bind) from Gen4 on.
  EXPECT_DOUBLE_EQ(detail::shm_channel_one_way_bytes_per_s(3), 10.31e9);
  EXPECT_DOUBLE_EQ(detail::shm_channel_one_way_bytes_per_s(4), 0.0);
  EXPECT_DOUBLE_EQ(detail::shm_channel_one_way_bytes_per_s(5), 0.0);
}

TEST(CommNcclChannels, NoFitFallsBackToOneChannel) {
  std::vector<NcclLinkLoad> loads = {{1, 1}};
  auto g = detail::nccl_ring_search(loads, 1, NcclSpeeds::kPreHopper);
  EXPECT_EQ(g.channels, 1);
}

TEST(CommNcclChannels, HostStagedRingsRunAtChannelsTimesTheChannelRate) {
  // The H200 NVL machine, GPUs 0,1 behind one switch with P2P off: two channels (above), each at
  // most kShmChannelBytesPerS = 7.32 GB/s, so the ring's busbw at 1 GiB is 2 x 7.32 = 14.64 GB/s
  // less the latency (about 20 us against 74 ms: 0.03 %), under the links' 23.47.
  auto c = topo::load_chassis(std::string(LINKWISE_SOURCE_DIR) +
                              "/examples/validation/h200-nvl-4way-bridge-2s.yaml");
  CommOptions o;
  o.p2p_disable = true;
  Communicator comm(c, {c.gpus()[0], c.gpus()[1]}, o);
  auto p = comm.predict(Op::kAllReduce, 1024.0 * 1024 * 1024);
  EXPECT_EQ(p.channels, 2);
  EXPECT_NEAR(p.busbw_Bps, 2 * detail::kShmChannelBytesPerS,
              2 * detail::kShmChannelBytesPerS * 1e-3);
  // With P2P on the two GPUs use their NVLink bridge: no host staging, no cap.
  Communicator nv(c, {c.gpus()[0], c.gpus()[1]});
  EXPECT_GT(nv.predict(Op::kAllReduce, 1024.0 * 1024 * 1024).busbw_Bps, 40e9);
}

TEST(CommNcclChannels, InterNodeSpeedArrays) {
  // Two boxes: the search keeps the NET nodes and takes the inter arrays. Pre-Hopper GPUs on Gen4
  // x16 root ports of an AMD host (24 each way, one crossing a channel) and a 25 GB/s NIC on its
  // own Gen4 x16 port: the widest GPU-to-NIC path is 24, so speedArrayInter starts at 24 (48, 30,
  // 28 above it): c <= 24 / 24 = 1 (kept, 24); 20, 18, 15 one each, less; 12 (12 / 24 = 0.5 >
  // 0.49) two, 24, not more; 10 / 24 < 0.49 stops. Pass 2: 28 fits none. 24 < 25: no duplication;
  // doubled: two. The intra array would start at 20 (40, 30 above 24) and also give one, then two.
  std::vector<NcclLinkLoad> loads(10, {24, 1.0});
  auto g = detail::nccl_ring_search(loads, 24, NcclSpeeds::kPreHopper, true);
  EXPECT_EQ(g.channels, 1);
  EXPECT_DOUBLE_EQ(g.speed_GBps, 24);
  EXPECT_EQ(detail::nccl_ring_channels(g, 0, 32), 2);
  // Hopper, a path of 48: sm90SpeedArrayInter starts at 48 (the intra array at 40): one channel
  // at 48 (45 ... 30 one, less; 24 two, 48, not more; 22 / 48 < 0.49 stops); 48 >= 25: duplicated
  // to two at 24.
  std::vector<NcclLinkLoad> wide(10, {48, 1.0});
  EXPECT_DOUBLE_EQ(detail::nccl_ring_search(wide, 48, NcclSpeeds::kHopper, true).speed_GBps, 24);
}

// A ring over several boxes that stages through host memory inside each box runs its SHM hops on
// the channels the inter search opens, never more than the same box alone: two boxes of a
// host-staged chassis never beat one box. pcie-8gpu-gen4 (no P2P between its GPUs): one box, 2
// channels x kShmChannelBytesPerS = 14.64 GB/s at 1 GiB; two boxes: the same 2 channels, and the
// busbw within 1 % of one box (the network hop adds latency only: each box's NIC carries the
// ring's bytes at 2 x 7.32 GB/s, under its line rate). Before, the channel limit was skipped on
// several boxes and two boxes gave 20.54 GB/s. workstation-4gpu-nvlink: one box, four channels
// (the ring and its reverse, ReverseOrderTakesTheFreeDirections below); two boxes, two: each
// box's NIC carries every channel both ways, so the reverse order finds no room there.
TEST(CommNcclChannels, SeveralBoxesKeepTheOneBoxShmLimit) {
  for (const char* src : {"pcie-8gpu-gen4", "workstation-4gpu-nvlink"}) {
    SCOPED_TRACE(src);
    auto one = topo::load_chassis(src, 1), two = topo::load_chassis(src, 2);
    Communicator c1(one, one.gpus()), c2(two, two.gpus());
    const double S = 1024.0 * 1024 * 1024;
    auto p1 = c1.predict(Op::kAllReduce, S), p2 = c2.predict(Op::kAllReduce, S);
    const int one_box = std::string(src) == "pcie-8gpu-gen4" ? 2 : 4;
    EXPECT_EQ(p1.channels, one_box);
    EXPECT_EQ(p2.channels, 2);
    EXPECT_NEAR(p1.busbw_Bps, one_box * detail::kShmChannelBytesPerS,
                one_box * detail::kShmChannelBytesPerS * 1e-2);
    EXPECT_LE(p2.busbw_Bps, p1.busbw_Bps * (1 + 1e-9));
    EXPECT_GT(p2.busbw_Bps, 2 * detail::kShmChannelBytesPerS * 0.99);
  }
}

TEST(CommNcclChannels, ReverseOrderTakesTheFreeDirections) {
  // Four pre-Hopper GPUs in two NVLink pairs (0,1 and 2,3; 12 links x 20 = 240 GB/s), each GPU on
  // its own NUMA node, as NCCL reads Azure's NC96ads A100 v4 VM: a CPU a NUMA node, every pair of
  // CPUs joined at AMD_BW 16, each GPU's PCIe link 24 (Gen4 x16). Ring 0 1 2 3 crosses GPU1 up,
  // CPU1->CPU2, GPU2 down, GPU3 up, CPU3->CPU0, GPU0 down; its reverse (0 3 2 1) the other
  // direction of each. One order: c <= 16 / s; from 40 (widest path 240): 40 to 18 fit none; 15
  // one (kept); 12, 10, 9 one, less; 7 / 15 < 0.49 stops: one at 15, two after ncclTopoPostset.
  // With the reverse order (NCCL's search with a different order per channel): 15 fits one of each
  // (30, kept); 12, 10, 9 two, less; stop at 7. Two at 15 (< 25: not duplicated), four after
  // ncclTopoPostset: the four channels of the graph Azure ships for this VM (Azure/azhpc-images,
  // NCCL_GRAPH_FILE for NCv4: two channels at 12, rings 0 1 2 3 and 0 3 2 1, "samechannels 0";
  // its topology's unknown link speed gives NCCL 12 GB/s PCIe, the same two channels).
  const NcclLinkLoad pcie{24, 1, 0}, pcie_rev{24, 0, 1}, sys{16, 1, 0}, sys_rev{16, 0, 1};
  const NcclLinkLoad nvl{240, 1, 0}, nvl_rev{240, 0, 1};
  std::vector<NcclLinkLoad> both = {pcie,     pcie,     pcie,    pcie,   pcie_rev, pcie_rev,
                                    pcie_rev, pcie_rev, sys,     sys,    sys_rev,  sys_rev,
                                    nvl,      nvl,      nvl_rev, nvl_rev};
  auto g = detail::nccl_ring_search(both, 240, NcclSpeeds::kPreHopper);
  EXPECT_EQ(g.channels, 2);
  EXPECT_DOUBLE_EQ(g.speed_GBps, 15);
  EXPECT_EQ(detail::nccl_ring_channels(g, 0, 32), 4);
  std::vector<NcclLinkLoad> first = {{24, 1}, {24, 1}, {24, 1},  {24, 1},
                                     {16, 1}, {16, 1}, {240, 1}, {240, 1}};
  auto one = detail::nccl_ring_search(first, 240, NcclSpeeds::kPreHopper);
  EXPECT_EQ(one.channels, 1);
  EXPECT_DOUBLE_EQ(one.speed_GBps, 15);
  // Where the first order loads both directions of its binding link (two pairs on two sockets
  // joined by one socket link: both crossings use it, one each way) the reverse adds nothing.
  std::vector<NcclLinkLoad> shared = {{16, 1, 1}, {16, 1, 1}, {24, 1, 0}, {24, 0, 1}};
  EXPECT_EQ(detail::nccl_ring_search(shared, 240, NcclSpeeds::kPreHopper).channels, 1);
}

TEST(CommNcclChannels, AGraphThatFillsTheGpusWidthStopsTheSearch) {
  // NCCL stops at the first graph whose channels x speed reach system->totalBw (src/graph/search.cc
  // ncclTopoCompute, "Optimal solution, stop here", checked after the same-order search of each
  // speed; getTotalBw: the larger of a GPU's PCIe width and the sum of its NVLinks'). Two link
  // directions of NCCL width 40: the ring's order crosses the first, its reverse the second.
  // Pre-Hopper speeds from 40 (widest path 40).
  //  - GPU width 40: at 40 the same order fits one channel (40 / 40), 1 x 40 >= 40: kept, the
  //    reverse never searched; 40 >= 25: duplicated to two channels at 20.
  //  - No such bound (the default): at 40 one channel of each order, 80 (kept); 30 / 40 > 0.49:
  //    one of each, 60; 20 / 40 > 0.49: two of each, 80, not more; 18 / 40 < 0.49 stops. Two at
  //    40, duplicated to four at 20.
  const std::vector<NcclLinkLoad> loads = {{40, 1, 0}, {40, 0, 1}};
  const auto optimal = detail::nccl_ring_search(loads, 40, NcclSpeeds::kPreHopper, false, 40);
  EXPECT_EQ(optimal.channels, 2);
  EXPECT_DOUBLE_EQ(optimal.speed_GBps, 20);
  const auto open = detail::nccl_ring_search(loads, 40, NcclSpeeds::kPreHopper);
  EXPECT_EQ(open.channels, 4);
  EXPECT_DOUBLE_EQ(open.speed_GBps, 20);
  // A GPU width of 60 is not reached by the same order (40): the per-channel orders are searched,
  // 80 >= 60 stops there, as without the bound.
  EXPECT_EQ(detail::nccl_ring_search(loads, 40, NcclSpeeds::kPreHopper, false, 60).channels, 4);
  // No speed above the GPU's width is tried: width 24 starts at 20 (one of each order: 40 >= 24).
  const auto narrow = detail::nccl_ring_search(loads, 40, NcclSpeeds::kPreHopper, false, 24);
  EXPECT_EQ(narrow.channels, 2);
  EXPECT_DOUBLE_EQ(narrow.speed_GBps, 20);
}

TEST(CommNcclChannels, IslandOrdersTakeTheFreeHostLinks) {
  // Four Hopper GPUs in two NVLink pairs (0,1 and 2,3; 12 links x 20.6 = 247.2), each on its own
  // NUMA node, every pair of CPUs joined at AMD_BW 16 (the H100 NVL VM of docs/VALIDATION.md row
  // 29). NCCL's search may give each channel its own order (sameChannels 0); besides ring 0 1 2 3
  // and its reverse, the orders that keep each pair together are 0 1 3 2 and 0 2 3 1 (the second
  // pair, resp. the first, the other way round). Their SHM hops cross CPU links the first two
  // leave idle (1->3, 2->0; 0->2, 3->1). Per link direction {width, 0123, 0321, {0132, 0231}}:
  auto up = [](double w, double a, double b, double c, double d) {
    return NcclLinkLoad{w, a, b, {c, d}};
  };
  auto loads = [&](double pcie) {
    return std::vector<NcclLinkLoad>{
        up(pcie, 0, 1, 0, 1),  up(pcie, 1, 0, 1, 0),  up(pcie, 0, 1, 1, 0),  // GPU 0-2 up
        up(pcie, 1, 0, 0, 1),  up(pcie, 1, 0, 1, 0),  up(pcie, 0, 1, 0, 1),  // GPU 3 up, 0-1 down
        up(pcie, 1, 0, 0, 1),  up(pcie, 0, 1, 1, 0),                         // GPU 2-3 down
        up(16, 1, 0, 0, 0),    up(16, 1, 0, 0, 0),    up(16, 0, 1, 0, 0),    // CPU 1->2, 3->0, 0->3
        up(16, 0, 1, 0, 0),    up(16, 0, 0, 1, 0),    up(16, 0, 0, 1, 0),    // 2->1, 1->3, 2->0
        up(16, 0, 0, 0, 1),    up(16, 0, 0, 0, 1),                           // 0->2, 3->1
        up(247.2, 1, 0, 1, 0), up(247.2, 0, 1, 0, 1),                        // NVLink 0->1, 1->0
        up(247.2, 1, 0, 0, 1), up(247.2, 0, 1, 1, 0)};                       // 2->3, 3->2
  };
  // Gen5 links as NCCL counts them (48): sm90 speeds from 60 (widest path 247.2); 60 to 20 fit
  // none (the CPU links, 16); 15: one of each of the four orders (the CPU links one channel each,
  // every GPU link direction two, 30 of 48): 60, kept; 12 and 11 four, less; 6 / 15 < 0.49
  // stops. Four at 15 (< 25: not duplicated), eight after ncclTopoPostset.
  auto g = detail::nccl_ring_search(loads(48), 247.2, NcclSpeeds::kHopper);
  EXPECT_EQ(g.channels, 4);
  EXPECT_DOUBLE_EQ(g.speed_GBps, 15);
  EXPECT_EQ(detail::nccl_ring_channels(g, 0, 32), 8);
  // Links the VM does not report (NCCL's fallback, 12): 15 fits none; 12 one of the first order
  // and one of the reverse (24, kept); the others find GPU 1's, resp. GPU 0's, way up full; 11
  // two (22); 6 four (24, not more); 3 / 12 < 0.49 stops. Two at 12, four after ncclTopoPostset:
  // the A100 VM's count (ReverseOrderTakesTheFreeDirections).
  auto hidden = detail::nccl_ring_search(loads(12), 247.2, NcclSpeeds::kHopper);
  EXPECT_EQ(hidden.channels, 2);
  EXPECT_DOUBLE_EQ(hidden.speed_GBps, 12);
  // Without the further orders (the search as it was): one of each order at 15.
  auto two = loads(48);
  for (auto& l : two) l.other_loads.clear();
  EXPECT_EQ(detail::nccl_ring_search(two, 247.2, NcclSpeeds::kHopper).channels, 2);
  // On the machines themselves: the H100 NVL VM (links reported) eight, the A100 VM (links not
  // reported, Azure's topology file) four.
  for (auto [file, want] : {std::pair{"azure-h100-nvl-4gpu-pairs.yaml", 8},
                            std::pair{"azure-nc96ads-a100-v4.yaml", 4}}) {
    SCOPED_TRACE(file);
    auto c = topo::load_chassis(std::string(LINKWISE_SOURCE_DIR) + "/examples/validation/" + file);
    Communicator comm(c, c.gpus());
    EXPECT_EQ(comm.predict(Op::kAllReduce, 64.0 * 1024 * 1024).channels, want);
  }
}

TEST(CommNcclChannels, AnOrderSearchedAgainTakesNoChannel) {
  // The communicator leaves out a further order whose crossings equal an earlier one's
  // (nccl_channels.cc); the search gives such a repeat nothing. The loads of
  // IslandOrdersTakeTheFreeHostLinks with 0132 and 0231 listed twice: at 15 (Gen5, 48) the four
  // orders take one channel each, and 0132's CPU links 1->3 and 2->0 then carry 15 of 16, 0231's
  // 0->2 and 3->1 likewise: 1 left, under one channel's 15, so the repeats fit none, and at every
  // other speed the first copy leaves its binding link direction as full. The same four channels
  // at 15; with the unreported links (12) the same two at 12.
  auto up = [](double w, double a, double b, double c, double d) {
    return NcclLinkLoad{w, a, b, {c, d, c, d}};
  };
  for (double pcie : {48.0, 12.0}) {
    SCOPED_TRACE(pcie);
    std::vector<NcclLinkLoad> loads = {
        up(pcie, 0, 1, 0, 1),  up(pcie, 1, 0, 1, 0),  up(pcie, 0, 1, 1, 0),  up(pcie, 1, 0, 0, 1),
        up(pcie, 1, 0, 1, 0),  up(pcie, 0, 1, 0, 1),  up(pcie, 1, 0, 0, 1),  up(pcie, 0, 1, 1, 0),
        up(16, 1, 0, 0, 0),    up(16, 1, 0, 0, 0),    up(16, 0, 1, 0, 0),    up(16, 0, 1, 0, 0),
        up(16, 0, 0, 1, 0),    up(16, 0, 0, 1, 0),    up(16, 0, 0, 0, 1),    up(16, 0, 0, 0, 1),
        up(247.2, 1, 0, 1, 0), up(247.2, 0, 1, 0, 1), up(247.2, 1, 0, 0, 1), up(247.2, 0, 1, 1, 0)};
    auto twice = detail::nccl_ring_search(loads, 247.2, NcclSpeeds::kHopper);
    for (auto& l : loads) l.other_loads.resize(2);
    auto once = detail::nccl_ring_search(loads, 247.2, NcclSpeeds::kHopper);
    EXPECT_EQ(twice.channels, once.channels);
    EXPECT_DOUBLE_EQ(twice.speed_GBps, once.speed_GBps);
    EXPECT_EQ(once.channels, pcie == 48 ? 4 : 2);
    EXPECT_DOUBLE_EQ(once.speed_GBps, pcie == 48 ? 15 : 12);
  }
}

TEST(CommNcclChannels, BridgedPairChannelCounts) {
  // Two GPUs joined only by an NVLink bridge: each channel crosses it once each way, c <= W / s.
  // 12 links at 20.6 (247.2), sm90 array: 60 fits 4 (240, kept); 50 four, 40 six, 30 eight, 24
  // ten, 20 twelve (none more than 240); 15 / 60 < 0.49 stops. 60 >= 50: duplicated to 8 at 30;
  // ncclTopoPostset: 16. The pre-Hopper array on the same links: 40 fits 6 (240); 18 / 40 < 0.49
  // stops; 40 is under 50 with more than four channels, so on compute capability 9.0 not
  // duplicated (ncclTopoDupChannels): 12; on 8.0 (20 a link, 240: 6 at 40) duplicated: 24, the
  // count of an A100 pair. nccl issue 1161's H100 PCIe pair logs 24 channels: neither reading
  // gives it for a Hopper pair under Hopper's rules; under the pre-Hopper rules (a release whose
  // search duplicates every graph at 25 GB/s or more) 12 links give 24, 8 links (160: 40 fits
  // four, 30 five, 20 eight: 160, not more; four at 40) 16, 4 links (80: two at 40) 8, so the count
  // reads as 12 links (docs/VALIDATION.md, "Rows 1-2").
  auto pair = [](double w) { return std::vector<NcclLinkLoad>{{w, 1, 1}, {w, 1, 1}}; };
  auto chans = [&](double w, NcclSpeeds s) {
    return detail::nccl_ring_channels(detail::nccl_ring_search(pair(w), w, s), 0, 32);
  };
  EXPECT_EQ(chans(12 * 20.6, NcclSpeeds::kHopper), 16);
  EXPECT_EQ(chans(12 * 20.0, NcclSpeeds::kPreHopper), 24);
  EXPECT_EQ(chans(8 * 20.0, NcclSpeeds::kPreHopper), 16);
  EXPECT_EQ(chans(4 * 20.0, NcclSpeeds::kPreHopper), 8);
  // A Hopper graph at 40 with six channels stays six (not duplicated).
  std::vector<NcclLinkLoad> six = {{240, 1, 1}, {240, 1, 1}};
  auto g = detail::nccl_ring_search(six, 45, NcclSpeeds::kHopper);
  EXPECT_EQ(g.channels, 6);
  EXPECT_DOUBLE_EQ(g.speed_GBps, 40);
}

}  // namespace
}  // namespace linkwise::comm
