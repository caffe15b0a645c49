// Collective predictions on any chassis: algorithms turned into flows, timed by max-min link
// sharing.
//
// A collective over ranks R (GPU nodes of a chassis) with algorithm A becomes a Schedule: phases
// run one after another, each a fixed latency followed by concurrent flows over chassis resources
// (sim/resources.h numbering). Its time is the engine's (sim/engine.h) time for that chain:
//
//   t = Σ_phases ( latency_p + time of the phase's flows under max-min sharing )
//
// Pipelined algorithms are "coupled" flows (every hop at one rate), one per channel:
//   ring, n ranks, C channels:   each channel a flow over all n hops, bytes = k·S/C on each hop,
//                                 k = 2(n-1)/n all-reduce, (n-1)/n all-gather / reduce-scatter, ...
//                                 → t = α_ring + k·S / Σ_c x_c   (x_c from max-min; uniform ring of
//                                   per-hop bandwidth B: 2(n-1)/n · S/B, the closed form)
//   double binary tree:          two trees, each a flow over its edges up and down with S/2
//   NVLS (in-switch reduction):  each GPU sends S(1+1/n)... see docs/collectives.md
//   direct:                      one flow per ordered pair (all-to-all: S/n each)
//   hierarchical:                intra-island reduce-scatter, inter-island all-reduce, all-gather
// Latency α per algorithm and protocol follows NCCL's tuning model (src/graph/tuning.cc), each
// intra-box step at the latency of the transport that carries it (NVLink, P2P over PCIe, SHM
// through host memory, NET); protocols scale the bytes on the wire (LL ×2, LL128 ×128/120).
// Algo::kAuto picks among the algorithms NCCL's tuner weighs (ring, tree, NVLS; direct for
// all-to-all and send/recv) and protocols what the tuner's own estimate (one per-step figure for
// the whole graph, as NCCL has) makes fastest; hierarchical, and direct for the other operations,
// run only when asked for by name. All figures and their sources: docs/collectives.md.
//
//   auto chassis = linkwise::topo::load_chassis("dgx-h100");
//   linkwise::comm::Communicator comm(chassis);                 // all GPUs; searches rings once
//   auto p = comm.predict(linkwise::comm::Op::kAllReduce, 8.0 * (1 << 30));
//   fmt::print("{} {:.0f} GB/s\n", to_string(p.algorithm), p.busbw_Bps / 1e9);
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "linkwise/comm/collective.h"
#include "linkwise/comm/transport.h"
#include "linkwise/sim/engine.h"
#include "linkwise/sim/resources.h"

namespace linkwise::topo {
class Chassis;
}

