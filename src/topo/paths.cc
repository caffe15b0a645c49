#include "linkwise/topo/paths.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <boost/pending/disjoint_sets.hpp>
#include <limits>

namespace linkwise::topo {

std::string PathClass::str() const {
  switch (type) {
    case PathType::kSelf: return "X";
    case PathType::kNvlink: return fmt::format("NV{}", nvlinks);
    case PathType::kPix: return "PIX";
    case PathType::kPxb: return "PXB";
    case PathType::kPhb: return "PHB";
    case PathType::kNode: return "NODE";
    case PathType::kSys: return "SYS";
    case PathType::kNet: return "NET";
  }
  return "?";
}

namespace {

bool in_fabric(const Link& l, Fabric f) {
  switch (f) {
    case Fabric::kNvlink: return l.family() == hw::LinkFamily::kNvlink;
    case Fabric::kHost: return l.family() == hw::LinkFamily::kPcie || l.family() == hw::LinkFamily::kSocket;
    case Fabric::kAll: return true;
  }
  return false;
}

bool is_endpoint(NodeKind k, Fabric f) {
  return k == NodeKind::kGpu || k == NodeKind::kNvme || (k == NodeKind::kNic && f != Fabric::kAll);
}

}  // namespace

// A directed flow network over one fabric. Endpoint nodes are split into an "in" and an "out" vertex
// with no edge between them, so no flow or path passes through them. Two extra vertices S and T have
// zero-capacity edges to every node; a multi-source query opens the ones it needs.
//
// Flow capacities are whole numbers (bytes/s, or a coarser whole unit on a machine whose sums would not
// fit): push-relabel is exact only in integer arithmetic; in doubles a flow pushed through an "open" edge
// of 1e30 vanished in rounding, so flow was not conserved (Boost's is_flow() check failed in Debug
// builds). An open edge carries one unit more than every link together, which no cut can exceed.
class PathFinder::Graph {
 public:
  using Flow = std::int64_t;
  struct EdgeProp {
    double width = 0;  // bytes/s, for the widest path
    Flow capacity = 0;
    Flow residual = 0;
    boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>::edge_descriptor reverse;
    int link = -1;  // chassis link, or -1 for S/T and reverse edges
  };
  using G = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property, EdgeProp>;
  using Edge = G::edge_descriptor;
  using Vertex = G::vertex_descriptor;

  Graph(const Chassis& c, Fabric f, Rate rate) {
    const int n = static_cast<int>(c.nodes().size());
    in_.resize(n);
    out_.resize(n);
    int next = 0;
    for (const auto& node : c.nodes()) {
      in_[node.index] = next++;
      out_[node.index] = is_endpoint(node.kind, f) ? next++ : in_[node.index];
    }
    s_ = next++;
    t_ = next++;
    g_ = G(next);
    vertex_node_.assign(next, -1);
    for (const auto& node : c.nodes()) {
      vertex_node_[in_[node.index]] = node.index;
      vertex_node_[out_[node.index]] = node.index;
    }
    std::vector<std::pair<const Link*, double>> caps;
    double total = 0;
    for (const auto& l : c.links()) {
      if (!in_fabric(l, f)) continue;
      double cap = rate == Rate::kLine ? l.line_bytes_per_s() : l.effective_bytes_per_s();
      caps.emplace_back(&l, cap);
      total += 2 * cap;
    }
    // Every S edge may be open at once: (n + 1) open edges of (total + links + 1) units must fit.
    const double need = (static_cast<double>(n) + 1) * (total + 2 * static_cast<double>(caps.size()) + 1);
    const double limit = std::ldexp(1.0, 61);
    unit_ = need > limit ? need / limit : 1.0;
    Flow sum = 0;
    for (const auto& [l, cap] : caps) {
      const Flow units = std::llround(cap / unit_);
      add_pair(out_[l->a], in_[l->b], cap, units, l->index);
      add_pair(out_[l->b], in_[l->a], cap, units, l->index);
      sum += 2 * units;
    }
    open_ = sum + 1;
    src_edge_.resize(n);
    dst_edge_.resize(n);
    for (int i = 0; i < n; ++i) {
      src_edge_[i] = add_pair(s_, out_[i], 0, 0, -1);
      dst_edge_[i] = add_pair(in_[i], t_, 0, 0, -1);
    }
  }

  double max_flow(const std::vector<int>& srcs, const std::vector<int>& dsts) {
    for (int s : srcs) g_[src_edge_[s]].capacity = open_;
    for (int d : dsts) g_[dst_edge_[d]].capacity = open_;
    Flow f = boost::push_relabel_max_flow(g_, s_, t_, boost::get(&EdgeProp::capacity, g_),
                                            boost::get(&EdgeProp::residual, g_), boost::get(&EdgeProp::reverse, g_),
                                            boost::get(boost::vertex_index, g_));
    for (int s : srcs) g_[src_edge_[s]].capacity = 0;
    for (int d : dsts) g_[dst_edge_[d]].capacity = 0;
    return static_cast<double>(f) * unit_;
  }

