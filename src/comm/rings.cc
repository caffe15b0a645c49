// Ring channel search: rings over the ranks that maximise total bandwidth within link capacities.
//
// As NCCL's search (src/graph/search.cc) does, rings are added one at a time on the capacity the
// earlier ones left: each new ring is the Hamiltonian cycle of greatest bottleneck found on the
// residual capacities, it takes the rate its most loaded resource allows (a resource crossed by k
// hops of the ring counts k times), and the search stops when a ring would get under 0.1% of the
// first ring's rate or at max_channels.
//   One box, up to 9 ranks: exhaustive over cycles (depth-first, pruned on the best bottleneck).
//   One box, more ranks: greedy nearest neighbour (widest residual hop) from rank 0.
//   Several boxes: each box's order is found once; channel c enters each box at position c mod L
//   and leaves through the GPU before it, so successive channels use different GPUs' NICs.
#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "impl.h"
#include "linkwise/topo/chassis.h"

namespace linkwise::comm {

using detail::Route;

void Communicator::Impl::setup_groups() {
  std::map<int, std::vector<int>> by_box;
  for (int i = 0; i < static_cast<int>(ranks.size()); ++i) by_box[chassis->node(ranks[i]).box].push_back(i);
  groups.clear();
  for (auto& [box, members] : by_box) groups.push_back(members);
}

namespace {

// Bottleneck-maximising Hamiltonian cycle over `m` nodes with pairwise rates `p` (row-major).
std::vector<int> best_cycle(int m, const std::vector<double>& p) {
  std::vector<int> best, cur{0};
  std::vector<char> used(m, 0);
  used[0] = 1;
  double best_min = -1;
  if (m > 9) {  // greedy nearest neighbour
    for (int k = 1; k < m; ++k) {
      int from = cur.back(), pick = -1;
      for (int j = 0; j < m; ++j)
        if (!used[j] && (pick < 0 || p[from * m + j] > p[from * m + pick])) pick = j;
      used[pick] = 1;
      cur.push_back(pick);
    }
    return cur;
  }
  std::function<void(double)> dfs = [&](double cur_min) {
    if (static_cast<int>(cur.size()) == m) {
      double close = std::min(cur_min, p[cur.back() * m + cur[0]]);
      if (close > best_min) {
        best_min = close;
        best = cur;
      }
      return;
    }
    for (int j = 1; j < m; ++j) {
      if (used[j]) continue;
      double mn = std::min(cur_min, p[cur.back() * m + j]);
      if (mn <= best_min) continue;
      used[j] = 1;
      cur.push_back(j);
      dfs(mn);
      cur.pop_back();
      used[j] = 0;
    }
  };
  dfs(std::numeric_limits<double>::infinity());
  if (best.empty()) {  // no cycle with a positive bottleneck: keep rank order
    best.resize(m);
    std::iota(best.begin(), best.end(), 0);
  }
  return best;
}

// The rate a ring can take on `residual`: min over resources of residual / Σ coefficients on it.
double rate_on(const std::vector<Route>& hops, const std::vector<double>& residual, std::vector<double>& load,
               std::vector<int>& touched) {
  load.assign(residual.size(), 0.0);
  touched.clear();
  for (const auto& h : hops) {
    if (!h.found()) return 0;
    for (std::size_t i = 0; i < h.res.size(); ++i) {
      if (load[h.res[i]] == 0) touched.push_back(h.res[i]);
      load[h.res[i]] += h.coeff[i];
    }
  }
  double rate = std::numeric_limits<double>::infinity();
  for (int r : touched) rate = std::min(rate, residual[r] / load[r]);
  return std::max(rate, 0.0);
}

}  // namespace

// A necessary condition for one more ring: every rank can still send and receive over the links its
// hops use (NVLink for NVLink peers, everything else otherwise).
bool Communicator::Impl::room_for_another(const std::vector<double>& residual, double first) const {
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    int g = ranks[i], peer = ranks[(i + 1) % ranks.size()];
    bool nvlink = router->kind(g, peer) == detail::HopKind::kNvlink;
    double out = 0, in = 0;
    for (int l : chassis->incident(g)) {
      const auto& link = chassis->link(l);
      if ((link.family() == hw::LinkFamily::kNvlink) != nvlink) continue;
      out += residual[sim::ChassisResources::link_dir(l, link.a == g)];
      in += residual[sim::ChassisResources::link_dir(l, link.a != g)];
    }
    if (out <= 1e-3 * first || in <= 1e-3 * first) return false;
  }
  return true;
}

