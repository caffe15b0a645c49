// Algorithms as phases of flows, and their latency terms. Equations: docs/collectives.md.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "impl.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"

namespace linkwise::comm {

using detail::HopKind;
using detail::Route;

double wire_factor(Protocol p) {
  switch (p) {
    case Protocol::kLL:
      return 2.0;  // 8-byte line = 4 data + 4 flag bytes
    case Protocol::kLL128:
      return 128.0 / 120.0;  // 128-byte line = 120 data + 8 flag bytes
    case Protocol::kSimple:
      return 1.0;
  }
  return 1.0;
}

namespace {

// One flow over every route of `routes` in turn (a pipelined chain: each hop at the flow's rate).
sim::FlowSpec coupled(std::span<const Route* const> routes, double bytes) {
  sim::FlowSpec f;
  f.bytes = bytes;
  std::size_t size = 0;
  for (const Route* r : routes) size += r->res.size();
  f.route.reserve(size);
  f.coeff.reserve(size);
  for (const Route* r : routes) {
    f.route.insert(f.route.end(), r->res.begin(), r->res.end());
    f.coeff.insert(f.coeff.end(), r->coeff.begin(), r->coeff.end());
  }
  return f;
}

sim::FlowSpec single(const Route& r, double bytes) {
  const Route* one = &r;
  return coupled({&one, 1}, bytes);
}

// NCCL src/graph/tuning.cc (NCCL 2.2x): baseLat and hwLat, microseconds, [protocol] = {LL, LL128,
// Simple}.
constexpr double kBaseLatTree[3] = {6.8, 14.0, 8.4};
constexpr double kBaseLatRing[3] = {6.6, 14.0, 8.4};
constexpr double kHwLatNvlinkTree[3] = {0.6, 1.25, 4.0};
constexpr double kHwLatNvlinkRing[3] = {0.6, 1.9, 3.4};
constexpr double kHwLatNvlinkNvls = 25.0;  // Simple only
constexpr double kHwLatPciTree[3] = {1.0, 1.9, 4.0};
constexpr double kHwLatPciRing[3] = {1.0, 2.5, 5.7};
constexpr double kHwLatNetTree[3] = {5.0, 8.5, 14.0};
constexpr double kHwLatNetRing[3] = {2.7, 4.0, 14.0};
constexpr double kHwLatNetNvls = 18.0;  // Simple only

// One step's latency over an intra-box hop, microseconds, by the transport that carries it.
// NVLink, P2P over PCIe and NET: NCCL's hwLat for that hardware (tuning.cc). SHM has no figure of
// its own there. derived: NCCL's SHM transport keeps the receive buffers in the receiver's host
// memory (src/transport/shm.cc: shmRecvSetup opens them in host shared memory, the sender's
// conn.buffs point there, and the receiver reads its own conn.buffs from there), so a step is the
// sender's stores crossing PCIe to host memory, as a P2P step crosses it to the peer (hwLat PCI),
// and the receiver's polls of the flag, which become PCIe reads of host memory: a request and a
// completion, two more crossings, each taken at the LL figure of one P2P crossing
// (kHwLatPciRing[LL], 1.0 us). Not derived from any measurement.
double hop_latency_us(HopKind k, Algo a, Protocol p) {
  const int pi = static_cast<int>(p);
  const bool tree = a == Algo::kTree;
  switch (k) {
    case HopKind::kNvlink:
      return tree ? kHwLatNvlinkTree[pi] : kHwLatNvlinkRing[pi];
    case HopKind::kPcie:
      return tree ? kHwLatPciTree[pi] : kHwLatPciRing[pi];
    case HopKind::kHost:
      return (tree ? kHwLatPciTree[pi] : kHwLatPciRing[pi]) + 2 * kHwLatPciRing[0];
    case HopKind::kNet:
      return tree ? kHwLatNetTree[pi] : kHwLatNetRing[pi];
  }
  return kHwLatPciRing[pi];
}

int log2i(int n) {
  int l = 0;
  while (n > 1) {
    n >>= 1;
    ++l;
  }
  return l;
}

}  // namespace

void Communicator::Impl::check_nvls() {
  nvls = false;
  nvls_legs = {};
  if (!opt.allow_nvls || groups.size() != 1) return;
  double link_eff = 0, nvls_eff = 0;
  // Per node: its NVLS efficiency when it is an NVSwitch that reduces in-network, else 0; -1 = not
  // yet looked up (each switch is reached by every GPU: look its figures up once).
  std::vector<double> switch_eff(chassis->nodes().size(), -1.0);
  for (int g : ranks) {
    bool any = false;
    for (int l : chassis->incident(g)) {
      const auto& link = chassis->link(l);
      if (link.family() != hw::LinkFamily::kNvlink) continue;
      int s = link.other(g);
      if (switch_eff[s] < 0) {
        const auto& sw = chassis->node(s);
        bool reduces =
            sw.kind == topo::NodeKind::kNvSwitch && sw.fig("in_switch_reduction", 0) >= 1;
        switch_eff[s] = reduces ? std::max(sw.fig("nvls_efficiency", 0), 0.0) : 0.0;
      }
      if (switch_eff[s] <= 0) return;
      any = true;
      link_eff = link.efficiency;
      nvls_eff = switch_eff[s];
    }
    if (!any) return;
  }
  nvls = true;
  nvls_scale = link_eff / nvls_eff;
  for (int g : ranks) {
    router->add_switch_links(g, true, nvls_legs);
    router->add_switch_links(g, false, nvls_legs);
  }
}

bool Communicator::Impl::supports(Algo a, Op op) const {
  const int n = static_cast<int>(ranks.size());
  switch (a) {
    case Algo::kAuto:
    case Algo::kBest:
      return true;
    case Algo::kRing:
      return !rings.empty() && op != Op::kAllToAll && op != Op::kSendRecv;
    case Algo::kTree:
      return op == Op::kAllReduce;
    case Algo::kNvls:
      return nvls && op == Op::kAllReduce;
    case Algo::kDirect:
      return n <= 256;
    case Algo::kHierarchical: {
      if (op != Op::kAllReduce || groups.size() < 2) return false;
      for (const auto& g : groups)
        if (g.size() != groups[0].size()) return false;
      return true;
    }
  }
  return false;
}

std::string Communicator::Impl::why_not(Algo a, Op op) const {
  const bool all_reduce = op == Op::kAllReduce;
  switch (a) {
    case Algo::kAuto:
    case Algo::kBest:
      return {};
    case Algo::kRing:
      if (op == Op::kAllToAll || op == Op::kSendRecv)
        return fmt::format(
            "ring does not run {} in this model; NCCL runs it as direct peer transfers (--algo "
            "direct)",
            to_string(op));
      return "no ring was found through these GPUs";
    case Algo::kTree:
      return "the tree is modelled for all_reduce only";
    case Algo::kNvls:
      if (!all_reduce) return "NVLS is modelled for all_reduce only";
      if (!opt.allow_nvls) return "NVLS is turned off";
      if (groups.size() != 1) return "NVLS across boxes (NVLS tree) is not modelled";
      return "NVLS needs all ranks on NVSwitches that reduce in-network";
    case Algo::kDirect:
      return "direct is limited to 256 ranks";
    case Algo::kHierarchical:
      if (!all_reduce) return "hierarchical is modelled for all_reduce only";
      if (groups.size() < 2) return "hierarchical needs ranks in several boxes";
      return "hierarchical needs the same number of ranks in every box";
  }
  return {};
}

std::span<const Protocol> Communicator::Impl::protocols(Algo a) const {
  return a == Algo::kNvls ? protos_nvls : protos_other;
}

void Communicator::Impl::setup_protocols() {
  // NVLS runs Simple only. NCCL enables LL128 by default only where the intra-node graph is NVLink
  // (tuning.cc, protoEnable). NCCL_PROTO (opt.protocols) narrows either list.
  auto allowed = [&](Protocol p) {
    return opt.protocols.empty() ||
           std::find(opt.protocols.begin(), opt.protocols.end(), p) != opt.protocols.end();
  };
  protos_nvls.clear();
  protos_other.clear();
  if (allowed(Protocol::kSimple)) protos_nvls.push_back(Protocol::kSimple);
  for (Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple})
    if (allowed(p) && (p != Protocol::kLL128 || intra_nvlink)) protos_other.push_back(p);
}