  Path widest_path(int src, int dst) {
    struct Dist {
      double width;
      int hops;
    };
    struct Positive {
      const G* g = nullptr;
      bool operator()(const Edge& e) const { return (*g)[e].link >= 0 && (*g)[e].width > 0; }
    };
    boost::filtered_graph<G, Positive> fg(g_, Positive{&g_});
    const std::size_t nv = boost::num_vertices(g_);
    std::vector<Dist> dist(nv);
    std::vector<Vertex> pred(nv);
    auto compare = [](const Dist& x, const Dist& y) {
      return x.width > y.width || (x.width == y.width && x.hops < y.hops);
    };
    auto combine = [](const Dist& d, double w) { return Dist{std::min(d.width, w), d.hops + 1}; };
    const Dist inf{-1, std::numeric_limits<int>::max()};
    const Dist zero{std::numeric_limits<double>::infinity(), 0};
    auto index = boost::get(boost::vertex_index, fg);
    boost::dijkstra_shortest_paths(
        fg, static_cast<Vertex>(out_[src]),
        boost::predecessor_map(boost::make_iterator_property_map(pred.begin(), index))
            .distance_map(boost::make_iterator_property_map(dist.begin(), index))
            .weight_map(boost::get(&EdgeProp::width, g_))
            .distance_compare(compare)
            .distance_combine(combine)
            .distance_inf(inf)
            .distance_zero(zero));
    Path p;
    Vertex target = in_[dst];
    if (dist[target].width <= 0 || pred[target] == target) return p;
    std::vector<Vertex> chain;
    for (Vertex v = target; v != static_cast<Vertex>(out_[src]); v = pred[v]) {
      chain.push_back(v);
      if (chain.size() > nv) return Path{};
    }
    chain.push_back(out_[src]);
    std::reverse(chain.begin(), chain.end());
    p.bottleneck_bytes_per_s = dist[target].width;
    for (std::size_t i = 0; i < chain.size(); ++i) {
      int node = vertex_node_[chain[i]];
      if (p.nodes.empty() || p.nodes.back() != node) p.nodes.push_back(node);
      if (i + 1 < chain.size()) {
        int best = -1;
        double best_cap = -1;
        for (auto [e, end] = boost::out_edges(chain[i], g_); e != end; ++e)
          if (boost::target(*e, g_) == chain[i + 1] && g_[*e].link >= 0 && g_[*e].width > best_cap) {
            best_cap = g_[*e].width;
            best = g_[*e].link;
          }
        p.links.push_back(best);
      }
    }
    return p;
  }

 private:
  Edge add_pair(int u, int v, double width, Flow cap, int link) {
    Edge e = boost::add_edge(u, v, g_).first;
    Edge r = boost::add_edge(v, u, g_).first;
    g_[e].width = width;
    g_[e].capacity = cap;
    g_[e].link = link;
    g_[e].reverse = r;
    g_[r].capacity = 0;
    g_[r].reverse = e;
    return e;
  }

  G g_;
  std::vector<int> in_, out_, vertex_node_;
  std::vector<Edge> src_edge_, dst_edge_;
  int s_ = 0, t_ = 0;
  double unit_ = 1;  // bytes/s per flow unit
  Flow open_ = 1;    // the capacity of an open S or T edge
};

PathFinder::PathFinder(const Chassis& chassis, Rate rate) : chassis_(chassis), rate_(rate) {
  const int n = static_cast<int>(chassis.nodes().size());
  // NVSwitch fabrics: components joined through NVSwitches.
  nvl_component_.assign(n, -1);
  boost::disjoint_sets_with_storage<> fabric(n);
  for (const auto& l : chassis.links()) {
    if (l.family() != hw::LinkFamily::kNvlink) continue;
    bool via_switch = chassis.node(l.a).kind == NodeKind::kNvSwitch || chassis.node(l.b).kind == NodeKind::kNvSwitch;
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
  if (!g) g = std::make_unique<Graph>(chassis_, f, rate_);
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
      if (l.family() == hw::LinkFamily::kNvlink && chassis_.node(l.other(g)).kind == NodeKind::kNvSwitch)
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
  auto chain = [&](int x) {
    std::vector<int> c;
    for (int v = x; v >= 0; v = chassis_.node(v).pcie_parent) c.push_back(v);
    return c;
  };
  std::vector<int> ca = chain(a), cb = chain(b);
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
  auto count = [&](const std::vector<int>& c, std::size_t upto) {
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
  if (chassis_.node(a).kind == NodeKind::kGpu && chassis_.node(b).kind == NodeKind::kGpu && nvlink_count(a, b) > 0)
    return Fabric::kNvlink;
  return Fabric::kHost;
}

Path PathFinder::widest_path(int src, int dst, Fabric fabric) { return graph(fabric).widest_path(src, dst); }

double PathFinder::max_flow(int src, int dst, Fabric fabric) { return graph(fabric).max_flow({src}, {dst}); }

double PathFinder::max_flow(const std::vector<int>& srcs, const std::vector<int>& dsts, Fabric fabric) {
  return graph(fabric).max_flow(srcs, dsts);
}

}  // namespace linkwise::topo
