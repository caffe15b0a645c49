// Cut max flows, reduced per box where the boxes meet only at one network switch (see cutflow.h).
#include "cutflow.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "linkwise/topo/chassis.h"
#include "linkwise/topo/paths.h"

namespace linkwise::comm::detail {

namespace {

constexpr double kOpen = 1e30;  // an edge no cut can pass through: as topo::PathFinder's open S/T edges

bool is_endpoint(topo::NodeKind k) { return k == topo::NodeKind::kGpu || k == topo::NodeKind::kNvme; }

// A small directed flow network for boost::push_relabel_max_flow. As in topo::PathFinder, the solver
// runs on whole numbers (bytes/s, or a coarser whole unit where the sums would not fit in 62 bits) and an
// open (kOpen) edge carries one unit more than all the others together: in doubles, flow pushed through
// an edge of 1e30 was lost to rounding and Boost's conservation check failed in Debug builds.
class FlowNet {
 public:
  using Flow = std::int64_t;
  struct EdgeProp {
    Flow capacity = 0;
    Flow residual = 0;
    boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>::edge_descriptor reverse;
  };
  using G = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property, EdgeProp>;

  explicit FlowNet(int vertices) : vertices_(vertices) {}
  void add(int u, int v, double cap) { edges_.push_back({u, v, cap}); }
  double run(int s, int t) {
    double total = 0;
    std::size_t opens = 0;
    for (const auto& e : edges_) {
      if (e.cap >= kOpen) ++opens;
      else total += e.cap;
    }
    const double need = (static_cast<double>(opens) + 1) * (total + static_cast<double>(edges_.size()) + 1);
    const double limit = std::ldexp(1.0, 61);
    const double unit = need > limit ? need / limit : 1.0;
    G g(vertices_);
    Flow sum = 0;
    std::vector<Flow> units(edges_.size());
    for (std::size_t i = 0; i < edges_.size(); ++i)
      if (edges_[i].cap < kOpen) sum += units[i] = std::llround(edges_[i].cap / unit);
    for (std::size_t i = 0; i < edges_.size(); ++i) {
      auto e = boost::add_edge(edges_[i].u, edges_[i].v, g).first;
      auto r = boost::add_edge(edges_[i].v, edges_[i].u, g).first;
      g[e].capacity = edges_[i].cap < kOpen ? units[i] : sum + 1;
      g[r].capacity = 0;
      g[e].reverse = r;
      g[r].reverse = e;
    }
    Flow f = boost::push_relabel_max_flow(g, s, t, boost::get(&EdgeProp::capacity, g),
                                          boost::get(&EdgeProp::residual, g), boost::get(&EdgeProp::reverse, g),
                                          boost::get(boost::vertex_index, g));
    return static_cast<double>(f) * unit;
  }