const Route& Communicator::Impl::full_route(int i, int j) const {
  const Route& r = router->route_full(ranks[i], ranks[j]);
  if (!r.found())
    throw InputError(fmt::format("no path from {} to {} in chassis '{}'",
                                 chassis->display_name(ranks[i]), chassis->display_name(ranks[j]),
                                 chassis->name()));
  return r;
}

void Communicator::Impl::ring_phases(Op op, double S, double w, std::vector<Phase>& out) const {
  const int n = static_cast<int>(ranks.size());
  Phase ph{"ring", 0, {}};
  double k = op == Op::kAllReduce                                 ? 2.0 * (n - 1) / n
             : (op == Op::kAllGather || op == Op::kReduceScatter) ? static_cast<double>(n - 1) / n
                                                                  : 1.0;
  const bool one_way = n == 2 && (op == Op::kBroadcast || op == Op::kReduce);
  for (std::size_t c = 0; c < rings.size(); ++c) {
    std::vector<const Route*> hops;
    const auto& hr = ring_routes[c];
    for (int i = 0; i < n; ++i) {
      // broadcast: a chain from the root (ranks[0]) skips the hop into it; reduce: the hop out of
      // it.
      int to = (i + 1) % n;
      if (op == Op::kBroadcast && rings[c].order[to] == ranks[0]) continue;
      if (op == Op::kReduce && rings[c].order[i] == ranks[0]) continue;
      hops.push_back(&hr[i]);
    }
    const double share = rings[c].bytes_per_s / ring_rate;
    ph.flows.push_back(coupled(hops, k * S * w * share));
    // Host-staged rings: NCCL's channels, each moving at most shm_channel_bytes_per_s of its PCIe
    // generation (busbw units, so k·S/t summed over the flows; on the wire x w). That figure is
    // of traffic both ways at once; a broadcast or reduce between two GPUs moves one way only
    // (one GPU writes host buffers, the other reads them) and takes the one-way figure, if any.
    const double cap = one_way ? shm_one_way_cap : shm_ring_cap;
    if (shm_ring_cap > 0 && cap > 0) ph.flows.back().rate_cap = cap * w * share;
  }
  out.push_back(std::move(ph));
}

