// Cut lower bounds on a collective's time (definitions in include/linkwise/comm/predict.h).
//
// For a cut of the ranks into A and B, F(A→B) is the max flow from A's GPUs to B's over every link
// at its effective rate (cutflow.h solves it per box where the boxes meet at one network switch).
// Each cut gives a valid lower bound; the cuts tried are: each rank alone (the first 64), each box,
// each CPU's GPUs within a box, each NVLink island within a box (up to 16 of each), and the first
// half of the ranks against the second.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "cutflow.h"
#include "impl.h"
#include "linkwise/topo/chassis.h"

namespace linkwise::comm {

std::vector<Communicator::Impl::Cut> Communicator::Impl::cuts() const {
  const int n = static_cast<int>(ranks.size());
  std::vector<Cut> cuts;
  for (int i = 0; i < n && i < 64; ++i)
    cuts.push_back({{i}, chassis->display_name(ranks[i]) + " | others"});
  auto add_partition = [&](const std::map<std::pair<int, int>, std::vector<int>>& parts,
                           const char* what) {
    if (parts.size() < 2) return;
    int k = 0;
    for (const auto& [key, members] : parts) {
      if (++k > 16) break;
      if (members.size() < 2 || static_cast<int>(members.size()) == n) continue;
      cuts.push_back(
          {members, fmt::format("{} {} | others", what, chassis->display_name(ranks[members[0]]))});
    }
  };
  std::map<std::pair<int, int>, std::vector<int>> by_box, by_cpu, by_island;
  for (int i = 0; i < n; ++i) {
    const auto& node = chassis->node(ranks[i]);
    by_box[{node.box, 0}].push_back(i);
    by_cpu[{node.box, node.cpu}].push_back(i);
    // The island is named after its first rank; NVLink never joins GPUs of different boxes, so only
    // the earlier ranks of this box need asking.
    auto& earlier = by_box[{node.box, 0}];
    int island = i;
    for (std::size_t k = 0; k + 1 < earlier.size(); ++k)
      if (router->kind(ranks[earlier[k]], ranks[i]) == detail::HopKind::kNvlink) {
        island = earlier[k];
        break;
      }
    by_island[{node.box, island}].push_back(i);
  }
  add_partition(by_box, "box of");
  add_partition(by_cpu, "CPU of");
  add_partition(by_island, "NVLink island of");
  if (n >= 4) {
    Cut half;
    for (int i = 0; i < n / 2; ++i) half.a.push_back(i);
    half.name = "first half | second half";
    cuts.push_back(half);
  }
  return cuts;
}

Bound Communicator::Impl::compute_bound(Op op) const {
  std::lock_guard lock(mu);
  const int n = static_cast<int>(ranks.size());
  const std::vector<Cut> cuts = this->cuts();

  detail::CutFlows flows(*chassis, ranks);
  // Per cut: seconds per byte of S the operation needs across it; the bound is the worst cut.
  double worst = 0;
  Bound b;
  for (const auto& cut : cuts) {
    std::vector<char> in_a(n, 0);
    for (int i : cut.a) in_a[i] = 1;
    double fab = flows.flow(in_a), fba = flows.reverse_flow(in_a);
    double na = static_cast<double>(cut.a.size()) / n,
           nb = static_cast<double>(n - cut.a.size()) / n;
    auto per = [](double share, double f) { return f > 0 ? share / f : 0.0; };
    double t = 0, cut_bw = std::min(fab, fba);
    bool root_in_a = in_a[0];
    switch (op) {
      case Op::kAllGather:
        t = std::max(per(na, fab), per(nb, fba));
        break;
      case Op::kReduceScatter:
        t = std::max(per(nb, fab), per(na, fba));
        break;
      case Op::kAllReduce:
        // Every rank of B ends with the sum over all ranks of every element, which depends on A's
        // inputs: however A pre-reduces them, S bytes must cross A -> B, and likewise B -> A. (The
        // reduce-scatter and all-gather bounds cannot be added: they may be met at different cuts
        // and the two halves of an all-reduce overlap, as the tree's do.)
        t = std::max(per(1, fab), per(1, fba));
        break;
      case Op::kAllToAll:
        t = std::max(per(na * nb * n, fab), per(na * nb * n, fba));
        break;  // |A||B|·S/n each way
      case Op::kBroadcast:
        t = root_in_a ? per(1, fab) : per(1, fba);
        break;
      case Op::kReduce:
        t = root_in_a ? per(1, fba) : per(1, fab);
        break;
      case Op::kSendRecv:
        t = std::max(per(1, fab), per(1, fba));
        break;
    }
    if (t > worst) {
      worst = t;
      b.cut = cut.name;
      b.cut_bytes_per_s = cut_bw;
    }
  }
  if (op == Op::kAllReduce && !nvls) {
    // Without reduction in the network, every element's sum reaches all n ranks only after at least
    // 2(n-1) transfers of it (gather to one, spread to the others: the gossip minimum), so 2(n-1)·S
    // bytes leave the GPUs in all: t >= 2(n-1)·S / Σ_g (g's outgoing link capacity). With an
    // in-network reduction (NVLS) a rank's one send serves every peer and this does not hold.
    double out = 0;
    for (int g : ranks)
      for (int l : chassis->incident(g))
        out += res.capacity[sim::ChassisResources::link_dir(l, chassis->link(l).a == g)];
    const double agg = out > 0 ? 2.0 * (n - 1) / out : 0;
    if (agg > worst) {
      worst = agg;
      b.cut = "all GPUs' links (2(n-1)·S leave the GPUs)";
      b.cut_bytes_per_s = out;
    }
  }
  b.busbw_Bps = worst > 0 ? bus_factor(op, n) / worst : 0;
  if (b.cut_bytes_per_s == 0 && worst > 0) b.cut_bytes_per_s = 1 / worst;
  return b;
}

}  // namespace linkwise::comm