 private:
  struct Arc {
    int u, v;
    double cap;
  };
  int vertices_;
  std::vector<Arc> edges_;
};

}  // namespace

CutFlows::CutFlows(const topo::Chassis& chassis, const std::vector<int>& ranks) : chassis_(chassis), ranks_(ranks) {
  const int boxes = chassis.boxes();
  if (boxes < 2) return;
  const int n = static_cast<int>(chassis.nodes().size());
  int spine = -1;
  box_nodes_.assign(boxes, {});
  local_.assign(n, -1);
  for (const auto& node : chassis.nodes()) {
    if (node.box == -1 && spine < 0 && !is_endpoint(node.kind)) {
      spine = node.index;
    } else if (node.box < 0 || node.box >= boxes) {
      return;  // a second node outside the boxes: not the shape the reduction needs
    } else {
      local_[node.index] = static_cast<int>(box_nodes_[node.box].size());
      box_nodes_[node.box].push_back(node.index);
    }
  }
  if (spine < 0) return;
  box_links_.assign(boxes, {});
  for (const auto& link : chassis.links()) {
    const int ba = chassis.node(link.a).box, bb = chassis.node(link.b).box;
    if (ba == bb && ba >= 0) box_links_[ba].push_back(link.index);
    else if (ba >= 0 && link.b == spine) box_links_[ba].push_back(link.index);
    else if (bb >= 0 && link.a == spine) box_links_[bb].push_back(link.index);
    else return;  // a link between boxes, not through the switch
  }
  // Class of each box: its nodes' parts and its links, by local position (the switch as -1).
  std::map<std::vector<std::uintptr_t>, int> classes;
  box_class_.resize(boxes);
  std::vector<std::uintptr_t> sig;
  for (int b = 0; b < boxes; ++b) {
    sig.clear();
    for (int v : box_nodes_[b]) {
      sig.push_back(static_cast<std::uintptr_t>(chassis.node(v).kind));
      sig.push_back(reinterpret_cast<std::uintptr_t>(chassis.node(v).part));
    }
    for (int l : box_links_[b]) {
      const auto& link = chassis.link(l);
      double cap = link.effective_bytes_per_s();
      std::uintptr_t bits = 0;
      static_assert(sizeof(bits) >= sizeof(cap));
      std::memcpy(&bits, &cap, sizeof(cap));
      sig.push_back(static_cast<std::uintptr_t>(link.a == spine ? -1 : local_[link.a]));
      sig.push_back(static_cast<std::uintptr_t>(link.b == spine ? -1 : local_[link.b]));
      sig.push_back(bits);
    }
    box_class_[b] = classes.emplace(sig, static_cast<int>(classes.size())).first->second;
  }
  box_ranks_.assign(boxes, {});
  for (int i = 0; i < static_cast<int>(ranks.size()); ++i) box_ranks_[chassis.node(ranks[i]).box].push_back(i);
  spine_ = spine;
}

CutFlows::~CutFlows() = default;

double CutFlows::flow(const std::vector<char>& in_a) { return solve(in_a, true); }
double CutFlows::reverse_flow(const std::vector<char>& in_a) { return solve(in_a, false); }

double CutFlows::whole_graph(const std::vector<char>& in_a, bool a_to_b) {
  if (!finder_) finder_ = std::make_unique<topo::PathFinder>(chassis_, topo::Rate::kEffective);
  std::vector<int> ga, gb;
  for (std::size_t i = 0; i < ranks_.size(); ++i) (in_a[i] ? ga : gb).push_back(ranks_[i]);
  return a_to_b ? finder_->max_flow(ga, gb, topo::Fabric::kAll) : finder_->max_flow(gb, ga, topo::Fabric::kAll);
}

double CutFlows::solve(const std::vector<char>& in_a, bool a_to_b) {
  if (spine_ < 0) return whole_graph(in_a, a_to_b);
  std::vector<Side> sides;
  double into = 0, out = 0;
  std::vector<int> src, dst;
  for (std::size_t b = 0; b < box_ranks_.size(); ++b) {
    if (box_ranks_[b].empty()) continue;
    src.clear();
    dst.clear();
    for (int i : box_ranks_[b]) (static_cast<bool>(in_a[i]) == a_to_b ? src : dst).push_back(local_[ranks_[i]]);
    if (dst.empty()) into += box_to_switch(static_cast<int>(b), src, true);
    else if (src.empty()) out += box_to_switch(static_cast<int>(b), dst, false);
    else sides.push_back({static_cast<int>(b), src, dst});
  }
  std::vector<std::tuple<int, std::vector<int>, std::vector<int>>> key;
  for (const auto& s : sides) key.emplace_back(box_class_[s.box], s.src, s.dst);
  auto k = std::make_tuple(std::move(key), into, out);
  auto it = flow_cache_.find(k);
  if (it == flow_cache_.end()) it = flow_cache_.emplace(std::move(k), reduced_flow(sides, into, out)).first;
  return it->second;
}

double CutFlows::box_to_switch(int box, const std::vector<int>& local_ranks, bool out) {
  auto k = std::make_tuple(box_class_[box], local_ranks, out);
  auto it = edge_cache_.find(k);
  if (it != edge_cache_.end()) return it->second;
  Side s{box, {}, {}};
  (out ? s.src : s.dst) = local_ranks;
  double f = out ? reduced_flow({s}, 0, kOpen) : reduced_flow({s}, kOpen, 0);
  edge_cache_.emplace(std::move(k), f);
  return f;
}

double CutFlows::reduced_flow(const std::vector<Side>& sides, double into_switch, double out_of_switch) {
  // Vertices: 0 source, 1 sink, 2 the switch, then per box node an "in" vertex and, for a GPU or
  // NVMe drive, a separate "out" vertex (no edge between them: nothing passes through it).
  constexpr int kS = 0, kT = 1, kSwitch = 2;
  std::vector<std::pair<int, int>> io;  // per side, per local node: (in, out)
  std::vector<int> first(sides.size());
  int next = 3;
  for (std::size_t k = 0; k < sides.size(); ++k) {
    first[k] = static_cast<int>(io.size());
    for (int v : box_nodes_[sides[k].box]) {
      int in = next++;
      io.emplace_back(in, is_endpoint(chassis_.node(v).kind) ? next++ : in);
    }
  }
  FlowNet net(next);
  for (std::size_t k = 0; k < sides.size(); ++k) {
    auto vin = [&](int node) { return node == spine_ ? kSwitch : io[first[k] + local_[node]].first; };
    auto vout = [&](int node) { return node == spine_ ? kSwitch : io[first[k] + local_[node]].second; };
    for (int l : box_links_[sides[k].box]) {
      const auto& link = chassis_.link(l);
      const double cap = link.effective_bytes_per_s();
      net.add(vout(link.a), vin(link.b), cap);
      net.add(vout(link.b), vin(link.a), cap);
    }
    for (int v : sides[k].src) net.add(kS, io[first[k] + v].second, kOpen);
    for (int v : sides[k].dst) net.add(io[first[k] + v].first, kT, kOpen);
  }
  if (into_switch > 0) net.add(kS, kSwitch, into_switch);
  if (out_of_switch > 0) net.add(kSwitch, kT, out_of_switch);
  return net.run(kS, kT);
}

}  // namespace linkwise::comm::detail