namespace linkwise::comm {

/// One phase of a schedule: a fixed latency, then concurrent flows.
struct Phase {
  std::string name;  ///< "ring", "tree", "nvls reduce", "inter-node", ...
  double latency_s = 0;
  std::vector<sim::FlowSpec> flows;  ///< routes in sim::ChassisResources numbering; wire bytes
};

/// A collective as the engine runs it.
struct Schedule {
  Op op = Op::kAllReduce;
  Algo algorithm = Algo::kRing;
  Protocol protocol = Protocol::kSimple;
  int channels = 0;
  double bytes = 0;  ///< S as nccl-tests counts it
  std::vector<Phase> phases;
};

struct Prediction {
  Op op = Op::kAllReduce;
  Algo algorithm = Algo::kRing;  ///< the algorithm used (never kAuto)
  Protocol protocol = Protocol::kSimple;
  int ranks = 0;
  int channels = 0;
  double bytes = 0;  ///< S
  double time_s = 0;
  double latency_s = 0;  ///< the fixed (size-independent) part of time_s
  double algbw_Bps = 0;  ///< S / time_s, bytes/s
  double busbw_Bps = 0;  ///< algbw × bus_factor(op, ranks)
  /// Up to 3 resources the largest phase saturates, e.g. "gpu0->nvsw0", fullest first (bytes
  /// moved / (capacity x time) over the whole schedule), least capacity first among equals.
  std::vector<std::string> bottlenecks;
  int saturated = 0;  ///< how many resources that phase saturates in all
  /// Algo::kAuto and kBest: why this algorithm and protocol, e.g. "NCCL's tuner model: ring/Simple
  /// 5.1 ms < tree/Simple 9.8 ms"; empty when one was asked for by name.
  std::string choice;
};

/// The cut lower bound on a collective's time, as a bus bandwidth independent of size:
///   all-gather:      t ≥ max over cuts (A,B) of |A|·S/n / F(A→B)  (and B→A), F = max flow
///   reduce-scatter:  t ≥ max over cuts of |B|·S/n / F(A→B)        (A pre-reduces B's shards)
///   all-reduce:      t ≥ S / F(A→B) and S / F(B→A): B's ranks need every element's sum, which
///                    depends on A's inputs (the reduce-scatter and all-gather bounds are not
///                    added: their worst cuts may differ and the two halves overlap)
///   others:          the same reasoning per op (docs/collectives.md)
/// Cuts tried: each rank against the rest, each box, NVLink island and CPU socket against the rest,
/// and halves in rank order; every one gives a valid lower bound, the worst is kept.
struct Bound {
  double busbw_Bps = 0;  ///< the bound as a busbw: no algorithm can exceed it
  std::string cut;       ///< the worst cut, e.g. "GPU3 | others"
  double cut_bytes_per_s = 0;
};

/// A ring found by the channel search: the rank order and the rate it got when found.
struct Ring {
  std::vector<int> order;  ///< GPU node indices, in ring order
  double bytes_per_s = 0;  ///< per-hop rate this ring got in the search
  /// Per hop i -> i+1 its resource ids: hop_res[hop_end[i - 1] .. hop_end[i]) (from 0 for hop 0),
  /// one block for the ring's hops rather than one a hop.
  std::vector<int> hop_res;
  std::vector<std::size_t> hop_end;
  /// Hop i's resource ids.
  std::span<const int> hop(std::size_t i) const {
    const std::size_t begin = i == 0 ? 0 : hop_end[i - 1];
    return {hop_res.data() + begin, hop_end[i] - begin};
  }
  std::string str;  ///< "GPU0 GPU1 ... GPU7 (via nvsw0)"
};

struct CommOptions {
  int max_channels = 32;  ///< NCCL MAXCHANNELS (src/include/device.h)
  /// Peer-to-peer only up to this path class (NCCL_P2P_LEVEL); beyond it, traffic is staged through
  /// host memory (SHM). One of LOC, NVL, PIX, PXB, PHB, NODE, SYS; "" = NCCL's default: PXB, or SYS
  /// on AMD CPUs with at most two GPUs (src/graph/paths.cc, ncclTopoCheckP2p).
  std::string p2p_level = "";
  bool allow_nvls =
      true;  ///< consider NVLS where the switches reduce in-network (NCCL_NVLS_ENABLE)
  bool p2p_disable = false;  ///< NCCL_P2P_DISABLE=1: no peer-to-peer at all, NVLink included
  bool shm_disable = false;  ///< NCCL_SHM_DISABLE=1: no staging through host memory (NET instead)
  std::vector<Algo> algos;   ///< NCCL_ALGO: what auto may pick (empty = every one NCCL has)
  std::vector<Protocol> protocols;  ///< NCCL_PROTO: protocols allowed (empty = all)
  /// NCCL_MIN_NCHANNELS: the least channels a host-staged ring runs with (0 = NCCL's own count).
  int min_channels = 0;
  /// NCCL_SHM_LOCALITY: where an SHM hop's host buffer lives, 1 with the sender, 2 with the
  /// receiver (NCCL's default; src/transport/shm.cc, SHM_SEND_SIDE / SHM_RECV_SIDE).
  int shm_locality = 2;
};

/// What every communicator over one chassis needs and may share: the chassis' resource table and
/// its graph for routing (topo::PathFinder), built once. Communicators made with it keep it alive.
class ChassisRouting {
 public:
  explicit ChassisRouting(const topo::Chassis& chassis);
  const topo::Chassis& chassis() const;
  const sim::ChassisResources& resources() const;

  struct Impl;  ///< opaque: defined in src/comm
  std::shared_ptr<const Impl> impl;
};

/// A communicator over a set of GPUs of one chassis. Construction searches rings and trees once
/// (cost grows with the number of ranks); predictions after that are cheap. Thread-compatible.
class Communicator {
 public:
  /// `gpu_nodes`: chassis node indices of the ranks, in rank order; empty = every GPU.
  /// Throws InputError for fewer than 2 ranks, a node that is not a GPU, or a repeated GPU.
  explicit Communicator(const topo::Chassis& chassis, std::vector<int> gpu_nodes = {},
                        CommOptions options = {});
  /// The same, routing over `routing`'s shared tables (identical predictions, faster to build).
  explicit Communicator(const ChassisRouting& routing, std::vector<int> gpu_nodes = {},
                        CommOptions options = {});
  ~Communicator();
  Communicator(Communicator&&) noexcept;
  Communicator& operator=(Communicator&&) noexcept;

  /// Time and bandwidth of `op` on `bytes` (S as nccl-tests counts it). bytes > 0.
  Prediction predict(Op op, double bytes, Algo algo = Algo::kAuto) const;
  /// The flows and phases of the algorithm predict() would use (or `algo` when not kAuto).
  Schedule schedule(Op op, double bytes, Algo algo = Algo::kAuto) const;
  /// The cut lower bound for `op` over these ranks.
  Bound bound(Op op) const;
  /// Whether `algo` can run `op` here (e.g. NVLS needs an in-switch-reduction fabric).
  bool supports(Algo algo, Op op) const;

  const std::vector<int>& ranks() const;
  const std::vector<Ring>& rings() const;
  const sim::ChassisResources& resources() const;
  const topo::Chassis& chassis() const;

  struct Impl;  ///< opaque: defined in src/comm

 private:
  std::unique_ptr<Impl> impl_;
};

/// One-shot prediction (builds a Communicator; keep one for repeated calls).
Prediction predict(const topo::Chassis& chassis, Op op, const std::vector<int>& gpu_nodes,
                   double bytes, Algo algo = Algo::kAuto);

/// Adds a schedule to a task graph as a chain of transfer tasks, one per phase, the first depending
/// on `deps`; each occupies `stream` when its gpu >= 0. Returns the id of the last task.
int add_schedule(sim::TaskGraph& graph, const Schedule& schedule, const std::vector<int>& deps = {},
                 sim::StreamRef stream = {}, const std::string& name = {});

}  // namespace linkwise::comm