std::vector<std::vector<int>> Communicator::Impl::order_boxes(
    const std::function<std::vector<int>(const std::vector<int>&)>& order_in_box) {
  std::vector<std::vector<int>> box_orders;
  // Boxes are copies of one chassis: a box whose ranks sit at the same local GPU positions as an
  // earlier box's gets the same order (by position), without a new search.
  std::map<std::vector<int>, std::vector<int>> known;  // local positions -> order as indices into group
  std::map<int, int> first_gpu_of_box;
  const auto& all = chassis->gpus();
  for (int i = static_cast<int>(all.size()) - 1; i >= 0; --i) first_gpu_of_box[chassis->node(all[i]).box] = i;
  std::map<int, int> gpu_pos;
  for (int i = 0; i < static_cast<int>(all.size()); ++i) gpu_pos[all[i]] = i;
  for (auto& g : groups) {
    std::vector<int> sig;
    for (int k : g) sig.push_back(gpu_pos[ranks[k]] - first_gpu_of_box[chassis->node(ranks[k]).box]);
    auto it = known.find(sig);
    if (it == known.end()) {
      auto ordered = order_in_box(g);
      std::vector<int> idx;
      for (int k : ordered) idx.push_back(static_cast<int>(std::find(g.begin(), g.end(), k) - g.begin()));
      it = known.emplace(sig, idx).first;
    }
    std::vector<int> ordered;
    for (int i : it->second) ordered.push_back(g[i]);
    g = ordered;
    box_orders.push_back(g);
  }
  return box_orders;
}

void Communicator::Impl::search_rings() {
  std::vector<double> residual = res.capacity;
  const int n = static_cast<int>(ranks.size());
  auto order_in_box = [&](const std::vector<int>& members) {
    int m = static_cast<int>(members.size());
    std::vector<double> p(m * m, 0);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j)
        if (i != j) p[i * m + j] = router->pair_rate(ranks[members[i]], ranks[members[j]], residual);
    std::vector<int> cyc = best_cycle(m, p), out;
    for (int k : cyc) out.push_back(members[k]);
    return out;
  };
  std::vector<std::vector<int>> box_orders;
  if (groups.size() > 1) box_orders = order_boxes(order_in_box);
  double first = 0;
  std::vector<double> load_scratch;
  std::vector<int> touched_scratch;
  std::vector<std::string> names;
  for (int c = 0; c < opt.max_channels; ++c) {
    if (c > 0 && !room_for_another(residual, first)) break;
    std::vector<int> order;  // rank positions
    if (groups.size() == 1) {
      order = order_in_box(groups[0]);
      if (c == 0) groups[0] = order;
    } else {
      for (const auto& bo : box_orders) {
        int L = static_cast<int>(bo.size()), s = c % L;
        for (int k = 0; k < L; ++k) order.push_back(bo[(s + k) % L]);
      }
    }
    std::vector<Route> hops;
    hops.reserve(n);
    for (int i = 0; i < n; ++i) {
      int a = ranks[order[i]], b = ranks[order[(i + 1) % n]];
      hops.push_back(c == 0 ? router->route_full(a, b) : router->route(a, b, residual));
    }
    double rate = rate_on(hops, residual, load_scratch, touched_scratch);
    if (c == 0) first = rate;
    if (rate <= 1e-3 * first || rate <= 0) break;
    for (const auto& h : hops)
      for (std::size_t i = 0; i < h.res.size(); ++i) residual[h.res[i]] -= rate * h.coeff[i];
    Ring ring;
    ring.bytes_per_s = rate;
    ring.order.reserve(n);
    ring.hops.reserve(n);
    names.clear();
    for (int i = 0; i < n; ++i) {
      ring.order.push_back(ranks[order[i]]);
      names.push_back(chassis->display_name(ranks[order[i]]));
      ring.hops.push_back(hops[i].res);
      if (hops[i].kind != detail::HopKind::kNvlink && chassis->node(ranks[order[i]]).box ==
                                                          chassis->node(ranks[order[(i + 1) % n]]).box)
        intra_nvlink = false;
    }
    if (n > 16) {
      ring.str = fmt::format("{} {} ... {} ({} ranks)", names[0], names[1], names.back(), n);
    } else {
      ring.str.clear();
      for (const auto& s : names) ring.str += (ring.str.empty() ? "" : " ") + s;
    }
    ring_rate += rate;
    rings.push_back(std::move(ring));
    ring_routes.push_back(std::move(hops));
  }
}

}  // namespace linkwise::comm
