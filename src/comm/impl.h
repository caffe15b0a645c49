// Private state of a Communicator, shared by communicator.cc (timing, auto), algorithms.cc (rings,
// trees, NVLS, direct, hierarchical schedules) and bound.cc (cut bounds).
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "linkwise/comm/predict.h"
#include "router.h"

namespace linkwise::comm {

/// Bytes on the wire per payload byte: LL sends 8-byte lines carrying 4 data bytes; LL128 128-byte
/// lines carrying 120 (NCCL src/device/prims_ll.h, prims_ll128.h; NCCL src/graph/tuning.cc comment
/// "120.0/128.0").
double wire_factor(Protocol p);

struct ChassisRouting::Impl {
  const topo::Chassis* chassis = nullptr;
  sim::ChassisResources res;
  std::shared_ptr<const topo::PathFinder> finder;
  /// How its boxes mirror each other: built once, by the first router that asks.
  std::shared_ptr<detail::MirrorSource> mirror = std::make_shared<detail::MirrorSource>();
};

struct Communicator::Impl {
  const topo::Chassis* chassis = nullptr;
  std::shared_ptr<const ChassisRouting::Impl> shared;  ///< the routing tables it was made with
  std::vector<int> ranks;                              // GPU node indices
  CommOptions opt;
  sim::ChassisResources res;
  mutable std::unique_ptr<detail::Router> router;
  mutable std::recursive_mutex mu;  // guards router and the caches

  std::vector<std::vector<int>> groups;  // per box used: rank positions, in ring order
  std::vector<Ring> rings;
  std::vector<std::vector<detail::Route>> ring_routes;  // per ring, per hop i -> i+1
  double ring_rate = 0;                                 // Σ ring rates, bytes/s
  /// Rings with host-staged (SHM) hops on one host: NCCL's channel count (nccl_channels.h) and
  /// the most the rings carry, busbw bytes/s (channels x shm_channel_bytes_per_s of the slowest
  /// PCIe generation the SHM hops cross); 0 elsewhere.
  int nccl_channels = 0;
  double shm_ring_cap = 0;
  /// The same for traffic one way only (a broadcast or reduce between two GPUs): channels x
  /// shm_channel_one_way_bytes_per_s; 0: no figure, the links alone bind it.
  double shm_one_way_cap = 0;
  std::vector<double> ring_load;  // add_ring's scratch: per resource, all zeros between calls
  std::vector<int> ring_touched;  // add_ring's scratch
  bool intra_nvlink = true;       // every intra-box ring hop is an NVLink hop
  /// The first ring's intra-box hops by how NCCL carries them, indexed by detail::HopKind
  /// (NVLink, P2P over PCIe, SHM, NET): latency() takes their mean per-hop latency.
  int intra_hops[4] = {0, 0, 0, 0};
  bool nvls = false;        // every rank reaches in-switch-reduction NVSwitches only
  double nvls_scale = 1;    // wire bytes per NVLS byte: NVLink efficiency / NVLS efficiency
  detail::Route nvls_legs;  // where nvls: per rank, its links up to the switches and down

  struct Timing {
    double tau = 0;                        // seconds per byte of S (bandwidth part)
    std::vector<std::string> bottlenecks;  // filled on first use: up to 3 names
    int saturated = 0;                     // resources saturated in all
    bool bottlenecks_done = false;
    int channels = 0;
    int widest_phase = 0;
    std::shared_ptr<const sim::SimResult> run;  ///< the engine run τ came from (Simple)
  };
  mutable std::map<std::tuple<int, int, int>, Timing> timing_cache;
  mutable std::map<int, Bound> bound_cache;
  mutable double tree_floor = -1;  // tree_tau_floor(), once known

