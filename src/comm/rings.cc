// Ring channel search: rings over the ranks that maximise total bandwidth within link capacities.
//
// As NCCL's search (src/graph/search.cc) does, rings are added one at a time on the capacity the
// earlier ones left, and each takes the rate its most loaded resource allows (a resource crossed by
// k hops of the ring counts k times).
//   One box: each new ring is the Hamiltonian cycle of greatest bottleneck on the residual
//     capacities (exhaustive up to 9 ranks, greedy nearest neighbour beyond); the search stops when
//     a ring would get under 0.1 % of the first ring's rate or at max_channels.
//     On a mesh of direct NVLinks (bridges on PCIe cards, GPU-to-GPU links without a switch) a
//     ring that takes all it can exhausts its hops, and what is left may hold no cycle: four GPUs
//     bridged pairwise get one ring and its reverse, and the third pair of links at each GPU stays
//     idle (the complete directed graph on four vertices has no decomposition into Hamiltonian
//     cycles). NCCL's search does not take all it can: every channel has one speed (speedArray in
//     search.cc, highest first, lower while none fits), each consumes that speed on every link it
//     crosses, and a depth-first search packs as many channels as fit, keeping the set of most
//     nChannels x speed (ncclTopoCompareGraphs). So where the rings above leave a direct NVLink
//     between two ranks idle and the first ring is all NVLink, rings of NVLink hops of one speed
//     (the first ring's rate / k, k = 2..6; NCCL's channels of one graph share one path type) are
//     packed too, each the cycle whose hops have the greatest summed share of their rate still
//     free (links least used first) and every hop still that speed; the set of greatest total rate
//     is kept (the first on ties). On four GPUs with NV6 between every two this gives NCCL's six
//     ring orders (every directed Hamiltonian cycle), each directed pair carried by two of them:
//     three times a pair's rate in all.
//   Several boxes: NCCL's inter-node ring is NET n -> GPU a -> ... -> GPU x -> NET n (search.cc,
//     ncclTopoSearchParams' pattern comment; ncclTopoSearchRecNet): a channel is built per NIC,
//     starting from the GPUs nearest that NIC ("try the most local GPUs": widest path, then fewest
//     hops) and coming back to it, and the NICs are listed per GPU so that channels spread over all
//     of them (ncclTopoSelectNets). Here channel c uses NIC c mod N of every box (N NICs a box, in
//     node order), for at most two rounds (one or two channels per NIC). In each box it enters at
//     the GPU nearest that NIC and leaves from another GPU nearest it (among equals: the one least
//     used so far for entering, resp. leaving, as NCCL avoids a GPU carrying one channel in and
//     another out); between them, the path of greatest bottleneck through the box's other ranks.
//     The hop from one box's last GPU to the next box's first is routed like any other (widest
//     path on the residual), so it leaves through the NIC next to the leaving GPU. A channel that
//     would get under 0.1 % of the first is left out and the search goes on with the next NIC.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <unordered_map>

#include "impl.h"
#include "linkwise/topo/chassis.h"

