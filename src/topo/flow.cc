#include "linkwise/topo/flow.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <cmath>
#include <cstdint>
#include <limits>

namespace linkwise::topo {

Transit transit(NodeKind kind) {
  switch (kind) {
    case NodeKind::kGpu:
    case NodeKind::kNvme:
      return Transit::kNever;
    case NodeKind::kNic:
      return Transit::kBetweenBoxes;
    default:
      return Transit::kAlways;
  }
}

LinkGraph::LinkGraph(const Chassis& chassis) : chassis_(chassis) {
  const int n = static_cast<int>(chassis.nodes().size());
  start_.assign(n + 1, 0);
  arcs_.reserve(2 * chassis.links().size());
  transit_.resize(n);
  box_.resize(n);
  for (int v = 0; v < n; ++v) {
    const auto& node = chassis.node(v);
    transit_[v] = topo::transit(node.kind);
    box_[v] = node.box;
    for (int l : chassis.incident(v)) {
      const auto& link = chassis.link(l);
      arcs_.push_back({link.other(v), l, link.a == v, family_bit(link.family())});
    }
    start_[v + 1] = static_cast<int>(arcs_.size());
  }
}

struct FlowNetwork::Impl {
  using Flow = std::int64_t;
  struct EdgeProp {
    double capacity = 0;  // bytes/s as the caller gave it
    Flow units = 0;       // the same in whole flow units, set by max_flow()
    Flow residual = 0;
    boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>::edge_descriptor
        reverse;
    int tag = -1;  // the caller's name (a link), or -1 for reverse edges and untagged ones
  };
  using G = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                                  EdgeProp>;
  using Edge = G::edge_descriptor;
  using Vertex = G::vertex_descriptor;
  G g;
  std::vector<Edge> edges;
};

FlowNetwork::FlowNetwork() : impl_(std::make_unique<Impl>()) {}
FlowNetwork::~FlowNetwork() = default;
FlowNetwork::FlowNetwork(FlowNetwork&&) noexcept = default;
FlowNetwork& FlowNetwork::operator=(FlowNetwork&&) noexcept = default;

int FlowNetwork::add_vertex() { return static_cast<int>(boost::add_vertex(impl_->g)); }

FlowNetwork::Device FlowNetwork::add_device(bool pass_through) {
  const int in = add_vertex();
  return {in, pass_through ? in : add_vertex()};
}

int FlowNetwork::vertices() const { return static_cast<int>(boost::num_vertices(impl_->g)); }

int FlowNetwork::add_edge(int u, int v, double capacity, int tag) {
  auto& g = impl_->g;
  auto e = boost::add_edge(u, v, g).first;
  auto r = boost::add_edge(v, u, g).first;
  g[e].capacity = capacity;
  g[e].tag = tag;
  g[e].reverse = r;
  g[r].capacity = 0;
  g[r].reverse = e;
  impl_->edges.push_back(e);
  return static_cast<int>(impl_->edges.size()) - 1;
}

void FlowNetwork::set_capacity(int edge, double capacity) {
  impl_->g[impl_->edges[edge]].capacity = capacity;
}

// Push-relabel is exact only in integer arithmetic: in doubles, flow pushed through an open edge of
// 1e30 vanished in rounding, flow was not conserved and Boost's is_flow() check failed in Debug
// builds. So the solver runs on whole numbers: bytes/s, or a coarser whole unit where the sums
// would not fit in 62 bits, and an open edge carries one unit more than all the others together,
// which no cut can exceed.
double FlowNetwork::max_flow(int s, int t) {
  auto& g = impl_->g;
  using P = Impl::EdgeProp;
  double total = 0;
  std::size_t opens = 0;
  for (const auto& e : impl_->edges) {
    if (g[e].capacity >= kOpen)
      ++opens;
    else
      total += g[e].capacity;
  }
  const double need =
      (static_cast<double>(opens) + 1) * (total + static_cast<double>(impl_->edges.size()) + 1);
  const double limit = std::ldexp(1.0, 61);
  const double unit = need > limit ? need / limit : 1.0;
  Impl::Flow sum = 0;
  for (const auto& e : impl_->edges)
    if (g[e].capacity < kOpen) sum += g[e].units = std::llround(g[e].capacity / unit);
  for (const auto& e : impl_->edges)
    if (g[e].capacity >= kOpen) g[e].units = sum + 1;
  const Impl::Flow f =
      boost::push_relabel_max_flow(g, s, t, boost::get(&P::units, g), boost::get(&P::residual, g),
                                   boost::get(&P::reverse, g), boost::get(boost::vertex_index, g));
  return static_cast<double>(f) * unit;
}

FlowNetwork::Widest FlowNetwork::widest_path(int s, int t) const {
  using G = Impl::G;
  using Edge = Impl::Edge;
  using Vertex = Impl::Vertex;
  const G& g = impl_->g;
  struct Dist {
    double width;
    int hops;
  };
  struct Positive {
    const G* g = nullptr;
    bool operator()(const Edge& e) const { return (*g)[e].tag >= 0 && (*g)[e].capacity > 0; }
  };
  boost::filtered_graph<G, Positive> fg(g, Positive{&g});
  const std::size_t nv = boost::num_vertices(g);
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
      fg, static_cast<Vertex>(s),
      boost::predecessor_map(boost::make_iterator_property_map(pred.begin(), index))
          .distance_map(boost::make_iterator_property_map(dist.begin(), index))
          .weight_map(boost::get(&Impl::EdgeProp::capacity, g))
          .distance_compare(compare)
          .distance_combine(combine)
          .distance_inf(inf)
          .distance_zero(zero));
  Widest w;
  const Vertex target = t;
  if (dist[target].width <= 0 || pred[target] == target) return w;
  for (Vertex v = target; v != static_cast<Vertex>(s); v = pred[v]) {
    w.vertices.push_back(static_cast<int>(v));
    if (w.vertices.size() > nv) return Widest{};
  }
  w.vertices.push_back(s);
  std::reverse(w.vertices.begin(), w.vertices.end());
  w.width = dist[target].width;
  for (std::size_t i = 0; i + 1 < w.vertices.size(); ++i) {
    int best = -1;
    double best_cap = -1;
    for (auto [e, end] = boost::out_edges(w.vertices[i], g); e != end; ++e)
      if (static_cast<int>(boost::target(*e, g)) == w.vertices[i + 1] && g[*e].tag >= 0 &&
          g[*e].capacity > best_cap) {
        best_cap = g[*e].capacity;
        best = g[*e].tag;
      }
    w.tags.push_back(best);
  }
  return w;
}

}  // namespace linkwise::topo