std::vector<std::pair<int, int>> Communicator::Impl::tree_edges(int t) const {
  // Double binary tree: chains inside each box, binary trees across boxes (NCCL
  // src/graph/trees.cc). Tree 1 reverses the chains and mirrors the box order.
  const int G = static_cast<int>(groups.size());
  std::vector<std::pair<int, int>> edges;
  // Rank position k of box g's chain in tree t.
  auto at = [&](int g, std::size_t k) {
    const auto& c = groups[t == 0 ? g : G - 1 - g];
    return t == 0 ? c[k] : c[c.size() - 1 - k];
  };
  for (int g = 0; g < G; ++g) {
    const std::size_t len = groups[t == 0 ? g : G - 1 - g].size();
    for (std::size_t i = 0; i + 1 < len; ++i) {
      edges.emplace_back(at(g, i + 1), at(g, i));
      edges.emplace_back(at(g, i), at(g, i + 1));
    }
    if (g > 0) {
      int parent = at((g - 1) / 2, 0), head = at(g, 0);
      edges.emplace_back(head, parent);
      edges.emplace_back(parent, head);
    }
  }
  return edges;
}

void Communicator::Impl::tree_phases(Op op, double S, double w, std::vector<Phase>& out) const {
  (void)op;  // one op only
  // Each tree carries S/2, up and down its edges.
  Phase ph{"tree", 0, {}};
  std::vector<const Route*> routes;  // they live in the router's cache
  for (int t = 0; t < 2; ++t) {
    routes.clear();
    for (auto [from, to] : tree_edges(t)) routes.push_back(&full_route(from, to));
    ph.flows.push_back(coupled(routes, S / 2 * w));
  }
  out.push_back(std::move(ph));
}

