// Max flows of topo::PathFinder (Boost push-relabel on whole-number capacities) against an
// independent solver: Edmonds-Karp written here on a dense matrix of double capacities, over the
// same network rules (GPUs and NVMe drives, and NICs outside the all-fabric, pass no traffic
// through them).
#include "linkwise/topo/paths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <limits>

#include "linkwise/topo/chassis.h"

namespace linkwise::topo {
namespace {

constexpr double kGB = 1e9;

bool in_fabric(const Link& l, Fabric f) {
  switch (f) {
    case Fabric::kNvlink:
      return l.family() == hw::LinkFamily::kNvlink;
    case Fabric::kHost:
      return l.family() == hw::LinkFamily::kPcie || l.family() == hw::LinkFamily::kSocket;
    case Fabric::kAll:
      return true;
  }
  return false;
}

// Edmonds-Karp (shortest augmenting paths by breadth-first search) over vertices 2i ("in" of node
// i) and 2i+1 ("out"); a transit node has an unbounded in->out edge, an endpoint none.
double reference_max_flow(const Chassis& c, const std::vector<int>& srcs,
                          const std::vector<int>& dsts, Fabric f) {
  const int n = static_cast<int>(c.nodes().size());
  const int nv = 2 * n + 2, s = 2 * n, t = 2 * n + 1;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> cap(nv, std::vector<double>(nv, 0.0));
  for (const auto& node : c.nodes()) {
    const bool endpoint = node.kind == NodeKind::kGpu || node.kind == NodeKind::kNvme ||
                          (node.kind == NodeKind::kNic && f != Fabric::kAll);
    if (!endpoint) cap[2 * node.index][2 * node.index + 1] = inf;
  }
  for (const auto& l : c.links()) {
    if (!in_fabric(l, f)) continue;
    cap[2 * l.a + 1][2 * l.b] += l.line_bytes_per_s();
    cap[2 * l.b + 1][2 * l.a] += l.line_bytes_per_s();
  }
  for (int x : srcs) cap[s][2 * x + 1] = inf;
  for (int x : dsts) cap[2 * x][t] = inf;
  double total = 0;
  for (;;) {
    std::vector<int> pred(nv, -1);
    pred[s] = s;
    std::deque<int> queue{s};
    while (!queue.empty() && pred[t] < 0) {
      int u = queue.front();
      queue.pop_front();
      for (int v = 0; v < nv; ++v)
        if (pred[v] < 0 && cap[u][v] > 1e-3) {
          pred[v] = u;
          queue.push_back(v);
        }
    }
    if (pred[t] < 0) return total;
    double push = inf;
    for (int v = t; v != s; v = pred[v]) push = std::min(push, cap[pred[v]][v]);
    if (push == inf) return inf;
    for (int v = t; v != s; v = pred[v]) {
      cap[pred[v]][v] -= push;
      cap[v][pred[v]] += push;
    }
    total += push;
  }
}

void expect_same_flows(const std::string& preset) {
  SCOPED_TRACE(preset);
  const Chassis c = load_chassis(preset);
  PathFinder finder(c, Rate::kLine);
  const auto& gpus = c.gpus();
  for (Fabric f : {Fabric::kNvlink, Fabric::kHost, Fabric::kAll})
    for (std::size_t i = 0; i < gpus.size(); ++i)
      for (std::size_t j = 0; j < gpus.size(); ++j) {
        if (i == j) continue;
        const double want = reference_max_flow(c, {gpus[i]}, {gpus[j]}, f);
        EXPECT_NEAR(finder.max_flow(gpus[i], gpus[j], f), want, 1e-9 * want + 1)
            << "GPU" << i << " -> GPU" << j << " fabric " << static_cast<int>(f);
      }
  // Half the GPUs to the other half, and every GPU to every CPU (host memory reads).
  std::vector<int> lo(gpus.begin(), gpus.begin() + gpus.size() / 2),
      hi(gpus.begin() + gpus.size() / 2, gpus.end());
  const auto cpus = c.nodes_of_kind(NodeKind::kCpu);
  for (Fabric f : {Fabric::kNvlink, Fabric::kHost, Fabric::kAll}) {
    const double want = reference_max_flow(c, lo, hi, f);
    EXPECT_NEAR(finder.max_flow(lo, hi, f), want, 1e-9 * want + 1)
        << "bisection, fabric " << static_cast<int>(f);
    const double want_host = reference_max_flow(c, gpus, cpus, f);
    EXPECT_NEAR(finder.max_flow(gpus, cpus, f), want_host, 1e-9 * want_host + 1) << "to the CPUs";
  }
}

TEST(PathsMaxFlowTest, EveryPresetAgreesWithEdmondsKarp) {
  for (const auto& p : presets()) expect_same_flows(p.id);
}

TEST(PathsMaxFlowTest, ExamplesAgreeWithEdmondsKarp) {
  for (const char* e : {"four-gpu-mesh.yaml", "hgx-a100-4nic.yaml", "two-gpu-pcie.yaml"})
    expect_same_flows(std::string(LINKWISE_SOURCE_DIR) + "/examples/" + e);
}

// Hand answers on the DGX H100 (18 NVLink4 links of 25 GB/s per GPU into four NVSwitches): one GPU
// to another 450 GB/s; four GPUs to the other four 4 x 450 = 1800 GB/s; asked again after other
// queries, the answer is the same (the open S and T edges are closed again between queries).
TEST(PathsMaxFlowTest, DgxH100HandAnswersRepeat) {
  const Chassis c = load_chassis("dgx-h100");
  PathFinder finder(c, Rate::kLine);
  const auto& g = c.gpus();
  std::vector<int> lo(g.begin(), g.begin() + 4), hi(g.begin() + 4, g.end());
  for (int round = 0; round < 2; ++round) {
    EXPECT_NEAR(finder.max_flow(g[0], g[5], Fabric::kNvlink) / kGB, 450.0, 1e-6);
    EXPECT_NEAR(finder.max_flow(lo, hi, Fabric::kNvlink) / kGB, 1800.0, 1e-6);
  }
}

}  // namespace
}  // namespace linkwise::topo
