#include "linkwise/topo/paths.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <boost/pending/disjoint_sets.hpp>

namespace linkwise::topo {

std::string PathClass::str() const {
  switch (type) {
    case PathType::kSelf:
      return "X";
    case PathType::kNvlink:
      return fmt::format("NV{}", nvlinks);
    case PathType::kPix:
      return "PIX";
    case PathType::kPxb:
      return "PXB";
    case PathType::kPhb:
      return "PHB";
    case PathType::kNode:
      return "NODE";
    case PathType::kSys:
      return "SYS";
    case PathType::kNet:
      return "NET";
  }
  return "?";
}

namespace {

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

}  // namespace

// One fabric's flow network (topo/flow.h): devices traffic may not pass through are split, so no
// flow or path passes through them; a NIC passes only in the fabric that joins boxes (kAll). Two
// extra vertices S and T have zero-capacity edges to every node; a multi-source query opens the
// ones it needs.
class PathFinder::Graph {
 public:
  Graph(const LinkGraph& graph, Fabric f, Rate rate) {
    const Chassis& c = graph.chassis();
    const int n = graph.nodes();
    dev_.resize(n);
    vertex_node_.reserve(2 * n + 2);
    for (int v = 0; v < n; ++v) {
      dev_[v] = net_.add_device(graph.may_pass(v, f == Fabric::kAll));
      vertex_node_.resize(net_.vertices(), v);
    }
    s_ = net_.add_vertex();
    t_ = net_.add_vertex();
    vertex_node_.resize(net_.vertices(), -1);
    for (const auto& l : c.links()) {
      if (!in_fabric(l, f)) continue;
      double cap = rate == Rate::kLine ? l.line_bytes_per_s() : l.effective_bytes_per_s();
      net_.add_edge(dev_[l.a].out, dev_[l.b].in, cap, l.index);
      net_.add_edge(dev_[l.b].out, dev_[l.a].in, cap, l.index);
    }
    src_edge_.resize(n);
    dst_edge_.resize(n);
    for (int i = 0; i < n; ++i) {
      src_edge_[i] = net_.add_edge(s_, dev_[i].out, 0);
      dst_edge_[i] = net_.add_edge(dev_[i].in, t_, 0);
    }
  }

  double max_flow(const std::vector<int>& srcs, const std::vector<int>& dsts) {
    for (int s : srcs) net_.set_capacity(src_edge_[s], FlowNetwork::kOpen);
    for (int d : dsts) net_.set_capacity(dst_edge_[d], FlowNetwork::kOpen);
    double f = net_.max_flow(s_, t_);
    for (int s : srcs) net_.set_capacity(src_edge_[s], 0);
    for (int d : dsts) net_.set_capacity(dst_edge_[d], 0);
    return f;
  }

  Path widest_path(int src, int dst) const {
    auto w = net_.widest_path(dev_[src].out, dev_[dst].in);
    Path p;
    if (w.vertices.empty()) return p;
    p.bottleneck_bytes_per_s = w.width;
    for (int v : w.vertices) {
      int node = vertex_node_[v];
      if (p.nodes.empty() || p.nodes.back() != node) p.nodes.push_back(node);
    }
    p.links = std::move(w.tags);
    return p;
  }

