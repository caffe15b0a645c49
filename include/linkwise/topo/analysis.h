// Static analysis of a chassis: what `linkwise topo` prints.
//
// Bandwidths are per direction, in bytes/s, at line rate (the link's standard signalling rate ×
// width); the collective and training models apply efficiencies, this analysis does not.
//
// Definitions:
//   path bandwidth     the bottleneck of the single widest path (fewest hops among equals)
//   max-flow bandwidth the max flow between the two over the fabric their traffic uses:
//   NVLink/NVSwitch
//                      for GPUs that share an NVLink fabric, PCIe and socket links inside a box
//                      otherwise, every link between boxes
//   bisection          the least, over splits of the GPUs into two halves of equal size, of the max
//   flow
//                      from one half to the other over all links. Exact (every split) for up to 16
//                      GPUs; beyond, the least over structured splits (boxes in two halves, each
//                      box split in two, index-contiguous, interleaved) and 16 seeded random ones:
//                      an upper bound on the exact value, and equal to it on symmetric machines
//                      where a structured split is the worst one.
#pragma once

#include <string>
#include <vector>

#include "linkwise/topo/budget.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/topo/paths.h"

namespace linkwise::topo {

struct GpuInfo {
  int node = -1;
  std::string name;  ///< display name, "GPU0"
  std::string part;
  std::string cpu;  ///< display name of its CPU, or ""
  int numa = -1;
  std::string cpu_affinity;  ///< core range of its CPU, "0-55", or "N/A"
  double host_bytes_per_s =
      0;  ///< to host memory: max flow to its CPU, capped by that CPU's memory bandwidth
  struct Peer {
    std::string name;        ///< "NIC0", "NVME3"
    std::string cls;         ///< path class
    double bytes_per_s = 0;  ///< max flow over PCIe
  };
  std::vector<Peer> nics, nvmes;
};

struct PairInfo {
  int a = -1, b = -1;          ///< node indices
  std::string name_a, name_b;  ///< "GPU0", "GPU1"
  std::string cls;             ///< "NV18", "SYS", ...
  double path_bytes_per_s = 0;
  double maxflow_bytes_per_s = 0;
  int hops = 0;                 ///< links on the widest path
  std::vector<int> path_links;  ///< link indices of the widest path
};

struct LaneUse {
  std::string node;  ///< node name
  std::string part;
  int used = 0;
  int available = 0;
};

struct Warning {
  std::string kind;  ///< "oversubscribed-uplink", "gpu-nic-not-under-switch", "cross-socket",
                     ///< "trained-below-spec"
  std::string message;
};

struct TopoAnalysis {
  std::string chassis;
  int boxes = 1;
  std::vector<std::string> devices;  ///< matrix rows/columns: GPUs, then NICs, then NVMe
  std::vector<std::vector<std::string>> matrix;  ///< [i][j] path class
  bool matrix_complete = true;                   ///< false: only the first two boxes' devices
  std::vector<GpuInfo> gpus;
  std::vector<PairInfo> pairs;  ///< every GPU pair a < b (see pairs_complete)
  bool pairs_complete = true;   ///< false: box 0's pairs and box 0 to box 1 only
  double bisection_bytes_per_s = 0;
  double bisection_nvlink_bytes_per_s = 0;  ///< the same over NVLink links only
  bool bisection_exact = true;
  std::vector<LaneUse> lanes;
  std::vector<Warning> warnings;
  BudgetReport budgets;  ///< check_budgets(): lanes, ports, power, heat, cost, signal
};

struct TopoOptions {
  bool pairs = true;  ///< compute every GPU pair's path and max flow
  bool bisection = true;
  int max_listed_gpus = 256;  ///< above this many GPUs, pairs lists box 0 and box 0 to box 1 only
  int max_matrix_devices = 256;  ///< above this many devices, the matrix covers the first two boxes
};

/// Analyses a chassis. Boxes are identical copies on a symmetric network, so a pair's figures
/// depend only on whether its GPUs share a box: they are computed for box 0 and for box 0 to box 1,
/// and copied. Cost: one max flow per GPU pair of one box and of two boxes, plus the bisection's.
TopoAnalysis analyse(const Chassis& chassis, const TopoOptions& options = {});

/// The bisection as defined above, over `fabric`. Sets `exact` to whether every split was tried.
double bisection_bytes_per_s(const Chassis& chassis, PathFinder& finder, Fabric fabric,
                             bool* exact = nullptr);

}  // namespace linkwise::topo