namespace linkwise::comm {

using detail::Route;

void Communicator::Impl::setup_groups() {
  std::map<int, std::vector<int>> by_box;
  for (int i = 0; i < static_cast<int>(ranks.size()); ++i)
    by_box[chassis->node(ranks[i]).box].push_back(i);
  groups.clear();
  for (auto& [box, members] : by_box) groups.push_back(members);
}

namespace {

// What a Hamiltonian order over `m` nodes is chosen for (pairwise figures row-major: the hop i -> j
// at i·m + j). Without `w`: the greatest bottleneck, the least rate `p` of its hops. With `w`: the
// greatest sum of `w` over its hops (per pair: the share of its rate still free, so that links
// least used so far are taken first). Either way only hops whose rate is at least `floor` are
// taken, and the first order found among equals is kept.
struct OrderGoal {
  const std::vector<double>& p;
  const std::vector<double>* w = nullptr;
  double floor = -std::numeric_limits<double>::infinity();
};

// The order over `m` nodes from `start` that best meets `goal`: a cycle when `end` < 0, else a path
// that ends at `end` (its closing hop not counted). Exhaustive up to 9 nodes (depth first, in node
// order, cutting branches that cannot beat the best found), greedy beyond (each next hop the one of
// greatest rate, or of greatest weight with `w`). Empty when no order has every hop at `floor` or
// more; for the bottleneck (no `w`, no floor) there always is one, and where no order has a
// positive bottleneck the nodes are kept in their order.
std::vector<int> best_order(int m, const OrderGoal& goal, int start, int end) {
  const auto& p = goal.p;
  const bool sum = goal.w != nullptr;
  const auto value = [&](int hop) { return sum ? (*goal.w)[hop] : p[hop]; };
  const auto extend = [&](double acc, int hop) {
    return sum ? acc + (*goal.w)[hop] : std::min(acc, p[hop]);
  };
  std::vector<int> best, cur{start};
  std::vector<char> used(m, 0);
  used[start] = 1;
  if (m == 1) return cur;
  const bool to_end = end >= 0 && end != start;
  if (to_end) used[end] = 1;  // placed last
  const int free_count = m - (to_end ? 2 : 1);
  // The hop that closes the order from `last`, or -1 (a path ending where it started: none).
  const auto closing = [&](int last) {
    return end < 0 ? last * m + start : to_end ? last * m + end : -1;
  };
  if (m > 9) {  // greedy
    for (int k = 0; k < free_count; ++k) {
      const int from = cur.back();
      int pick = -1;
      for (int j = 0; j < m; ++j)
        if (!used[j] && p[from * m + j] >= goal.floor &&
            (pick < 0 || value(from * m + j) > value(from * m + pick)))
          pick = j;
      if (pick < 0) return {};
      used[pick] = 1;
      cur.push_back(pick);
    }
    if (const int c = closing(cur.back()); c >= 0 && p[c] < goal.floor) return {};
    if (to_end) cur.push_back(end);
    return cur;
  }
  double wmax = 0;  // the most one hop can add to a sum
  if (sum)
    for (double x : *goal.w) wmax = std::max(wmax, x);
  double best_value = -1;
  // Hops still to take once `placed` free nodes are placed: the free ones left and the closing hop.
  const auto hopeless = [&](double acc, int placed) {
    return sum ? acc + (free_count - placed + 1) * wmax <= best_value : acc <= best_value;
  };
  std::function<void(double, int)> dfs = [&](double acc, int placed) {
    if (placed == free_count) {
      const int c = closing(cur.back());
      if (c >= 0 && p[c] < goal.floor) return;
      const double v = c >= 0 ? extend(acc, c) : acc;
      if (v > best_value) {
        best_value = v;
        best = cur;
        if (to_end) best.push_back(end);
      }
      return;
    }
    for (int j = 0; j < m; ++j) {
      const int hop = cur.back() * m + j;
      if (used[j] || p[hop] < goal.floor) continue;
      const double next = extend(acc, hop);
      if (hopeless(next, placed + 1)) continue;
      used[j] = 1;
      cur.push_back(j);
      dfs(next, placed + 1);
      cur.pop_back();
      used[j] = 0;
    }
  };
  dfs(sum ? 0.0 : std::numeric_limits<double>::infinity(), 0);
  if (best.empty() && !sum && goal.floor == -std::numeric_limits<double>::infinity()) {
    best.push_back(start);  // no order with a positive bottleneck: keep node order
    for (int j = 0; j < m; ++j)
      if (j != start && j != end) best.push_back(j);
    if (to_end) best.push_back(end);
  }
  return best;
}

// The widest order (greatest bottleneck) over `m` nodes with pairwise rates `p`; see best_order().
std::vector<int> widest_order(int m, const std::vector<double>& p, int start, int end) {
  return best_order(m, OrderGoal{.p = p}, start, end);
}

// The rate a ring can take on `residual`: min over resources of residual / Σ coefficients on it.
// `load` is all zeros, as long as `residual`, and is left so: only the entries the hops touch are
// written and cleared (a ring touches a few thousand of a large machine's resources).
double rate_on(const std::vector<Route>& hops, const std::vector<double>& residual,
               std::vector<double>& load, std::vector<int>& touched) {
  load.resize(residual.size(), 0.0);
  touched.clear();
  bool found = true;
  for (const auto& h : hops) {
    if (!h.found()) {
      found = false;
      break;
    }
    for (std::size_t i = 0; i < h.res.size(); ++i) {
      if (load[h.res[i]] == 0) touched.push_back(h.res[i]);
      load[h.res[i]] += h.coeff[i];
    }
  }
  double rate = std::numeric_limits<double>::infinity();
  for (int r : touched) {
    rate = std::min(rate, residual[r] / load[r]);
    load[r] = 0;
  }
  return found ? std::max(rate, 0.0) : 0;
}

// Of `members`' indices (not `skip`), the one nearest NIC `near` ((bytes/s, hops) per index), among
// equals the one with the fewest `uses`, then the fewest `other_uses`, then the first.
int pick_near(const std::vector<std::pair<double, int>>& near, const std::vector<int>& uses,
              const std::vector<int>& other_uses, int skip) {
  int pick = -1;
  for (int k = 0; k < static_cast<int>(near.size()); ++k) {
    if (k == skip) continue;
    if (pick < 0) {
      pick = k;
      continue;
    }
    auto key = [&](int i) {
      return std::make_tuple(-near[i].first, near[i].second, uses[i], other_uses[i]);
    };
    if (key(k) < key(pick)) pick = k;
  }
  return pick;
}

}  // namespace

// A necessary condition for one more ring: every rank can still send and receive over the link
// families the first ring's hops at that rank use (NVLink, or everything else), in either
// direction, since a later ring may run the other way round (a ring over PCIe between NVLink pairs
// reversed uses the PCIe directions the first one left free).
bool Communicator::Impl::room_for_another(const std::vector<double>& residual, double first) const {
  if (rings.empty()) return true;
  const auto& order = rings.front().order;
  const std::size_t n = order.size();
  for (std::size_t i = 0; i < n; ++i) {
    int g = order[i], next = order[(i + 1) % n], prev = order[(i + n - 1) % n];
    bool via_nvlink[2] = {router->kind(g, next) == detail::HopKind::kNvlink,
                          router->kind(prev, g) == detail::HopKind::kNvlink};
    double out = 0, in = 0;
    for (int l : chassis->incident(g)) {
      const auto& link = chassis->link(l);
      bool nvlink = link.family() == hw::LinkFamily::kNvlink;
      if (nvlink != via_nvlink[0] && nvlink != via_nvlink[1]) continue;
      out += residual[sim::ChassisResources::link_dir(l, link.a == g)];
      in += residual[sim::ChassisResources::link_dir(l, link.a != g)];
    }
    if (out <= 1e-3 * first || in <= 1e-3 * first) return false;
  }
  return true;
}

std::vector<double> Communicator::Impl::member_rates(const std::vector<int>& members,
                                                     const std::vector<double>& residual) const {
  const int m = static_cast<int>(members.size());
  std::vector<double> p(m * m, 0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j)
      if (i != j) p[i * m + j] = router->pair_rate(ranks[members[i]], ranks[members[j]], residual);
  return p;
}

bool Communicator::Impl::mirror_ring(const std::vector<int>& order,
                                     const std::vector<double>& residual,
                                     std::vector<Route>& hops) {
  // The order must be G >= 2 runs of m ranks, run g all in box box[g] (ascending), each at the
  // same places in its box as run 0.
  const int n = static_cast<int>(order.size());
  if (!mirror_rings || !router->mirrored()) return false;
  const auto box_of = [&](int i) { return chassis->node(ranks[order[i]]).box; };
  int m = 1;
  while (m < n && box_of(m) == box_of(0)) ++m;
  if (n % m != 0 || n / m < 2) return false;
  const int runs = n / m;
  std::vector<int> box(runs);
  for (int g = 0; g < runs; ++g) {
    box[g] = box_of(g * m);
    if (g > 0 && box[g] <= box[g - 1]) return false;
    for (int k = 0; k < m; ++k)
      if (box_of(g * m + k) != box[g] ||
          router->mirror_node(ranks[order[g * m + k]], box[0]) != ranks[order[k]])
        return false;
  }
  // Run 0's hops, the last into run 1, routed; every other hop is the mirror of one of them: every
  // box has carried the same hops so far, so the residual capacities of any two boxes are alike.
  const auto route_of = [&](int i) {
    return router->route(ranks[order[i]], ranks[order[(i + 1) % n]], residual);
  };
  for (int k = 0; k < m; ++k) hops[k] = route_of(k);
  for (int g = 1; g < runs; ++g)
    for (int k = 0; k < m; ++k) {
      const bool last = k == m - 1;
      if (g == runs - 1 && last) continue;
      router->mirror(hops[k], box[0], last ? box[1] : box[0], box[g], last ? box[g + 1] : box[g],
                     hops[g * m + k]);
    }
  // The hop back from the last box to the first goes the other way in node order, where the
  // search's ties could settle otherwise: it is routed, and must be the mirror.
  hops[n - 1] = route_of(n - 1);
  Route mirrored;
  router->mirror(hops[m - 1], box[0], box[1], box[runs - 1], box[0], mirrored);
  if (mirrored.res != hops[n - 1].res || mirrored.coeff != hops[n - 1].coeff ||
      mirrored.bytes_per_s != hops[n - 1].bytes_per_s || mirrored.kind != hops[n - 1].kind) {
    mirror_rings = false;  // from here on every hop is routed
    return false;
  }
  for (int i = m; i < n - 1; ++i) router->gave(hops[i]);  // as if routed
  return true;
}

double Communicator::Impl::add_ring(const std::vector<int>& order, std::vector<double>& residual,
                                    double& first, double cap, double floor) {
  const int n = static_cast<int>(order.size());
  std::vector<Route> hops(n);
  // The first ring is routed on full capacities (route_full(), cached for the schedules), or, where
  // it can be mirrored, routed on them the same way and mirrored.
  if (!mirror_ring(order, rings.empty() ? res.capacity : residual, hops))
    for (int i = 0; i < n; ++i) {
      int a = ranks[order[i]], b = ranks[order[(i + 1) % n]];
      hops[i] = rings.empty() ? router->route_full(a, b) : router->route(a, b, residual);
    }
  double rate = rate_on(hops, residual, ring_load, ring_touched);
  if (rings.empty()) first = rate;
  rate = std::min(rate, cap);
  if (rate <= 1e-3 * first || rate <= 0 || rate < floor) return 0;
  for (const auto& h : hops)
    for (std::size_t i = 0; i < h.res.size(); ++i) residual[h.res[i]] -= rate * h.coeff[i];
  Ring ring;
  ring.bytes_per_s = rate;
  ring.order.reserve(n);
  ring.hop_end.reserve(n);
  std::size_t entries = 0;
  for (const auto& h : hops) entries += h.res.size();
  ring.hop_res.reserve(entries);
  std::vector<std::string> names;  // all of them up to 16 ranks, else the first two and the last
  for (int i = 0; i < n; ++i) {
    ring.order.push_back(ranks[order[i]]);
    if (n <= 16 || i < 2 || i == n - 1) names.push_back(chassis->display_name(ranks[order[i]]));
    ring.hop_res.insert(ring.hop_res.end(), hops[i].res.begin(), hops[i].res.end());
    ring.hop_end.push_back(ring.hop_res.size());
    const bool intra =
        chassis->node(ranks[order[i]]).box == chassis->node(ranks[order[(i + 1) % n]]).box;
    if (hops[i].kind != detail::HopKind::kNvlink && intra) intra_nvlink = false;
    if (intra && rings.empty()) ++intra_hops[static_cast<int>(hops[i].kind)];
  }
  if (n > 16) {
    ring.str = fmt::format("{} {} ... {} ({} ranks)", names[0], names[1], names.back(), n);
  } else {
    for (const auto& s : names) ring.str += (ring.str.empty() ? "" : " ") + s;
  }
  ring_rate += rate;
  rings.push_back(std::move(ring));
  ring_routes.push_back(std::move(hops));
  return rate;
}

void Communicator::Impl::search_rings() {
  std::vector<double> residual = res.capacity;
  if (groups.size() > 1) {
    search_rings_across_boxes(residual);
    return;
  }
  double first = 0;
  for (int c = 0; c < opt.max_channels; ++c) {
    if (c > 0 && !room_for_another(residual, first)) break;
    // The first order is chosen on the full capacities (residual is still their copy): passing
    // them as such lets the router serve its cached routes.
    std::vector<int> cyc =
        widest_order(static_cast<int>(groups[0].size()),
                     member_rates(groups[0], c == 0 ? res.capacity : residual), 0, -1);
    std::vector<int> order;
    for (int k : cyc) order.push_back(groups[0][k]);
    if (c == 0) groups[0] = order;
    if (add_ring(order, residual, first) <= 0) break;
  }
  if (rings.empty() || !idle_peer_link(residual)) return;
  for (const auto& hop : ring_routes.front())
    if (hop.kind != detail::HopKind::kNvlink) return;  // the packing below is for NVLink rings
  // A mesh link left idle: rings of one speed, as NCCL packs channels (header comment).
  std::vector<Ring> kept_rings = rings;
  std::vector<std::vector<Route>> kept_routes = ring_routes;
  double kept_rate = ring_rate;
  bool kept_nvlink = intra_nvlink;
  for (int k = 2; k <= 6; ++k) {
    pack_rings(first / k);
    if (ring_rate > kept_rate * (1 + 1e-6)) {
      kept_rings = rings;
      kept_routes = ring_routes;
      kept_rate = ring_rate;
      kept_nvlink = intra_nvlink;
    }
  }
  rings = std::move(kept_rings);
  ring_routes = std::move(kept_routes);
  ring_rate = kept_rate;
  intra_nvlink = kept_nvlink;
}

void Communicator::Impl::pack_rings(double quantum) {
  rings.clear();
  ring_routes.clear();
  ring_rate = 0;
  intra_nvlink = true;
  std::vector<double> residual = res.capacity;
  const int m = static_cast<int>(groups[0].size());
  // The first ring is all NVLink (search_rings); as NCCL's channels of one graph share its path
  // type (typeIntra: NVL here), a packed ring takes NVLink hops only.
  std::vector<char> allowed(m * m, 0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j)
      allowed[i * m + j] = i != j && router->kind(ranks[groups[0][i]], ranks[groups[0][j]]) ==
                                         detail::HopKind::kNvlink;
  const std::vector<double> full = member_rates(groups[0], residual);
  std::vector<double> free_share(full.size());
  double first = 0;
  for (int c = 0; c < opt.max_channels; ++c) {
    std::vector<int> cyc;
    if (c == 0) {
      for (int k = 0; k < m; ++k) cyc.push_back(k);  // groups[0] is the first ring's order
    } else {
      std::vector<double> p = member_rates(groups[0], residual);
      for (std::size_t i = 0; i < p.size(); ++i) {
        if (!allowed[i]) p[i] = 0;
        free_share[i] = full[i] > 0 ? p[i] / full[i] : 0;
      }
      cyc =
          best_order(m, OrderGoal{.p = p, .w = &free_share, .floor = quantum * (1 - 1e-9)}, 0, -1);
      if (cyc.empty()) break;
    }
    std::vector<int> order;
    for (int k : cyc) order.push_back(groups[0][k]);
    if (add_ring(order, residual, first, quantum, quantum * (1 - 1e-9)) <= 0) break;
  }
}

bool Communicator::Impl::idle_peer_link(const std::vector<double>& residual) const {
  std::vector<char> member(chassis->nodes().size(), 0);
  for (int g : ranks) member[g] = 1;
  for (int g : ranks)
    for (int l : chassis->incident(g)) {
      const auto& link = chassis->link(l);
      if (link.family() != hw::LinkFamily::kNvlink || link.a != g || !member[link.b]) continue;
      for (bool from_a : {true, false}) {
        const int r = sim::ChassisResources::link_dir(l, from_a);
        if (res.capacity[r] > 0 && residual[r] >= res.capacity[r] * (1 - 1e-9)) return true;
      }
    }
  return false;
}

void Communicator::Impl::search_rings_across_boxes(std::vector<double>& residual) {
  // Boxes are copies of one chassis: boxes whose ranks sit at the same local GPU positions (the
  // signature) make the same choices, found once on the first of them.
  // Tables by box and by node (vectors: this runs for every communicator of a step model).
  const auto& all = chassis->gpus();
  const std::size_t boxes = static_cast<std::size_t>(std::max(chassis->boxes(), 1));
  std::vector<int> first_gpu_of_box(boxes, 0), gpu_pos(chassis->nodes().size(), 0);
  for (int i = static_cast<int>(all.size()) - 1; i >= 0; --i)
    first_gpu_of_box[chassis->node(all[i]).box] = i;
  for (int i = 0; i < static_cast<int>(all.size()); ++i) gpu_pos[all[i]] = i;
  std::vector<std::vector<int>> nics_of_box(boxes);
  for (int v : chassis->nodes_of_kind(topo::NodeKind::kNic))
    if (const int b = chassis->node(v).box; b >= 0 && b < static_cast<int>(boxes))
      nics_of_box[b].push_back(v);
  struct Kind {
    int group = -1;                                         // index of its first box in `groups`
    std::vector<std::vector<std::pair<double, int>>> near;  // per NIC, per member: nearness
    std::vector<int> entered, left;  // per member: channels entering / leaving there
  };
  std::vector<Kind> kinds;
  const std::vector<std::vector<int>> members = groups;  // in rank order; groups is reordered below
  std::vector<int> kind_of(groups.size());
  std::map<std::vector<int>, int> by_sig;
  for (std::size_t b = 0; b < groups.size(); ++b) {
    std::vector<int> sig;
    for (int k : groups[b])
      sig.push_back(gpu_pos[ranks[k]] - first_gpu_of_box[chassis->node(ranks[k]).box]);
    auto [it, added] = by_sig.emplace(sig, static_cast<int>(kinds.size()));
    if (added) {
      Kind kd;
      kd.group = static_cast<int>(b);
      const int box = chassis->node(ranks[groups[b][0]]).box;
      for (int nic : nics_of_box[box]) {
        kd.near.emplace_back();
        for (int k : groups[b]) kd.near.back().push_back(router->nic_nearness(ranks[k], nic));
      }
      if (kd.near.empty())
        kd.near.emplace_back(groups[b].size(), std::make_pair(0.0, 0));  // no NIC
      kd.entered.assign(groups[b].size(), 0);
      kd.left.assign(groups[b].size(), 0);
      kinds.push_back(std::move(kd));
    }
    kind_of[b] = it->second;
  }
  std::size_t nics = 1;
  for (const auto& kd : kinds) nics = std::max(nics, kd.near.size());
  const int channels =
      static_cast<int>(std::min<std::size_t>(opt.max_channels, 2 * nics));  // two rounds
  double first = 0;
  std::vector<std::vector<int>> box_order(groups.size());
  for (int c = 0; c < channels; ++c) {
    std::vector<std::vector<int>> kind_order(kinds.size());  // per kind: indices into its group
    for (std::size_t t = 0; t < kinds.size(); ++t) {
      auto& kd = kinds[t];
      const auto& near = kd.near[c % kd.near.size()];
      int in = pick_near(near, kd.entered, kd.left, -1);
      int out = near.size() > 1 ? pick_near(near, kd.left, kd.entered, in) : in;
      kind_order[t] = widest_order(static_cast<int>(near.size()),
                                   member_rates(members[kd.group], residual), in, out);
    }
    std::vector<int> order;
    for (std::size_t b = 0; b < groups.size(); ++b) {
      box_order[b].clear();
      for (int k : kind_order[kind_of[b]]) box_order[b].push_back(members[b][k]);
      order.insert(order.end(), box_order[b].begin(), box_order[b].end());
    }
    if (add_ring(order, residual, first) <= 0) continue;
    for (std::size_t t = 0; t < kinds.size(); ++t) {
      ++kinds[t].entered[kind_order[t].front()];
      ++kinds[t].left[kind_order[t].back()];
    }
  }
  // The chains the tree and hierarchical schedules follow in each box: the widest cycle from the
  // box's first rank on full capacities, found once per kind of box.
  std::vector<std::vector<int>> chain(kinds.size());
  for (std::size_t t = 0; t < kinds.size(); ++t) {
    const auto& mem = members[kinds[t].group];
    chain[t] = widest_order(static_cast<int>(mem.size()), member_rates(mem, res.capacity), 0, -1);
  }
  for (std::size_t b = 0; b < groups.size(); ++b) {
    groups[b].clear();
    for (int k : chain[kind_of[b]]) groups[b].push_back(members[b][k]);
  }
}

}  // namespace linkwise::comm
