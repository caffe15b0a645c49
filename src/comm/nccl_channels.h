// NCCL's channel count for a ring with host-staged hops, on one host or several, and what one
// channel moves through host memory (private; used by communicator.cc for rings with host-staged
// (SHM) hops).
//
// The search (NCCL src/graph/search.cc, ncclTopoCompute) tries ring speeds s from an array per GPU
// architecture, largest first, starting at the widest GPU-to-GPU path (system->maxBw). At each s it
// builds as many channels c as the paths carry: every link direction a channel crosses k times
// takes k·s of its NCCL width (followPath; on Intel hosts a PHB path takes 6/5 of s on its PCIe
// links, INTEL_P2P_OVERHEAD in src/graph/topo.h). It keeps the graph of greatest c·s and steps down
// while the next speed is above 0.49 of the kept graph's; then raises s while c still fits (pass
// 2). Each channel may take its own order (sameChannels 0): the caller lists the orders searched
// (the ring's, its reverse and, on one host, the orders that keep its islands together: the
// communicator side in nccl_channels.cc). A graph at 25 GB/s or more is duplicated (c doubled, s
// halved), except, above compute capability 8.0, one under 50 GB/s with more than four channels
// (ncclTopoDupChannels).
// ncclTopoPostset (src/graph/connect.cc) then doubles the channels again, and NCCL_MIN_NCHANNELS /
// NCCL_MAX_NCHANNELS clamp the result (copies of the same rings).
//
// NCCL's widths, GB/s per direction, are each link technology's nccl_bw_GBps in
// data/catalog.yaml, with their sources (src/graph/topo.h, src/graph/topo.cc): PCIe lanes x GT/s
// code / 80 (x16 Gen3 12, Gen4 24, Gen5 48); NVLink links x 20 (SM70/SM80), 12 (SM86), 20.6
// (SM90), 40.1 (SM100); one figure per pair of CPUs: BDW_QPI_BW 6, SKL_QPI_BW 10, SRP_QPI_BW 22,
// ERP_QPI_BW 40, AMD_BW 16.
#pragma once

#include <vector>