// Every route out of a GPU starts on that GPU's own outgoing link directions, with coefficients
// that sum to 1, and no route passes through a GPU. NVLink routes start on NVLink links only, the
// others (PCIe, host memory, network) on the other links. So rank g's NVLink edges, S/2 bytes each,
// load its outgoing NVLink directions with nvlink_edges(g)·S/2 in all, carried at most at Σ C(g→·)
// over them, and likewise for its other edges and links:
//   τ_tree ≥ max_g max( nvlink_edges(g) / 2 / C_nvlink(g),  other_edges(g) / 2 / C_other(g) )
// Kept 1e-9 below that, far more than the rounding of the engine's own time, so that a tree this
// bound rules out could not have been picked either.
double Communicator::Impl::tree_tau_floor() const {
  const std::size_t n = ranks.size();
  std::vector<int> nvlink_edges(n, 0), other_edges(n, 0);
  for (int t = 0; t < 2; ++t)
    for (auto [from, to] : tree_edges(t))
      ++(router->kind(ranks[from], ranks[to]) == HopKind::kNvlink ? nvlink_edges
                                                                  : other_edges)[from];
  double floor = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double nvlink_out = 0, other_out = 0;
    for (int l : chassis->incident(ranks[i])) {
      const auto& link = chassis->link(l);
      double c = res.capacity[sim::ChassisResources::link_dir(l, link.a == ranks[i])];
      (link.family() == hw::LinkFamily::kNvlink ? nvlink_out : other_out) += c;
    }
    if (nvlink_out > 0) floor = std::max(floor, nvlink_edges[i] / 2.0 / nvlink_out);
    if (other_out > 0) floor = std::max(floor, other_edges[i] / 2.0 / other_out);
  }
  return floor * (1 - 1e-9);
}

void Communicator::Impl::nvls_phases(Op op, double S, double w, std::vector<Phase>& out) const {
  const int n = static_cast<int>(ranks.size());
  (void)op;  // one op only
  // In-switch reduction (multimem.ld_reduce) then multicast (multimem.st): each GPU sends its S to
  // the switches and its reduced shard S/n back; receives its shard S/n and the multicast S.
  Phase ph{"nvls", 0, {}};
  ph.flows.push_back(single(nvls_legs, S * (1.0 + 1.0 / n) * nvls_scale * w));
  out.push_back(std::move(ph));
}

void Communicator::Impl::direct_phases(Op op, double S, double w, std::vector<Phase>& out) const {
  const int n = static_cast<int>(ranks.size());
  auto route = [&](int i, int j) -> const Route& { return full_route(i, j); };
  auto pairs = [&](const char* name, double bytes) {
    Phase ph{name, 0, {}};
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if (i != j) ph.flows.push_back(single(route(i, j), bytes * w));
    out.push_back(std::move(ph));
  };
  switch (op) {
    case Op::kAllReduce:
      pairs("direct reduce-scatter", S / n);
      pairs("direct all-gather", S / n);
      break;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAllToAll:
      pairs("direct", S / n);
      break;
    case Op::kBroadcast:
    case Op::kReduce: {
      Phase ph{"direct", 0, {}};
      for (int j = 1; j < n; ++j)
        ph.flows.push_back(single(op == Op::kBroadcast ? route(0, j) : route(j, 0), S * w));
      out.push_back(std::move(ph));
      break;
    }
    case Op::kSendRecv: {
      Phase ph{"sendrecv", 0, {}};
      for (int i = 0; i < n; ++i) ph.flows.push_back(single(route(i, (i + 1) % n), S * w));
      out.push_back(std::move(ph));
      break;
    }
  }
}

void Communicator::Impl::hierarchical_phases(Op op, double S, double w,
                                             std::vector<Phase>& out) const {
  auto route = [&](int i, int j) -> const Route& { return full_route(i, j); };
  (void)op;  // one op only
  // Reduce-scatter in each box, all-reduce of S/L across boxes (L rings, one per local index),
  // all-gather in each box.
  const int G = static_cast<int>(groups.size()), L = static_cast<int>(groups[0].size());
  std::vector<const Route*> hops;  // routes live in the router's cache
  auto rings_phase = [&](const char* name, const std::vector<std::vector<int>>& cycles,
                         double bytes) {
    Phase ph{name, 0, {}};
    for (const auto& cyc : cycles) {
      if (cyc.size() < 2) continue;
      hops.clear();
      for (std::size_t i = 0; i < cyc.size(); ++i)
        hops.push_back(&route(cyc[i], cyc[(i + 1) % cyc.size()]));
      ph.flows.push_back(coupled(hops, bytes * w));
    }
    out.push_back(std::move(ph));
  };
  std::vector<std::vector<int>> across(L);
  for (int i = 0; i < L; ++i)
    for (int g = 0; g < G; ++g) across[i].push_back(groups[g][i]);
  rings_phase("intra reduce-scatter", groups, S * (L - 1) / L);
  rings_phase("inter all-reduce", across, 2.0 * (G - 1) / G * S / L);
  rings_phase("intra all-gather", groups, S * (L - 1) / L);
}

