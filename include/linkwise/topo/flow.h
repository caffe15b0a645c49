// The chassis as one graph, the rule for which devices traffic may pass through, and the flow
// network that max flows and widest paths are computed on. topo::PathFinder, comm's router and
// comm's cut flows all build on these, so the three agree on what a path may cross.
//
// Pass-through rule: traffic may pass through switches (PCIe, NVSwitch, network), retimers and CPUs
// (host bridges and socket links), never through a GPU or an NVMe drive, and through a NIC only on
// its way between boxes (GPUDirect RDMA: into a NIC from PCIe, out onto the network). Inside one
// box a NIC is an endpoint, as a GPU is.
//
// A flow network splits each device that traffic may not pass through into an "in" vertex (flows
// end there) and an "out" vertex (flows start there) with no edge between them; devices traffic may
// pass through are one vertex (a NIC is one vertex in a network for traffic between boxes, two
// otherwise).
//
//   topo::FlowNetwork net;
//   auto a = net.add_device(false), b = net.add_device(false), sw = net.add_device(true);
//   net.add_edge(a.out, sw.in, 50e9);  net.add_edge(sw.out, b.in, 25e9);
//   double f = net.max_flow(a.out, b.in);  // 25e9
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "linkwise/topo/chassis.h"

namespace linkwise::topo {

/// Whether traffic may pass through a kind of device.
enum class Transit {
  kNever,         ///< GPU, NVMe drive: traffic starts or ends there
  kBetweenBoxes,  ///< NIC: only traffic between boxes passes through it
  kAlways,        ///< switches, retimers, CPUs
};

/// The one pass-through rule (see the file comment).
Transit transit(NodeKind kind);

/// Whether traffic may pass through a device of `kind`; `between_boxes`: traffic from one box to
/// another.
inline bool may_pass(NodeKind kind, bool between_boxes) {
  const Transit t = transit(kind);
  return t == Transit::kAlways || (t == Transit::kBetweenBoxes && between_boxes);
}

/// Bit of a link family in a family mask (LinkGraph::Arc::family).
constexpr unsigned family_bit(hw::LinkFamily f) { return 1u << static_cast<unsigned>(f); }

/// The chassis as one adjacency structure (compressed rows), built once: each node's arcs in
/// Chassis::incident() order, so that ties between equal paths resolve as on the chassis.
class LinkGraph {
 public:
  /// One direction of a link as seen from a node.
  struct Arc {
    int to = -1;          ///< the node at the other end
    int link = -1;        ///< chassis link index
    bool from_a = false;  ///< whether this arc runs from the link's end a to its end b
    unsigned family = 0;  ///< family_bit() of the link
  };

  explicit LinkGraph(const Chassis& chassis);

  std::span<const Arc> arcs(int node) const {
    return {arcs_.data() + start_[node], arcs_.data() + start_[node + 1]};
  }
  Transit transit(int node) const { return transit_[node]; }
  bool may_pass(int node, bool between_boxes) const {
    return transit_[node] == Transit::kAlways ||
           (transit_[node] == Transit::kBetweenBoxes && between_boxes);
  }
  int box(int node) const { return box_[node]; }
  int nodes() const { return static_cast<int>(box_.size()); }
  const Chassis& chassis() const { return chassis_; }

 private:
  const Chassis& chassis_;
  std::vector<int> start_;
  std::vector<Arc> arcs_;
  std::vector<Transit> transit_;
  std::vector<int> box_;
};

/// A directed flow network: Boost.Graph's push-relabel max flow, and widest paths (Dijkstra on the
/// bottleneck semiring), over vertices and edges added one at a time. Capacities in bytes/s.
class FlowNetwork {
 public:
  /// A capacity no cut can pass through (sources, sinks, open pass-through edges).
  static constexpr double kOpen = 1e30;

  /// A device's vertices: the same vertex when traffic may pass through it.
  struct Device {
    int in = -1;   ///< where flows into the device arrive
    int out = -1;  ///< where flows out of the device leave
  };
  /// A widest path: its bottleneck (0 when there is none), vertices from s to t, and the tag of
  /// each edge taken (one fewer than vertices; the widest of parallel edges).
  struct Widest {
    double width = 0;
    std::vector<int> vertices;
    std::vector<int> tags;
  };

  FlowNetwork();
  ~FlowNetwork();
  FlowNetwork(FlowNetwork&&) noexcept;
  FlowNetwork& operator=(FlowNetwork&&) noexcept;

  int add_vertex();
  /// One vertex when `pass_through`, else an in and an out vertex with no edge between them.
  Device add_device(bool pass_through);
  /// Edge u -> v (and the zero-capacity reverse edge push-relabel needs); returns its id. `tag`:
  /// the caller's name for it (a link index); widest paths only use edges with tag >= 0.
  int add_edge(int u, int v, double capacity, int tag = -1);
  void set_capacity(int edge, double capacity);
  int vertices() const;

  /// Max flow s -> t.
  double max_flow(int s, int t);
  /// The path s -> t of greatest bottleneck over edges of positive capacity with tag >= 0, fewest
  /// hops among equals.
  Widest widest_path(int s, int t) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace linkwise::topo