namespace linkwise::comm::detail {

/// Which of NCCL's speed arrays the search uses (the smallest compute capability of the ranks).
enum class NcclSpeeds { kPreHopper, kHopper, kBlackwell };  ///< in order of compute capability

/// One link direction a ring crosses: its NCCL width and the width one channel at speed 1 takes.
struct NcclLinkLoad {
  double width_GBps = 0;    ///< NCCL's figure for the link, per direction
  double load = 0;          ///< crossings per channel (x 6/5 on PCIe of Intel PHB paths)
  double reverse_load = 0;  ///< the same for a channel of the reverse ring order (0: not searched)
  /// The same for a channel of each further order searched (all links of one search list the same
  /// orders; empty: none).
  std::vector<double> other_loads;
};

struct NcclRingGraph {
  int channels = 0;       ///< after the search's own duplication, before ncclTopoPostset
  double speed_GBps = 0;  ///< per channel, as NCCL's log prints it
};

/// ncclTopoCompute for a ring pattern. One host
/// (`inter` false): the intra speed arrays, `max_width_GBps` the widest GPU-to-GPU path among the
/// ranks. Several hosts (`inter` true): the inter arrays (speedArrayInter...), `max_width_GBps`
/// the widest GPU-to-NIC path, and `loads` include the channel's paths to and from its NICs. No
/// fit at any speed: NCCL's fallback, one channel at 0.1 GB/s.
///
/// Channels of one ring order (`load`), and where any `reverse_load` is set, channels of the
/// reverse order as well: NCCL searches each speed with the same order in every channel
/// (graph->sameChannels 1) and then with any order per channel (sameChannels 0, the recursive
/// search over every next GPU, src/graph/search.cc ncclTopoSearchRec); the reverse order crosses
/// every hop's links the other way, so it adds channels where the first order leaves the other
/// direction of its binding links free (a link direction carries load x s x a + reverse_load x s x
/// b for a channels of the first order and b of the reverse). Where `other_loads` are given,
/// channels of those orders as well, each order in turn taking as many channels as what the
/// earlier ones left carries (the most channels over every count of the first order, at least
/// one: NCCL's first channel takes the first order, its PCI order).
///
/// The search stops at the first graph whose channels x speed reach `total_width_GBps`, the widest
/// GPU's whole width (system->totalBw: the larger of its PCIe link's width and the sum of its
/// NVLinks', getTotalBw in src/graph/search.cc): "Optimal solution, stop here", checked after the
/// same-order search of a speed, so a graph that reaches it with one order is kept without the
/// per-channel orders; no speed above it is tried. Pass 2 raises the speed searching as the kept
/// graph was found (one order, or any per channel).
NcclRingGraph nccl_ring_search(const std::vector<NcclLinkLoad>& loads, double max_width_GBps,
                               NcclSpeeds speeds, bool inter = false,
                               double total_width_GBps = 1e30);

/// Channels the ring runs with: ncclTopoPostset doubles the search's (at most MAXCHANNELS, 32),
/// then NCCL_MIN_NCHANNELS (`min_channels`, 0 = unset) and NCCL_MAX_NCHANNELS (`max_channels`)
/// clamp it.
int nccl_ring_channels(const NcclRingGraph& graph, int min_channels, int max_channels);

/// Bytes per second one channel moves through host memory on a ring all-reduce, busbw units (each
/// hop's payload rate): NCCL's SHM transport, SM stores into and SM loads from the host buffer.
/// Both figures are derived from measurements, not from a mechanism: Little's law on NCCL's own
/// figures (512 threads x unroll 8 x 16 B = 64 KiB in flight a block, src/device/common_kernel.h
/// and ncclCollUnroll; nvbandwidth host_device_latency_sm 0.77-1.4 us) gives 47-85 GB/s a channel,
/// far above either (docs/VALIDATION.md, "Host-staged rings").
///
/// PCIe Gen4 and later: derived: Czyszka/nanoserve-mini results/runs/2026-08-31_latencja_dostepu/
/// nvlink/nccl_lat_island2_nop2p.txt (H200 NVL on Gen5 x16, NCCL 2.28.9, two GPUs behind one PCIe
/// switch, NCCL_P2P_DISABLE=1; NCCL's log: 2 channels, SHM/direct/direct): 14.06 GB/s at 8 MiB,
/// 596.6 us, less this model's 23.8 us of latency for that ring = 14.64 GB/s over two channels.
/// Assumed for Gen4 and Gen6 (no measurement with a known channel count found).
inline constexpr double kShmChannelBytesPerS = 7.32e9;
/// PCIe Gen3 (and older): derived: nccl issue 384 (NCCL 2.4.8, two GPUs on PCIe Gen3 x16,
/// NCCL_P2P_DISABLE=1, NCCL_MAX_NCHANNELS=1: one SHM channel): all-reduce busbw 3.9 GB/s (both
/// directions at once; the same channel moves 10.31 GB/s of broadcast one way, and NVIDIA answers
/// there that some CPUs do not handle bidirectional traffic well). The GPU and CPU are not named.
inline constexpr double kShmChannelGen3BytesPerS = 3.9e9;

/// One host-staged channel moving one way only (each GPU either writes into host buffers or reads
/// from them, never both at once: a broadcast or reduce between two GPUs), PCIe Gen3 and older:
/// nccl issue 384, the same channel as kShmChannelGen3BytesPerS: broadcast 10.31 GB/s one way
/// (NVIDIA there: some CPUs do not handle bidirectional traffic well). The both-ways figures above
/// do not apply to such traffic. No one-way figure is known from Gen4 on: there only the links
/// bind it (shm_channel_one_way_bytes_per_s gives 0).
inline constexpr double kShmChannelOneWayGen3BytesPerS = 10.31e9;

/// What one host-staged channel moves where its SHM hops cross PCIe links of `generation`: the
/// Gen3 figure up to Gen3, kShmChannelBytesPerS from Gen4 on.
double shm_channel_bytes_per_s(int generation);
/// The same for traffic one way only: kShmChannelOneWayGen3BytesPerS up to Gen3, 0 (no figure, no
/// cap) from Gen4 on.
double shm_channel_one_way_bytes_per_s(int generation);

}  // namespace linkwise::comm::detail
