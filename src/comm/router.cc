#include "router.h"

#include <algorithm>
#include <cmath>
#include <queue>

#include "linkwise/topo/chassis.h"

namespace linkwise::comm::detail {

using topo::NodeKind;

void Route::append(const Route& o, double scale) {
  for (std::size_t i = 0; i < o.res.size(); ++i) {
    res.push_back(o.res[i]);
    coeff.push_back(o.coeff[i] * scale);
  }
}

namespace {

topo::PathType parse_level(const std::string& s) {
  if (s == "PIX") return topo::PathType::kPix;
  if (s == "PXB") return topo::PathType::kPxb;
  if (s == "PHB") return topo::PathType::kPhb;
  if (s == "NODE") return topo::PathType::kNode;
  if (s == "SYS") return topo::PathType::kSys;
  throw InputError("p2p level must be one of PIX, PXB, PHB, NODE, SYS, not '" + s + "'");
}

unsigned family_bit(hw::LinkFamily f) {
  switch (f) {
    case hw::LinkFamily::kNvlink: return kFamNvlink;
    case hw::LinkFamily::kPcie: return kFamPcie;
    case hw::LinkFamily::kSocket: return kFamSocket;
    case hw::LinkFamily::kNetwork: return kFamNet;
  }
  return 0;
}

}  // namespace

Router::Router(const topo::Chassis& chassis, const sim::ChassisResources& res, const CommOptions& options)
    : chassis_(chassis), res_(res), options_(options), finder_(chassis, topo::Rate::kEffective),
      p2p_level_(parse_level(options.p2p_level)) {
  std::size_t n = chassis.nodes().size();
  best_.assign(n, 0);
  hops_.assign(n, 0);
  via_link_.assign(n, -1);
  stamp_.assign(n, 0);
  taken_.assign(res.capacity.size(), 0.0);
}

bool Router::transit(int node, bool nic_transit) const {
  NodeKind k = chassis_.node(node).kind;
  if (k == NodeKind::kGpu || k == NodeKind::kNvme) return false;
  if (k == NodeKind::kNic) return nic_transit;
  return true;
}

Router::Found Router::widest(int src, int dst, unsigned families, bool nic_transit,
                             const std::vector<double>& residual) {
  ++epoch_;
  int box_a = chassis_.node(src).box, box_b = chassis_.node(dst).box;
  auto& q = heap_;
  q.clear();
  auto push = [&](const Item& it) {
    q.push_back(it);
    std::push_heap(q.begin(), q.end(), std::greater<>());
  };
  auto visit = [&](int v, double bw, int h, int link) {
    if (stamp_[v] == epoch_ && (best_[v] > bw || (best_[v] == bw && hops_[v] <= h))) return;
    stamp_[v] = epoch_;
    best_[v] = bw;
    hops_[v] = h;
    via_link_[v] = link;
    push({-bw, h, v});
  };
  visit(src, std::numeric_limits<double>::infinity(), 0, -1);
  while (!q.empty()) {
    std::pop_heap(q.begin(), q.end(), std::greater<>());
    auto [nbw, h, v] = q.back();
    q.pop_back();
    if (-nbw != best_[v] || h != hops_[v]) continue;
    if (v == dst) break;
    if (v != src && !transit(v, nic_transit)) continue;
    for (int l : chassis_.incident(v)) {
      const auto& link = chassis_.link(l);
      if (!(family_bit(link.family()) & families)) continue;
      int w = link.other(v);
      if (w != dst && !transit(w, nic_transit)) continue;  // a dead end: never on a path to dst
      int wb = chassis_.node(w).box;
      if (wb != box_a && wb != box_b && wb != -1) continue;
      int r = sim::ChassisResources::link_dir(l, link.a == v);
      double bw = std::min(-nbw, residual[r] - taken_[r]);
      if (bw <= 0) continue;
      visit(w, bw, h + 1, l);
    }
  }
  Found f;
  if (stamp_[dst] != epoch_ || src == dst) return f;
  f.bottleneck = best_[dst];
  for (int v = dst; v != src;) {
    const auto& link = chassis_.link(via_link_[v]);
    int from = link.other(v);
    f.res.push_back(sim::ChassisResources::link_dir(link.index, link.a == from));
    v = from;
  }
  std::reverse(f.res.begin(), f.res.end());
  return f;
}

HopKind Router::kind(int a, int b) {
  long long key = static_cast<long long>(a) * 1000003LL + b;
  auto it = kinds_.find(key);
  if (it != kinds_.end()) return it->second;
  HopKind k;
  auto fab = finder_.gpu_fabric(a, b);
  if (fab == topo::Fabric::kAll) k = HopKind::kNet;
  else if (fab == topo::Fabric::kNvlink) k = HopKind::kNvlink;
  else k = finder_.path_class(a, b).type <= p2p_level_ ? HopKind::kPcie : HopKind::kHost;
  kinds_[key] = k;
  return k;
}

Route Router::route(int a, int b, const std::vector<double>& residual) {
  Route r;
  r.kind = kind(a, b);
  auto single = [&](const Found& f) {
    r.res = f.res;
    r.coeff.assign(f.res.size(), 1.0);
    r.bytes_per_s = f.bottleneck;
  };
  switch (r.kind) {
    case HopKind::kNvlink: {
      // Stripe over parallel NVLink paths: successive widest paths, each taking its bottleneck from
      // what the next may use (taken_, cleared afterwards).
      std::vector<Found> paths;
      double total = 0;
      for (int i = 0; i < 64; ++i) {
        Found f = widest(a, b, kFamNvlink, false, residual);
        if (f.res.empty() || f.bottleneck <= 1e-9 * (total + f.bottleneck)) break;
        for (int x : f.res) {
          taken_[x] += f.bottleneck;
          taken_list_.push_back(x);
        }
        total += f.bottleneck;
        paths.push_back(std::move(f));
      }
      for (int x : taken_list_) taken_[x] = 0;
      taken_list_.clear();
      for (const auto& p : paths)
        for (int x : p.res) {
          r.res.push_back(x);
          r.coeff.push_back(p.bottleneck / total);
        }
      r.bytes_per_s = total;
      break;
    }
    case HopKind::kPcie: single(widest(a, b, kFamPcie | kFamSocket, false, residual)); break;
    case HopKind::kNet: single(widest(a, b, kFamPcie | kFamSocket | kFamNet, true, residual)); break;
    case HopKind::kHost: {
      int cpu = chassis_.node(a).cpu;
      int mem = cpu >= 0 ? res_.memory(cpu) : -1;
      if (mem < 0) break;
      Found up = widest(a, cpu, kFamPcie, false, residual);
      Found down = widest(cpu, b, kFamPcie | kFamSocket, false, residual);
      if (up.res.empty() || down.res.empty()) break;
      r.res = up.res;
      r.res.push_back(mem);
      r.res.insert(r.res.end(), down.res.begin(), down.res.end());
      r.coeff.assign(r.res.size(), 1.0);
      r.coeff[up.res.size()] = 2.0;  // written by the sender, read by the receiver
      r.bytes_per_s = std::min({up.bottleneck, down.bottleneck, residual[mem] / 2});
      break;
    }
  }
  return r;
}

const Route& Router::route_full(int a, int b) {
  long long key = static_cast<long long>(a) * 1000003LL + b;
  auto it = full_.find(key);
  if (it == full_.end()) it = full_.emplace(key, route(a, b, res_.capacity)).first;
  return it->second;
}

double Router::pair_rate(int a, int b, const std::vector<double>& residual) {
  if (kind(a, b) != HopKind::kNvlink) return route(a, b, residual).bytes_per_s;
  double direct = 0;
  // Per switch: a's residual into it, and its residual towards b (few switches: linear search).
  auto& sw = pair_scratch_;
  sw.clear();
  for (int l : chassis_.incident(a)) {
    const auto& link = chassis_.link(l);
    if (link.family() != hw::LinkFamily::kNvlink) continue;
    int w = link.other(a);
    double r = residual[sim::ChassisResources::link_dir(l, link.a == a)];
    if (w == b) {
      direct += r;
    } else if (chassis_.node(w).kind == NodeKind::kNvSwitch) {
      auto it = std::find_if(sw.begin(), sw.end(), [&](const auto& t) { return std::get<0>(t) == w; });
      if (it == sw.end()) sw.emplace_back(w, r, 0.0);
      else std::get<1>(*it) += r;
    }
  }
  for (int l : chassis_.incident(b)) {
    const auto& link = chassis_.link(l);
    if (link.family() != hw::LinkFamily::kNvlink) continue;
    int w = link.other(b);
    auto it = std::find_if(sw.begin(), sw.end(), [&](const auto& t) { return std::get<0>(t) == w; });
    if (it != sw.end()) std::get<2>(*it) += residual[sim::ChassisResources::link_dir(l, link.a == w)];
  }
  for (const auto& [node, in, out] : sw) direct += std::min(in, out);
  return direct;
}

Route Router::switch_links(int gpu, bool up) const {
  Route r;
  double total = 0;
  for (int l : chassis_.incident(gpu)) {
    const auto& link = chassis_.link(l);
    if (chassis_.node(link.other(gpu)).kind != NodeKind::kNvSwitch) continue;
    bool from_a = (link.a == gpu) == up;
    r.res.push_back(sim::ChassisResources::link_dir(l, from_a));
    r.coeff.push_back(link.effective_bytes_per_s());
    total += link.effective_bytes_per_s();
  }
  for (double& c : r.coeff) c /= total;
  r.bytes_per_s = total;
  return r;
}

}  // namespace linkwise::comm::detail
