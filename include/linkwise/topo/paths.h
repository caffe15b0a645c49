// Paths, path classes and flows between nodes of a chassis.
//
// Paths pass only where topo/flow.h's pass-through rule lets traffic pass: switches, retimers and
// CPUs, never a GPU or NVMe drive, a NIC only between boxes (Fabric::kAll). The chassis is one
// LinkGraph; each fabric's flow network is built from it once, on first use, and queries then reuse
// it.
//
// Path classes follow `nvidia-smi topo -m`:
//   X     the same device
//   NV#   GPUs joined by # NVLinks (directly, or for NVSwitch systems the links each GPU has into
//   the fabric) PIX   at most one PCIe switch between them PXB   several PCIe switches, no host
//   bridge PHB   through one CPU host bridge (links of one CPU with the same root_complex) NODE
//   through different host bridges of one NUMA node SYS   across the socket link between NUMA nodes
//   (or between boxes: NET)
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "linkwise/topo/chassis.h"
#include "linkwise/topo/flow.h"

namespace linkwise::topo {

enum class PathType { kSelf, kNvlink, kPix, kPxb, kPhb, kNode, kSys, kNet };

struct PathClass {
  PathType type = PathType::kSys;
  int nvlinks = 0;  ///< for kNvlink
  /// "X", "NV18", "PIX", ..., "NET".
  std::string str() const;
};

/// Which links a query may use.
enum class Fabric {
  kNvlink,  ///< NVLink and NVSwitch only
  kHost,    ///< PCIe and socket links inside a box
  kAll,     ///< every link, the network included
};

/// Whether capacities are line rates or what large transfers reach (line × efficiency).
enum class Rate { kLine, kEffective };

struct Path {
  std::vector<int> nodes;             ///< from source to destination
  std::vector<int> links;             ///< link indices, one fewer than nodes
  double bottleneck_bytes_per_s = 0;  ///< per direction; 0 when there is no path
  bool found() const { return !links.empty(); }
};

/// Path classes, widest paths and max flows over one chassis. Not thread-safe (caches graphs).
class PathFinder {
 public:
  explicit PathFinder(const Chassis& chassis, Rate rate = Rate::kLine);
  ~PathFinder();
  PathFinder(const PathFinder&) = delete;
  PathFinder& operator=(const PathFinder&) = delete;

  /// The class `nvidia-smi topo -m` would print between two devices.
  PathClass path_class(int a, int b) const;
  /// NVLinks directly between two GPUs, or each one's links into a shared NVSwitch fabric (the
  /// lesser).
  int nvlink_count(int a, int b) const;

  /// The single path of greatest bottleneck bandwidth (fewest hops among equals).
  Path widest_path(int src, int dst, Fabric fabric);
  /// Max-flow bandwidth per direction from src to dst, bytes/s.
  double max_flow(int src, int dst, Fabric fabric);
  /// Max-flow from every node of `srcs` together to every node of `dsts`, bytes/s.
  double max_flow(const std::vector<int>& srcs, const std::vector<int>& dsts, Fabric fabric);

  /// The fabric GPU traffic between a and b uses: NVLink when they share an NVLink fabric, the host
  /// fabric inside one box, everything between boxes.
  Fabric gpu_fabric(int a, int b) const;

  /// PCIe tree: the node above `n` towards its CPU (through switches and retimers), or -1.
  int pcie_parent(int n) const { return chassis_.node(n).pcie_parent; }
  /// The PCIe link from `n` to its parent, or -1.
  int pcie_uplink(int n) const { return chassis_.node(n).pcie_uplink; }

  const Chassis& chassis() const { return chassis_; }
  /// The chassis as one graph, with the pass-through rule (topo/flow.h).
  const LinkGraph& graph() const { return graph_; }

 private:
  class Graph;
  Graph& graph(Fabric f);
  const Chassis& chassis_;
  Rate rate_;
  LinkGraph graph_;
  std::vector<int> nvl_component_;  ///< per node: NVLink component id (GPUs and NVSwitches), or -1
  std::vector<std::unique_ptr<Graph>> graphs_;
};

}  // namespace linkwise::topo
