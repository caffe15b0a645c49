#include "router.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <queue>
#include <string>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"
#include "transport_rules.h"

namespace linkwise::comm::detail {

using topo::NodeKind;

void Route::append(const Route& o, double scale) {
  for (std::size_t i = 0; i < o.res.size(); ++i) {
    res.push_back(o.res[i]);
    coeff.push_back(o.coeff[i] * scale);
  }
}

Router::Router(const topo::Chassis& chassis, const sim::ChassisResources& res,
               const CommOptions& options, std::shared_ptr<const topo::PathFinder> finder,
               std::shared_ptr<MirrorSource> mirror)
    : chassis_(chassis),
      res_(res),
      options_(options),
      finder_(finder ? std::move(finder)
                     : std::make_shared<const topo::PathFinder>(chassis, topo::Rate::kEffective)),
      graph_(finder_->graph()),
      mirror_source_(mirror ? std::move(mirror) : std::make_shared<MirrorSource>()) {
  if (!options.p2p_level.empty() && !parse_path_level(options.p2p_level))
    throw InputError("p2p level must be one of LOC, NVL, PIX, PXB, PHB, NODE, SYS, not '" +
                     options.p2p_level + "'");
  const int n = static_cast<int>(chassis.nodes().size());
  nvswitch_.resize(n);
  for (int v = 0; v < n; ++v) nvswitch_[v] = chassis.node(v).kind == NodeKind::kNvSwitch;
  gpu_local_.assign(n, -1);
  peer_access_.assign(n, 0);
  for (int g : chassis.gpus()) {
    peer_access_[g] = chassis.node(g).fig("peer_access", 1) > 0.5;
    int b = graph_.box(g);
    if (b >= static_cast<int>(box_gpus_.size())) box_gpus_.resize(b + 1, 0);
    gpu_local_[g] = box_gpus_[b]++;
  }
  kind_offset_.assign(box_gpus_.size(), 0);
  int pairs = 0;
  for (std::size_t b = 0; b < box_gpus_.size(); ++b) {
    kind_offset_[b] = pairs;
    pairs += box_gpus_[b] * box_gpus_[b];
  }
  kinds_.assign(pairs, -1);
  best_.assign(n, 0);
  hops_.assign(n, 0);
  via_res_.assign(n, -1);
  via_from_.assign(n, -1);
  stamp_.assign(n, 0);
  // taken_ and sm_coeff_ (per resource, a large machine has many) are sized on first use
  // (widest(), the first PCIe or SHM route): a communicator within one NVLink box needs neither.
  leaf_switch_.assign(n, 0);
  for (int v = 0; v < n; ++v) {
    if (!nvswitch_[v]) continue;
    leaf_switch_[v] = 1;
    for (const Arc& arc : graph_.arcs(v))
      if (arc.family == kFamNvlink && graph_.may_pass(arc.to, true)) leaf_switch_[v] = 0;
  }
  // Nodes outside every box (the network's switches) reach every box; a path between two GPUs only
  // goes on into theirs, so their arcs are kept per box of the far end as well (index box + 1).
  by_box_.resize(n);
  for (int v = 0; v < n; ++v) {
    if (graph_.box(v) != -1) continue;
    by_box_[v].resize(box_gpus_.size() + 1);
    for (const Arc& arc : graph_.arcs(v)) {
      const int b = graph_.box(arc.to) + 1;
      if (b >= static_cast<int>(by_box_[v].size())) by_box_[v].resize(b + 1);
      by_box_[v][b].push_back(arc);
    }
  }
}

double Router::widest(int src, int dst, unsigned families, bool nic_transit,
                      const std::vector<double>& residual) {
  if (taken_.size() != res_.capacity.size()) taken_.assign(res_.capacity.size(), 0.0);
  ++epoch_;
  path_.clear();
  const int box_a = graph_.box(src), box_b = graph_.box(dst);
  auto& q = heap_;
  q.clear();
  auto visit = [&](int v, double bw, int h, int res, int from) {
    if (stamp_[v] == epoch_ && (best_[v] > bw || (best_[v] == bw && hops_[v] <= h))) return;
    stamp_[v] = epoch_;
    best_[v] = bw;
    hops_[v] = h;
    via_res_[v] = res;
    via_from_[v] = from;
    q.emplace_back(-bw, h, v);
    std::push_heap(q.begin(), q.end(), std::greater<>());
  };
  visit(src, std::numeric_limits<double>::infinity(), 0, -1, -1);
  while (!q.empty()) {
    // Keys leave the heap in increasing order and a visit from key (-bw, h) offers at least
    // (-bw, h + 1): once that cannot beat dst's key, dst and the path to it are final.
    if (stamp_[dst] == epoch_) {
      const auto& [top_nbw, top_h, top_v] = q.front();
      if (std::make_pair(top_nbw, top_h + 1) >= std::make_pair(-best_[dst], hops_[dst])) break;
    }
    std::pop_heap(q.begin(), q.end(), std::greater<>());
    auto [nbw, h, v] = q.back();
    q.pop_back();
    if (-nbw != best_[v] || h != hops_[v]) continue;
    if (v == dst) break;
    if (v != src && !graph_.may_pass(v, nic_transit)) continue;
    auto relax = [&](std::span<const Arc> arcs) {
      for (const Arc& arc : arcs) {
        if (!(arc.family & families)) continue;
        int w = arc.to;
        if (w != dst && !graph_.may_pass(w, nic_transit))
          continue;  // a dead end: never on a path to dst
        int wb = graph_.box(w);
        if (wb != box_a && wb != box_b && wb != -1) continue;
        const int out = out_res(arc);
        double bw = std::min(-nbw, residual[out] - taken_[out]);
        if (bw <= 0) continue;
        visit(w, bw, h + 1, out, v);
      }
    };
    if (const auto& per_box = by_box_[v]; !per_box.empty()) {
      // Only the arcs into the two boxes (and to other nodes outside boxes), each group in
      // graph_.arcs(v)'s order: parallel arcs to one node keep their order, so ties (kept by
      // first offer) resolve as before.
      relax(per_box[0]);
      const int lo = std::min(box_a, box_b), hi = std::max(box_a, box_b);
      if (lo >= 0 && lo + 1 < static_cast<int>(per_box.size())) relax(per_box[lo + 1]);
      if (hi != lo && hi >= 0 && hi + 1 < static_cast<int>(per_box.size())) relax(per_box[hi + 1]);
    } else {
      relax(graph_.arcs(v));
    }
  }
  if (stamp_[dst] != epoch_ || src == dst) return 0;
  for (int v = dst; v != src; v = via_from_[v]) path_.push_back(via_res_[v]);
  std::reverse(path_.begin(), path_.end());
  return best_[dst];
}

HopKind Router::kind(int a, int b) {
  auto classify = [&] {
    auto fab = finder_->gpu_fabric(a, b);
    if (fab == topo::Fabric::kAll) return HopKind::kNet;
    PairFacts f;
    f.nvlink = fab == topo::Fabric::kNvlink;
    if (!f.nvlink) f.path = finder_->path_class(a, b).type;
    f.peer_access = peer_access_[a] && peer_access_[b];
    const int cpu = chassis_.node(a).cpu;
    f.amd_cpu = cpu >= 0 && chassis_.node(cpu).part->vendor == "AMD";
    f.host_gpus = graph_.box(a) < static_cast<int>(box_gpus_.size()) ? box_gpus_[graph_.box(a)] : 0;
    switch (choose_transport(f, options_)) {
      case Transport::kP2pNvlink:
        return HopKind::kNvlink;
      case Transport::kP2pPcie:
        return HopKind::kPcie;
      case Transport::kShm:
        return HopKind::kHost;
      case Transport::kNet:
        return HopKind::kNet;
    }
    return HopKind::kHost;
  };
  if (graph_.box(a) != graph_.box(b))
    return HopKind::kNet;  // as gpu_fabric: GPUs of different boxes use the network
  const int la = gpu_local_[a], lb = gpu_local_[b];
  if (la < 0 || lb < 0) return classify();
  const int m = box_gpus_[graph_.box(a)], base = kind_offset_[graph_.box(a)];
  auto& k = kinds_[base + la * m + lb];
  if (k < 0) {
    // The transport rules are symmetric: the reverse pair's answer settles this one.
    const auto reverse = kinds_[base + lb * m + la];
    k = reverse >= 0 ? reverse : static_cast<signed char>(classify());
  }
  return static_cast<HopKind>(k);
}

Route Router::route(int a, int b, const std::vector<double>& residual) {
  Route r;
  r.kind = kind(a, b);
  auto single = [&](double bottleneck) {
    r.res.assign(path_.begin(), path_.end());
    r.coeff.assign(path_.size(), 1.0);
    r.bytes_per_s = bottleneck;
  };
  switch (r.kind) {
    case HopKind::kNvlink: {
      if (stripe_one_level(a, b, residual, r)) break;
      // Stripe over parallel NVLink paths: successive widest paths, each taking its bottleneck from
      // what the next may use (taken_, cleared afterwards). coeff holds each path's bottleneck
      // until the total is known, then its share.
      double total = 0;
      stripe_coeff_.clear();
      for (int i = 0; i < 64; ++i) {
        double bottleneck = widest(a, b, kFamNvlink, false, residual);
        if (path_.empty() || bottleneck <= 1e-9 * (total + bottleneck)) break;
        for (int x : path_) {
          taken_[x] += bottleneck;
          stripe_coeff_.push_back(bottleneck);
        }
        taken_list_.insert(taken_list_.end(), path_.begin(), path_.end());
        total += bottleneck;
      }
      for (int x : taken_list_) taken_[x] = 0;
      r.res.assign(taken_list_.begin(), taken_list_.end());
      taken_list_.clear();
      r.coeff.resize(stripe_coeff_.size());
      for (std::size_t i = 0; i < stripe_coeff_.size(); ++i) r.coeff[i] = stripe_coeff_[i] / total;
      r.bytes_per_s = total;
      break;
    }
    case HopKind::kPcie: {
      // P2P over PCIe: the sender's SMs write into the peer's buffer (128 B payloads).
      if (sm_coeff_.empty()) sm_table();
      single(widest(a, b, kFamPcie | kFamSocket, false, residual));
      for (std::size_t i = 0; i < r.res.size(); ++i) {
        r.coeff[i] = sm_coeff_[r.res[i]];
        r.bytes_per_s = std::min(r.bytes_per_s, residual[r.res[i]] / r.coeff[i]);
      }
      gave(r);
      break;
    }
    case HopKind::kNet:
      if (graph_.box(a) == graph_.box(b)) {
        net_within_box(a, b, residual, r);
        break;
      }
      single(widest(a, b, kFamPcie | kFamSocket | kFamNet, true, residual));
      break;
    case HopKind::kHost: {
      if (leaves_gpu_.empty()) host_tables();
      if (sm_coeff_.empty()) sm_table();
      // SHM (src/transport/shm.cc): the buffer is in the host memory of the receiver's CPU
      // (NCCL_SHM_LOCALITY=2, SHM_RECV_SIDE, the default) or of the sender's (1, SHM_SEND_SIDE:
      // shmSendSetup and shmRecvSetup size the buffer into the segment of that side, and both
      // connectors point conn.buffs there). Either way the sender's SMs write it and the
      // receiver's SMs read it; the socket link, where the two GPUs hang off different CPUs,
      // carries the sender's writes (2) or the receiver's reads (1).
      const bool at_sender = options_.shm_locality == 1;
      int cpu = chassis_.node(at_sender ? a : b).cpu;
      int mem = cpu >= 0 ? res_.memory(cpu) : -1;
      if (mem < 0) break;
      const unsigned up_fam = at_sender ? kFamPcie : kFamPcie | kFamSocket,
                     down_fam = at_sender ? kFamPcie | kFamSocket : kFamPcie;
      const bool full = &residual == &res_.capacity;
      const Leg& up_leg = full ? full_leg(a, cpu, up_fam) : leg(a, cpu, up_fam, residual, legs_[0]);
      double up = up_leg.bottleneck;
      if (up_leg.res.empty()) break;
      r.res.assign(up_leg.res.begin(), up_leg.res.end());
      r.res.push_back(mem);
      const std::size_t up_hops = up_leg.res.size();
      const Leg& down_leg =
          full ? full_leg(cpu, b, down_fam) : leg(cpu, b, down_fam, residual, legs_[1]);
      const double down = down_leg.bottleneck;
      if (down_leg.res.empty()) {
        r.res.clear();
        break;
      }
      r.res.insert(r.res.end(), down_leg.res.begin(), down_leg.res.end());
      r.coeff.assign(r.res.size(), 1.0);
      r.coeff[up_hops] = 2.0;  // written by the sender, read by the receiver
      // The sender's SMs write the buffer (128 B payloads) on the way up.
      for (std::size_t i = 0; i < up_hops; ++i) {
        r.coeff[i] = sm_coeff_[r.res[i]];
        up = std::min(up, residual[r.res[i]] / r.coeff[i]);
      }
      r.bytes_per_s = std::min({up, down, residual[mem] / 2});
      break;
    }
  }
  return r;
}

void Router::sm_table() {
  sm_coeff_.assign(res_.capacity.size(), 1.0);
  for (const auto& l : chassis_.links()) {
    const double share = sm_write_share(*l.tech);
    if (share >= 1) continue;
    for (bool from_a : {true, false}) {
      const int r = sim::ChassisResources::link_dir(l.index, from_a);
      if (r < static_cast<int>(sm_coeff_.size())) sm_coeff_[r] = 1.0 / share;
    }
  }
}

void Router::host_tables() {
  leaves_gpu_.assign(res_.capacity.size(), 0);
  host_read_into_.assign(res_.capacity.size(), -1.0);
  std::vector<double> host_read(chassis_.nodes().size(), -1.0);  // per GPU node
  for (int g : chassis_.gpus()) host_read[g] = chassis_.node(g).fig("host_read_bytes_per_s", 0);
  for (const auto& l : chassis_.links())
    for (bool from_a : {true, false}) {
      const int r = sim::ChassisResources::link_dir(l.index, from_a);
      if (r >= static_cast<int>(host_read_into_.size())) continue;
      host_read_into_[r] = host_read[from_a ? l.b : l.a];
      leaves_gpu_[r] = host_read[from_a ? l.a : l.b] >= 0;
    }
}

bool Router::stripe_one_level(int a, int b, const std::vector<double>& residual, Route& r) {
  // Where every NVLink path from a to b is the direct link or two hops through a switch that links
  // to GPUs only, the paths share no link direction, so the successive widest paths of route() are
  // these paths in the order widest() finds them: greatest bottleneck first; among equals the
  // direct link (fewer hops), then the switch widest() settles first (greater residual from a,
  // then lower node index). Anything else (parallel links between two nodes, switches joined to
  // switches) returns false and route() searches.
  auto& cand = one_level_scratch_;  // (bottleneck, hops, residual from a, node, out res, in res)
  cand.clear();
  for (const Arc& arc : graph_.arcs(a)) {
    if (arc.family != kFamNvlink) continue;
    const int w = arc.to;
    if (w == b) {
      cand.push_back({residual[out_res(arc)], 1, 0.0, w, out_res(arc), -1});
      continue;
    }
    if (!nvswitch_[w]) {
      if (graph_.may_pass(w, false)) return false;
      continue;  // another GPU: a dead end
    }
    if (!leaf_switch_[w]) return false;
    const double up = residual[out_res(arc)];
    int down = -1;
    for (const Arc& back : graph_.arcs(b))
      if (back.family == kFamNvlink && back.to == w) {
        if (down >= 0) return false;  // parallel links switch -> b
        down = in_res(back);
      }
    if (down < 0) continue;
    cand.push_back({std::min(up, residual[down]), 2, up, w, out_res(arc), down});
  }
  // Parallel links a -> the same node: route() settles those by arc order; leave them to it.
  for (std::size_t i = 0; i < cand.size(); ++i)
    for (std::size_t j = i + 1; j < cand.size(); ++j)
      if (std::get<3>(cand[i]) == std::get<3>(cand[j])) return false;
  auto before = [](const auto& x, const auto& y) {
    if (std::get<0>(x) != std::get<0>(y)) return std::get<0>(x) > std::get<0>(y);
    if (std::get<1>(x) != std::get<1>(y)) return std::get<1>(x) < std::get<1>(y);
    if (std::get<2>(x) != std::get<2>(y)) return std::get<2>(x) > std::get<2>(y);
    return std::get<3>(x) < std::get<3>(y);
  };
  // A stable insertion sort: a handful of candidates (one per switch), and no buffer to allocate
  // as std::stable_sort's.
  for (std::size_t i = 1; i < cand.size(); ++i)
    for (std::size_t j = i; j > 0 && before(cand[j], cand[j - 1]); --j)
      std::swap(cand[j], cand[j - 1]);
  double total = 0;
  stripe_coeff_.clear();
  r.res.clear();
  r.res.reserve(2 * cand.size());
  int paths = 0;
  for (const auto& [bw, hops, up, node, out, in] : cand) {
    if (bw <= 0 || bw <= 1e-9 * (total + bw) || ++paths > 64) break;
    r.res.push_back(out);
    stripe_coeff_.push_back(bw);
    if (in >= 0) {
      r.res.push_back(in);
      stripe_coeff_.push_back(bw);
    }
    total += bw;
  }
  r.coeff.resize(stripe_coeff_.size());
  for (std::size_t i = 0; i < stripe_coeff_.size(); ++i) r.coeff[i] = stripe_coeff_[i] / total;
  r.bytes_per_s = total;
  return true;
}

void Router::net_within_box(int a, int b, const std::vector<double>& residual, Route& r) {
  // Neither P2P nor SHM (NCCL_P2P_DISABLE and NCCL_SHM_DISABLE, or no peer access and no SHM):
  // NCCL's NET transport loops through a NIC of the host, the one nearest the sender.
  int best = -1;
  std::pair<double, int> near{0, 0};
  for (int v = 0; v < static_cast<int>(chassis_.nodes().size()); ++v) {
    if (graph_.box(v) != graph_.box(a) || chassis_.node(v).kind != NodeKind::kNic) continue;
    auto n = nic_nearness(a, v);
    if (n.first > near.first || (n.first == near.first && n.second < near.second && n.first > 0))
      near = n, best = v;
  }
  if (best < 0) {
    // NCCL's NET transport needs a network device (InfiniBand, or an IP interface for its socket
    // transport: NCCL's environment documentation, NCCL_SHM_DISABLE); the box has none to route
    // through, so the pair has no transport this model can time.
    std::string no_p2p;
    if (options_.p2p_disable)
      no_p2p = "NCCL_P2P_DISABLE=1";
    else if (chassis_.node(a).fig("peer_access", 1) <= 0.5 ||
             chassis_.node(b).fig("peer_access", 1) <= 0.5)
      no_p2p = "no peer access (peer_access: 0)";
    else
      no_p2p = options_.p2p_level.empty()
                   ? "their path beyond NCCL's default P2P level"
                   : "their path beyond NCCL_P2P_LEVEL=" + options_.p2p_level;
    throw InputError(fmt::format(
        "{} and {}: with {} and NCCL_SHM_DISABLE=1 NCCL would need its NET transport between "
        "them, and their box has no NIC for it (add the host's NIC to the chassis file, or allow "
        "P2P or SHM)",
        chassis_.display_name(a), chassis_.display_name(b), no_p2p));
  }
  double up = widest(a, best, kFamPcie | kFamSocket, false, residual);
  if (path_.empty()) return;
  r.res.assign(path_.begin(), path_.end());
  double down = widest(best, b, kFamPcie | kFamSocket, false, residual);
  if (path_.empty()) {
    r.res.clear();
    return;
  }
  r.res.insert(r.res.end(), path_.begin(), path_.end());
  r.coeff.assign(r.res.size(), 1.0);
  r.bytes_per_s = std::min(up, down);
}

std::pair<double, int> Router::nic_nearness(int gpu, int nic) {
  double bw = widest(gpu, nic, kFamPcie | kFamSocket, false, res_.capacity);
  return {bw, static_cast<int>(path_.size())};
}

const Router::Leg& Router::leg(int src, int dst, unsigned families,
                               const std::vector<double>& residual, Leg& out) {
  out.bottleneck = widest(src, dst, families, false, residual);
  out.res.assign(path_.begin(), path_.end());
  return out;
}

const Router::Leg& Router::full_leg(int src, int dst, unsigned families) {
  static_assert((kFamPcie | kFamNvlink | kFamSocket | kFamNet) < 16, "four family bits");
  auto [it, fresh] = full_legs_.try_emplace(pair_key(src, dst) * 16 + families);
  return fresh ? leg(src, dst, families, res_.capacity, it->second) : it->second;
}

const Route& Router::route_full(int a, int b) {
  auto it = full_.find(pair_key(a, b));
  if (it != full_.end()) return it->second;
  // On full capacities every box is alike: a pair's route is the mirror of the pair at the same
  // places in box 0 (both ends in one box) or in boxes 0 and 1 (in that order, or 1 and 0).
  const int ba = graph_.box(a), bb = graph_.box(b);
  const int ca = ba == bb || ba < bb ? 0 : 1, cb = ba == bb ? 0 : 1 - ca;
  Route r;
  if (ba >= 0 && bb >= 0 && (ba != ca || bb != cb) && mirrored()) {
    mirror(route_full(mirror_node(a, ca), mirror_node(b, cb)), ca, cb, ba, bb, r);
    gave(r);
  } else {
    r = route(a, b, res_.capacity);
  }
  return full_.emplace(pair_key(a, b), std::move(r)).first->second;
}

bool Router::mirrored() {
  if (!mirror_asked_) {
    std::call_once(mirror_source_->once,
                   [&] { mirror_source_->tables = BoxMirror::build(chassis_, res_); });
    mirror_ = mirror_source_->tables.get();
    mirror_asked_ = true;
  }
  return mirror_ != nullptr;
}

std::shared_ptr<const BoxMirror> BoxMirror::build(const topo::Chassis& chassis,
                                                  const sim::ChassisResources& res) {
  // Every box is a copy of box 0, node for node and link for link in index order
  // (topo::Chassis::boxes() states it; build_chassis() makes them so, and tests it), and `res` is
  // sim::chassis_resources(chassis), each capacity a function of its link or CPU alone: so the
  // boxes mirror each other resource for resource, and the tables only number each box's nodes
  // and resources in order.
  const int boxes = chassis.boxes();
  if (boxes < 2) return nullptr;
  auto t = std::make_shared<BoxMirror>();
  const int n = static_cast<int>(chassis.nodes().size());
  std::vector<std::vector<int>> nodes_of(boxes);
  t->node_local.assign(n, -1);
  for (int v = 0; v < n; ++v)
    if (const int b = chassis.node(v).box; b >= 0) {
      t->node_local[v] = static_cast<int>(nodes_of[b].size());
      nodes_of[b].push_back(v);
    }
  t->per_box = nodes_of[0].size();
  t->box_nodes.reserve(t->per_box * boxes);
  for (const auto& nodes : nodes_of) {
    assert(nodes.size() == t->per_box);
    t->box_nodes.insert(t->box_nodes.end(), nodes.begin(), nodes.end());
  }
  // Each box's resources in order: its links' two directions, then its CPUs' memories.
  const std::size_t total = res.capacity.size();
  t->res_box.assign(total, -1);
  t->res_local.assign(total, -1);
  std::vector<std::vector<int>> res_of(boxes);
  auto place = [&](int r, int b) {
    t->res_box[r] = b;
    t->res_local[r] = static_cast<int>(res_of[b].size());
    res_of[b].push_back(r);
  };
  for (const auto& l : chassis.links()) {
    const int b = chassis.node(l.a).box >= 0 ? chassis.node(l.a).box : chassis.node(l.b).box;
    if (b < 0) continue;  // between nodes outside every box: itself in every mirror
    place(sim::ChassisResources::link_dir(l.index, true), b);
    place(sim::ChassisResources::link_dir(l.index, false), b);
  }
  for (int v = 0; v < n; ++v)
    if (const int b = chassis.node(v).box; b >= 0 && res.cpu_memory[v] >= 0)
      place(res.cpu_memory[v], b);
  t->per_box_res = res_of[0].size();
  t->box_res.reserve(t->per_box_res * boxes);
  for (const auto& rs : res_of) {
    assert(rs.size() == t->per_box_res);
    t->box_res.insert(t->box_res.end(), rs.begin(), rs.end());
  }
  return t;
}

void Router::gave(const Route& r) {
  if (r.kind != HopKind::kPcie) return;
  if (peer_pcie_.empty()) peer_pcie_.assign(res_.capacity.size(), 0);
  for (int x : r.res) peer_pcie_[x] = 1;
}

void Router::mirror(const Route& from, int fa, int fb, int ta, int tb, Route& out) const {
  const auto &res_box = mirror_->res_box, &res_local = mirror_->res_local,
             &box_res = mirror_->box_res;
  const std::size_t per_box_res = mirror_->per_box_res;
  out.kind = from.kind;
  out.bytes_per_s = from.bytes_per_s;
  out.coeff = from.coeff;
  out.res.resize(from.res.size());
  for (std::size_t i = 0; i < from.res.size(); ++i) {
    const int r = from.res[i], b = res_box[r];
    const int to = b == fa ? ta : b == fb ? tb : -1;
    out.res[i] = to < 0 ? r : box_res[static_cast<std::size_t>(to) * per_box_res + res_local[r]];
  }
}

double Router::pair_rate(int a, int b, const std::vector<double>& residual) {
  if (kind(a, b) != HopKind::kNvlink) {
    // On the full capacities themselves the cached route serves (the same route: route_full()),
    // and the later users of route_full() (the NCCL channel count) find it there.
    if (&residual == &res_.capacity) return route_full(a, b).bytes_per_s;
    return route(a, b, residual).bytes_per_s;
  }
  double direct = 0;
  // Per switch: a's residual into it, and its residual towards b (few switches: linear search).
  auto& sw = pair_scratch_;
  sw.clear();
  for (const Arc& arc : graph_.arcs(a)) {
    if (arc.family != kFamNvlink) continue;
    double r = residual[out_res(arc)];
    if (arc.to == b) {
      direct += r;
    } else if (nvswitch_[arc.to]) {
      auto it = std::find_if(sw.begin(), sw.end(),
                             [&](const auto& t) { return std::get<0>(t) == arc.to; });
      if (it == sw.end())
        sw.emplace_back(arc.to, r, 0.0);
      else
        std::get<1>(*it) += r;
    }
  }
  for (const Arc& arc : graph_.arcs(b)) {
    if (arc.family != kFamNvlink) continue;
    auto it =
        std::find_if(sw.begin(), sw.end(), [&](const auto& t) { return std::get<0>(t) == arc.to; });
    if (it != sw.end()) std::get<2>(*it) += residual[in_res(arc)];
  }
  for (const auto& [node, in, out] : sw) direct += std::min(in, out);
  return direct;
}

void Router::add_switch_links(int gpu, bool up, Route& to) const {
  const std::size_t first = to.res.size();
  double total = 0;
  for (const Arc& arc : graph_.arcs(gpu)) {
    if (!nvswitch_[arc.to]) continue;
    const double rate = res_.capacity[out_res(arc)];  // the link's effective rate, either direction
    to.res.push_back(up ? out_res(arc) : in_res(arc));
    to.coeff.push_back(rate);
    total += rate;
  }
  for (std::size_t i = first; i < to.coeff.size(); ++i) to.coeff[i] /= total;
}

}  // namespace linkwise::comm::detail
