// Max flows across cuts of a communicator's ranks, for the cut bounds (bound.cc).
//
// F(A→B) is the max flow from the GPUs of A to those of B over every link at its effective rate,
// through devices topo/flow.h's pass-through rule lets traffic between boxes cross (as
// topo::PathFinder with Fabric::kAll, Rate::kEffective), on topo::FlowNetwork.
//
// Several boxes joined through one network switch ("net", the only node outside every box, and the
// only node a link from a box may reach outside it) need not be solved as one graph. A box whose
// ranks are all in A (or that holds none) meets the rest of the graph only at the switch, so it
// adds an edge source → switch of capacity E = its own max flow from its ranks to the switch; a box
// whose ranks are all in B adds switch → sink of capacity I = its max flow from the switch to its
// ranks; a box holding none adds nothing (flow entering it can only go back to the switch).
// Replacing a two-terminal part of a network by one edge of its max-flow capacity keeps the max
// flow, so
//
//   F(A→B) = max flow on { boxes holding ranks of both sides, as they are } + switch
//            + source → switch  Σ_{all-A boxes} E  + switch → sink  Σ_{all-B boxes} I
//
// and boxes that are copies of one another (the same nodes, links and ranks at the same places)
// share E and I, computed once. A cut then costs a max flow over one or two boxes instead of the
// whole machine, and cuts that look alike (rank k alone, for each box) are solved once. Where the
// chassis does not have that shape (one box; a network built otherwise), the whole graph is solved.
#pragma once

#include <map>
#include <memory>
#include <tuple>
#include <vector>

namespace linkwise::topo {
class Chassis;
class PathFinder;
}  // namespace linkwise::topo

namespace linkwise::comm::detail {

class CutFlows {
 public:
  /// `ranks`: GPU node indices.
  CutFlows(const topo::Chassis& chassis, const std::vector<int>& ranks);
  ~CutFlows();

  /// F(A→B), bytes/s: `in_a[i]` says whether rank position i is in A; the other ranks form B.
  double flow(const std::vector<char>& in_a);
  /// F(B→A) for the same cut.
  double reverse_flow(const std::vector<char>& in_a);
  /// Whether the per-box reduction above is in use.
  bool reduced() const { return spine_ >= 0; }

 private:
  double solve(const std::vector<char>& in_a, bool a_to_b);
  double whole_graph(const std::vector<char>& in_a, bool a_to_b);
  /// Max flow over `boxes` (each with its local sources and sinks) and the switch, plus the
  /// aggregate edges source → switch (`into_switch`) and switch → sink (`out_of_switch`).
  struct Side {
    int box = -1;
    std::vector<int> src, dst;  // local node positions
  };
  double reduced_flow(const std::vector<Side>& boxes, double into_switch, double out_of_switch);
  double box_to_switch(int box, const std::vector<int>& local_ranks, bool out);

  const topo::Chassis& chassis_;
  std::vector<int> ranks_;
  std::unique_ptr<topo::PathFinder> finder_;  // whole-graph fallback, built on first use
  int spine_ = -1;                            // the network switch node, or -1: no reduction
  std::vector<std::vector<int>> box_nodes_;   // per box: its node indices, ascending
  std::vector<int> local_;                    // per node: position within its box's list
  std::vector<int> box_class_;                // per box: boxes with equal class are copies
  std::vector<std::vector<int>> box_links_;   // per box: links with an end in it
  std::vector<std::vector<int>> box_ranks_;   // per box: rank positions in it, ascending
  std::vector<int> box_rank_set_;  // per box: equal for boxes with ranks at the same places
  std::vector<int> src_, dst_, last_src_, last_dst_;  // solve()'s scratch
  std::map<std::tuple<int, std::vector<int>, bool>, double>
      edge_cache_;  // (class, local ranks, out)
  std::map<
      std::tuple<std::vector<std::tuple<int, std::vector<int>, std::vector<int>>>, double, double>,
      double>
      flow_cache_;
};

}  // namespace linkwise::comm::detail