  // algorithms.cc
  void setup_groups();
  void search_rings();
  /// Several boxes: one channel per NIC and round, entering and leaving each box next to that NIC.
  void search_rings_across_boxes(std::vector<double>& residual);
  /// Routes the ring `order` (rank positions) on `residual`, gives it the rate its most loaded
  /// resource allows and takes that from `residual`. Returns the rate; a ring under 0.1 % of the
  /// first (`first`, set by the first ring) is not added and 0 is returned.
  /// `cap`: the most the ring may take (its channel speed); a ring that would get less than
  /// `floor` is not added either (0 returned).
  double add_ring(const std::vector<int>& order, std::vector<double>& residual, double& first,
                  double cap = std::numeric_limits<double>::infinity(), double floor = 0);
  /// add_ring's routes of a ring that passes through boxes in turn, the same places in each
  /// (detail::Router::mirrored()): one box's hops routed, the others mirrored. False (hops left
  /// for add_ring to route) where the ring is not so.
  bool mirror_ring(const std::vector<int>& order, const std::vector<double>& residual,
                   std::vector<detail::Route>& hops);
  bool mirror_rings = true;  ///< false once a routed hop was not the mirror it should be
  /// One box: rings of one speed each, `quantum` bytes/s, packed on the full capacities as NCCL's
  /// search packs channels of one speed (search.cc), each the cycle of greatest summed free share
  /// whose every hop still has `quantum`; replaces rings, ring_routes and ring_rate.
  void pack_rings(double quantum);
  /// Whether a direct NVLink between two ranks (a bridge or mesh link, not through a switch) is
  /// left idle in some direction on `residual`.
  bool idle_peer_link(const std::vector<double>& residual) const;
  /// Pairwise rates between `members` (rank positions) on `residual`, row-major.
  std::vector<double> member_rates(const std::vector<int>& members,
                                   const std::vector<double>& residual) const;
  bool room_for_another(const std::vector<double>& residual, double first) const;
  /// Fills nccl_channels and shm_ring_cap where a ring hop is staged through host memory
  /// (nccl_channels.cc).
  void count_nccl_channels();
  void check_nvls();
  bool supports(Algo a, Op op) const;
  /// Why supports(a, op) is false, as a clause for an error message.
  std::string why_not(Algo a, Op op) const;
  std::span<const Protocol> protocols(Algo a) const;
  void setup_protocols();  ///< fills protos_* from intra_nvlink and opt.protocols
  std::vector<Protocol> protos_nvls, protos_other;
  /// Per link: the fraction of its rate each direction keeps when both carry traffic (the link
  /// technology's duplex_efficiency; 1 for NVLink, socket and network links that give none).
  std::vector<double> duplex;
  /// The capacities `phases` run at: a link whose two directions both carry flows in some phase,
  /// and that carries host-staged (SHM) or P2P-over-PCIe traffic, has both at rate × duplex
  /// (docs/collectives.md, "Both directions at once").
  std::vector<double> capacities_for(const std::vector<Phase>& phases) const;
  /// Phases with flows for S bytes; latencies are left 0 (latency() gives the total).
  std::vector<Phase> phases(Op op, Algo a, Protocol p, double bytes) const;
  const detail::Route& full_route(int i,
                                  int j) const;  // by rank position; throws if there is no path
  void ring_phases(Op op, double S, double w, std::vector<Phase>& out) const;
  void tree_phases(Op op, double S, double w, std::vector<Phase>& out) const;
  /// The edges of double binary tree t (0 or 1), each direction once, as (from, to) rank positions.
  std::vector<std::pair<int, int>> tree_edges(int t) const;
  /// A lower bound on τ(Simple) of the tree from its edges alone, seconds per byte of S (no
  /// routing).
  double tree_tau_floor() const;
  void nvls_phases(Op op, double S, double w, std::vector<Phase>& out) const;
  void direct_phases(Op op, double S, double w, std::vector<Phase>& out) const;
  void hierarchical_phases(Op op, double S, double w, std::vector<Phase>& out) const;
  /// Size-independent time, seconds: NCCL's tuning model with each intra-box hop at the latency
  /// of the transport that carries it (docs/collectives.md, "Protocols and latency").
  double latency(Op op, Algo a, Protocol p) const;
  /// NCCL's own estimate of that time (src/graph/tuning.cc: one per-hop figure for the whole
  /// graph, NVLink when every intra-box hop is NVLink, else PCI), seconds: what auto chooses by.
  double tuner_latency(Op op, Algo a, Protocol p) const;
  /// latency() given the per-hop figures of intra-box ring, tree and direct steps, microseconds.
  double latency_us(Op op, Algo a, Protocol p, double intra_ring, double intra_tree,
                    double intra_direct) const;
  int boxes_used() const { return static_cast<int>(groups.size()); }

  // bound.cc
  struct Cut {
    std::vector<int> a;  // rank positions on one side
    std::string name;
  };
  std::vector<Cut> cuts() const;
  Bound compute_bound(Op op) const;
};

}  // namespace linkwise::comm