std::vector<Phase> Communicator::Impl::phases(Op op, Algo a, Protocol p, double S) const {
  std::lock_guard lock(mu);
  const double w = wire_factor(p);
  std::vector<Phase> out;
  switch (a) {
    case Algo::kRing:
      ring_phases(op, S, w, out);
      break;
    case Algo::kTree:
      tree_phases(op, S, w, out);
      break;
    case Algo::kNvls:
      nvls_phases(op, S, w, out);
      break;
    case Algo::kDirect:
      direct_phases(op, S, w, out);
      break;
    case Algo::kHierarchical:
      hierarchical_phases(op, S, w, out);
      break;
    case Algo::kAuto:
    case Algo::kBest:
      break;
  }
  return out;
}

double Communicator::Impl::tuner_latency(Op op, Algo a, Protocol p) const {
  const int pi = static_cast<int>(p);
  const double ring = intra_nvlink ? kHwLatNvlinkRing[pi] : kHwLatPciRing[pi];
  return latency_us(op, a, p, ring, intra_nvlink ? kHwLatNvlinkTree[pi] : kHwLatPciTree[pi], ring) *
         1e-6;
}

double Communicator::Impl::latency(Op op, Algo a, Protocol p) const {
  const int hops = intra_hops[0] + intra_hops[1] + intra_hops[2] + intra_hops[3];
  if (hops == 0) return tuner_latency(op, a, p);
  // The mean per-hop latency of the first ring's intra-box hops, each at its transport's figure
  // (hop_latency_us). A ring's 2(n-1) steps of an all-reduce pass every hop about 2(n-1)/n times
  // (exactly, for hop kinds that alternate on an even ring), and the tree's chain in a box follows
  // the same order.
  // Direct moves every pair at once: its phase waits for the slowest hop kind.
  double ring = 0, tree = 0, slowest = 0;
  for (int k = 0; k < 4; ++k) {
    if (intra_hops[k] == 0) continue;
    const double r = hop_latency_us(static_cast<HopKind>(k), Algo::kRing, p);
    ring += intra_hops[k] * r;
    tree += intra_hops[k] * hop_latency_us(static_cast<HopKind>(k), Algo::kTree, p);
    slowest = std::max(slowest, r);
  }
  return latency_us(op, a, p, ring / hops, tree / hops, slowest) * 1e-6;
}

double Communicator::Impl::latency_us(Op op, Algo a, Protocol p, double intra_ring,
                                      double intra_tree, double intra_direct) const {
  const int pi = static_cast<int>(p);
  const int n = static_cast<int>(ranks.size());
  const int N = boxes_used();
  const bool multi = N > 1;
  auto ring_lat = [&](int steps, int inter_steps) {
    return kBaseLatRing[pi] + (steps - inter_steps) * intra_ring + inter_steps * kHwLatNetRing[pi];
  };
  double us = 0;
  switch (a) {
    case Algo::kRing:
      if (op == Op::kBroadcast || op == Op::kReduce)
        us = kBaseLatRing[pi] + (multi ? kHwLatNetRing[pi] : intra_ring);
      else if (op == Op::kAllReduce)
        us = ring_lat(2 * (n - 1), 2 * (N - 1));
      else
        us = ring_lat(n - 1, N - 1);
      break;
    case Algo::kTree:
      us = kBaseLatTree[pi] + 2 * ((n / N - 1) * intra_tree + log2i(N) * kHwLatNetTree[pi]);
      break;
    case Algo::kNvls:
      us = kHwLatNvlinkNvls + (multi ? kHwLatNetNvls : 0);
      break;
    case Algo::kDirect: {
      // derived: one ring step per phase (every pair moves at once): base + one hop's latency.
      double hop = multi ? kHwLatNetRing[pi] : intra_direct;
      us = (op == Op::kAllReduce ? 2 : 1) * (kBaseLatRing[pi] + hop);
      break;
    }
    case Algo::kHierarchical: {
      const int L = n / std::max(N, 1);
      us = 2 * (kBaseLatRing[pi] + (L - 1) * intra_ring) + ring_lat(2 * (N - 1), 2 * (N - 1));
      break;
    }
    case Algo::kAuto:
    case Algo::kBest:
      break;
  }
  return us;
}

}  // namespace linkwise::comm
