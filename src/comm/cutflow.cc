// Cut max flows, reduced per box where the boxes meet only at one network switch (see cutflow.h).
#include "cutflow.h"

#include <cstdint>
#include <cstring>

#include "linkwise/topo/chassis.h"
#include "linkwise/topo/flow.h"
#include "linkwise/topo/paths.h"

namespace linkwise::comm::detail {

namespace {

constexpr double kOpen = topo::FlowNetwork::kOpen;  // an edge no cut can pass through

// Traffic between ranks may cross a NIC (the cut flows span boxes): topo/flow.h's rule, between
// boxes.
bool passes(topo::NodeKind k) { return topo::may_pass(k, true); }

}  // namespace

CutFlows::CutFlows(const topo::Chassis& chassis, const std::vector<int>& ranks)
    : chassis_(chassis), ranks_(ranks) {
  const int boxes = chassis.boxes();
  if (boxes < 2) return;
  const int n = static_cast<int>(chassis.nodes().size());
  int spine = -1;
  box_nodes_.assign(boxes, {});
  local_.assign(n, -1);
  for (const auto& node : chassis.nodes()) {
    if (node.box == -1 && spine < 0 && passes(node.kind)) {
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
    if (ba == bb && ba >= 0)
      box_links_[ba].push_back(link.index);
    else if (ba >= 0 && link.b == spine)
      box_links_[ba].push_back(link.index);
    else if (bb >= 0 && link.a == spine)
      box_links_[bb].push_back(link.index);
    else
      return;  // a link between boxes, not through the switch
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
  for (int i = 0; i < static_cast<int>(ranks.size()); ++i)
    box_ranks_[chassis.node(ranks[i]).box].push_back(i);
  // Boxes whose ranks sit at the same places share an id.
  std::map<std::vector<int>, int> rank_sets;
  box_rank_set_.resize(boxes);
  std::vector<int> places;
  for (int b = 0; b < boxes; ++b) {
    places.clear();
    for (int i : box_ranks_[b]) places.push_back(local_[ranks[i]]);
    box_rank_set_[b] = rank_sets.emplace(places, static_cast<int>(rank_sets.size())).first->second;
  }
  spine_ = spine;
}

CutFlows::~CutFlows() = default;

double CutFlows::flow(const std::vector<char>& in_a) { return solve(in_a, true); }
double CutFlows::reverse_flow(const std::vector<char>& in_a) { return solve(in_a, false); }

double CutFlows::whole_graph(const std::vector<char>& in_a, bool a_to_b) {
  if (!finder_) finder_ = std::make_unique<topo::PathFinder>(chassis_, topo::Rate::kEffective);
  std::vector<int> ga, gb;
  for (std::size_t i = 0; i < ranks_.size(); ++i) (in_a[i] ? ga : gb).push_back(ranks_[i]);
  return a_to_b ? finder_->max_flow(ga, gb, topo::Fabric::kAll)
                : finder_->max_flow(gb, ga, topo::Fabric::kAll);
}

double CutFlows::solve(const std::vector<char>& in_a, bool a_to_b) {
  if (spine_ < 0) return whole_graph(in_a, a_to_b);
  std::vector<Side> sides;
  double into = 0, out = 0;
  std::vector<int>&src = src_, &dst = dst_;
  // A box like the one before it (its class, the same ranks at the same places, on the same sides)
  // adds the same edge: the earlier box's capacity is added again without a cache look-up. Up to
  // 64 ranks a box, the sides are compared as a bit mask before any list is made.
  int last_class = -1, last_ranks = -1;
  std::uint64_t last_mask = 0;
  double last = 0;
  for (std::size_t b = 0; b < box_ranks_.size(); ++b) {
    const auto& in_box = box_ranks_[b];
    if (in_box.empty()) continue;
    const bool maskable = in_box.size() <= 64;
    std::uint64_t mask = 0;  // bit k: rank k of the box is a source
    if (maskable) {
      for (std::size_t k = 0; k < in_box.size(); ++k)
        mask |= static_cast<std::uint64_t>(static_cast<bool>(in_a[in_box[k]]) == a_to_b) << k;
      const std::uint64_t all =
          in_box.size() == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << in_box.size()) - 1;
      if (mask != 0 && mask != all) {
        last_class = -1;  // both sides: below
      } else if (box_class_[b] == last_class && box_rank_set_[b] == last_ranks &&
                 mask == last_mask) {
        (mask == 0 ? out : into) += last;
        continue;
      }
    }
    src.clear();
    dst.clear();
    for (int i : box_ranks_[b])
      (static_cast<bool>(in_a[i]) == a_to_b ? src : dst).push_back(local_[ranks_[i]]);
    if (!dst.empty() && !src.empty()) {
      sides.push_back({static_cast<int>(b), src, dst});
      last_class = -1;
      continue;
    }
    const bool same = !maskable && box_class_[b] == last_class && src == last_src_ &&
                      dst == last_dst_ && last_ranks == -1;
    if (!same) {
      last = dst.empty() ? box_to_switch(static_cast<int>(b), src, true)
                         : box_to_switch(static_cast<int>(b), dst, false);
      last_class = box_class_[b];
      last_ranks = maskable ? box_rank_set_[b] : -1;
      last_mask = mask;
      last_src_ = src;
      last_dst_ = dst;
    }
    (dst.empty() ? into : out) += last;
  }
  std::vector<std::tuple<int, std::vector<int>, std::vector<int>>> key;
  for (const auto& s : sides) key.emplace_back(box_class_[s.box], s.src, s.dst);
  auto k = std::make_tuple(std::move(key), into, out);
  auto it = flow_cache_.find(k);
  if (it == flow_cache_.end())
    it = flow_cache_.emplace(std::move(k), reduced_flow(sides, into, out)).first;
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

double CutFlows::reduced_flow(const std::vector<Side>& sides, double into_switch,
                              double out_of_switch) {
  // Vertices: 0 source, 1 sink, 2 the switch, then per box node a device (topo::FlowNetwork): one
  // vertex, or for a GPU or NVMe drive separate "in" and "out" vertices (nothing passes through
  // it).
  topo::FlowNetwork net;
  const int kS = net.add_vertex(), kT = net.add_vertex(), kSwitch = net.add_vertex();
  std::vector<topo::FlowNetwork::Device> io;  // per side, per local node
  std::vector<int> first(sides.size());
  for (std::size_t k = 0; k < sides.size(); ++k) {
    first[k] = static_cast<int>(io.size());
    for (int v : box_nodes_[sides[k].box])
      io.push_back(net.add_device(passes(chassis_.node(v).kind)));
  }
  for (std::size_t k = 0; k < sides.size(); ++k) {
    auto vin = [&](int node) { return node == spine_ ? kSwitch : io[first[k] + local_[node]].in; };
    auto vout = [&](int node) {
      return node == spine_ ? kSwitch : io[first[k] + local_[node]].out;
    };
    for (int l : box_links_[sides[k].box]) {
      const auto& link = chassis_.link(l);
      const double cap = link.effective_bytes_per_s();
      net.add_edge(vout(link.a), vin(link.b), cap);
      net.add_edge(vout(link.b), vin(link.a), cap);
    }
    for (int v : sides[k].src) net.add_edge(kS, io[first[k] + v].out, kOpen);
    for (int v : sides[k].dst) net.add_edge(io[first[k] + v].in, kT, kOpen);
  }
  if (into_switch > 0) net.add_edge(kS, kSwitch, into_switch);
  if (out_of_switch > 0) net.add_edge(kSwitch, kT, out_of_switch);
  return net.max_flow(kS, kT);
}

}  // namespace linkwise::comm::detail