 private:
  FlowNetwork net_;
  std::vector<FlowNetwork::Device> dev_;
  std::vector<int> vertex_node_;
  std::vector<int> src_edge_, dst_edge_;
  int s_ = 0, t_ = 0;
};

PathFinder::PathFinder(const Chassis& chassis, Rate rate)
    : chassis_(chassis), rate_(rate), graph_(chassis) {
  const int n = static_cast<int>(chassis.nodes().size());
  // NVSwitch fabrics: components joined through NVSwitches.
  nvl_component_.assign(n, -1);
  boost::disjoint_sets_with_storage<> fabric(n);
  for (const auto& l : chassis.links()) {
    if (l.family() != hw::LinkFamily::kNvlink) continue;
    bool via_switch = chassis.node(l.a).kind == NodeKind::kNvSwitch ||
                      chassis.node(l.b).kind == NodeKind::kNvSwitch;
    if (!via_switch) continue;
    fabric.union_set(l.a, l.b);
    nvl_component_[l.a] = nvl_component_[l.b] = 0;
  }
  for (int i = 0; i < n; ++i)
    if (nvl_component_[i] >= 0) nvl_component_[i] = static_cast<int>(fabric.find_set(i));
  graphs_.resize(3);
}

PathFinder::~PathFinder() = default;

PathFinder::Graph& PathFinder::graph(Fabric f) {
  auto& g = graphs_[static_cast<int>(f)];
  if (!g) g = std::make_unique<Graph>(graph_, f, rate_);
  return *g;
}

int PathFinder::nvlink_count(int a, int b) const {
  int direct = 0;
  for (int li : chassis_.incident(a)) {
    const Link& l = chassis_.link(li);
    if (l.family() == hw::LinkFamily::kNvlink && l.other(a) == b) direct += l.width;
  }
  if (direct > 0) return direct;
  if (nvl_component_[a] < 0 || nvl_component_[a] != nvl_component_[b]) return 0;
  auto into_switches = [&](int g) {
    int sum = 0;
    for (int li : chassis_.incident(g)) {
      const Link& l = chassis_.link(li);
      if (l.family() == hw::LinkFamily::kNvlink &&
          chassis_.node(l.other(g)).kind == NodeKind::kNvSwitch)
        sum += l.width;
    }
    return sum;
  };
  return std::min(into_switches(a), into_switches(b));
}

PathClass PathFinder::path_class(int a, int b) const {
  if (a == b) return {PathType::kSelf, 0};
  const Node& na = chassis_.node(a);
  const Node& nb = chassis_.node(b);
  if (na.kind == NodeKind::kGpu && nb.kind == NodeKind::kGpu)
    if (int nv = nvlink_count(a, b); nv > 0) return {PathType::kNvlink, nv};
  if (na.box != nb.box) return {PathType::kNet, 0};
  // Each device's chain up the PCIe tree to its root (a few levels: kept in place, no heap).
  using Chain = boost::container::small_vector<int, 16>;
  auto chain = [&](int x) {
    Chain c;
    for (int v = x; v >= 0; v = chassis_.node(v).pcie_parent) c.push_back(v);
    return c;
  };
  const Chain ca = chain(a), cb = chain(b);
  int lca = -1;
  std::size_t ia = 0, ib = 0;
  for (ia = 0; ia < ca.size() && lca < 0; ++ia)
    for (ib = 0; ib < cb.size(); ++ib)
      if (ca[ia] == cb[ib]) {
        lca = ca[ia];
        break;
      }
  if (lca < 0) {
    if (na.numa >= 0 && na.numa == nb.numa) return {PathType::kNode, 0};
    return {PathType::kSys, 0};
  }
  --ia;  // the loop stepped past the match
  if (chassis_.node(lca).kind == NodeKind::kCpu) {
    // Below one socket but on two of its NUMA nodes (sub-NUMA clustering): nvidia-smi's SYS,
    // "traversing ... the SMP interconnect between NUMA nodes" (nvidia-smi topo -m legend).
    if (na.numa >= 0 && nb.numa >= 0 && na.numa != nb.numa) return {PathType::kSys, 0};
    // The links leaving the CPU towards each device.
    int la = ia >= 1 ? chassis_.node(ca[ia - 1]).pcie_uplink : -1;
    int lb = ib >= 1 ? chassis_.node(cb[ib - 1]).pcie_uplink : -1;
    if (la >= 0 && lb >= 0) {
      int ra = chassis_.link(la).root_complex, rb = chassis_.link(lb).root_complex;
      if (la == lb || (ra >= 0 && ra == rb)) return {PathType::kPhb, 0};
    }
    return {PathType::kNode, 0};
  }
  int switches = 0;
  auto count = [&](const Chain& c, std::size_t upto) {
    for (std::size_t i = 1; i < upto; ++i)
      if (chassis_.node(c[i]).kind == NodeKind::kPcieSwitch) ++switches;
  };
  count(ca, ia);
  count(cb, ib);
  if (chassis_.node(lca).kind == NodeKind::kPcieSwitch) ++switches;
  return {switches <= 1 ? PathType::kPix : PathType::kPxb, 0};
}

Fabric PathFinder::gpu_fabric(int a, int b) const {
  if (chassis_.node(a).box != chassis_.node(b).box) return Fabric::kAll;
  if (chassis_.node(a).kind == NodeKind::kGpu && chassis_.node(b).kind == NodeKind::kGpu &&
      nvlink_count(a, b) > 0)
    return Fabric::kNvlink;
  return Fabric::kHost;
}

Path PathFinder::widest_path(int src, int dst, Fabric fabric) {
  return graph(fabric).widest_path(src, dst);
}

double PathFinder::max_flow(int src, int dst, Fabric fabric) {
  return graph(fabric).max_flow({src}, {dst});
}

double PathFinder::max_flow(const std::vector<int>& srcs, const std::vector<int>& dsts,
                            Fabric fabric) {
  return graph(fabric).max_flow(srcs, dsts);
}

}  // namespace linkwise::topo
