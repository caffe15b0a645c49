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

}  // namespace

Router::Router(const topo::Chassis& chassis, const sim::ChassisResources& res, const CommOptions& options)
    : chassis_(chassis), res_(res), options_(options), finder_(chassis, topo::Rate::kEffective),
      p2p_level_(parse_level(options.p2p_level)), graph_(finder_.graph()) {
  const int n = static_cast<int>(chassis.nodes().size());
  nvswitch_.resize(n);
  for (int v = 0; v < n; ++v) nvswitch_[v] = chassis.node(v).kind == NodeKind::kNvSwitch;
  gpu_local_.assign(n, -1);
  for (int g : chassis.gpus()) {
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
  taken_.assign(res.capacity.size(), 0.0);
}

double Router::widest(int src, int dst, unsigned families, bool nic_transit, const std::vector<double>& residual) {
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
    for (const Arc& arc : graph_.arcs(v)) {
      if (!(arc.family & families)) continue;
      int w = arc.to;
      if (w != dst && !graph_.may_pass(w, nic_transit)) continue;  // a dead end: never on a path to dst
      int wb = graph_.box(w);
      if (wb != box_a && wb != box_b && wb != -1) continue;
      const int out = out_res(arc);
      double bw = std::min(-nbw, residual[out] - taken_[out]);
      if (bw <= 0) continue;
      visit(w, bw, h + 1, out, v);
    }
  }
  if (stamp_[dst] != epoch_ || src == dst) return 0;
  for (int v = dst; v != src; v = via_from_[v]) path_.push_back(via_res_[v]);
  std::reverse(path_.begin(), path_.end());
  return best_[dst];
}

HopKind Router::kind(int a, int b) {
  auto classify = [&] {
    auto fab = finder_.gpu_fabric(a, b);
    if (fab == topo::Fabric::kAll) return HopKind::kNet;
    if (fab == topo::Fabric::kNvlink) return HopKind::kNvlink;
    return finder_.path_class(a, b).type <= p2p_level_ ? HopKind::kPcie : HopKind::kHost;
  };
  if (graph_.box(a) != graph_.box(b)) return HopKind::kNet;  // as gpu_fabric: GPUs of different boxes use the network
  const int la = gpu_local_[a], lb = gpu_local_[b];
  if (la < 0 || lb < 0) return classify();
  const int m = box_gpus_[graph_.box(a)], base = kind_offset_[graph_.box(a)];
  auto& k = kinds_[base + la * m + lb];
  if (k < 0) {
    // Sharing an NVLink fabric is symmetric: the reverse pair's answer settles NVLink peers.
    const auto reverse = kinds_[base + lb * m + la];
    k = static_cast<signed char>(reverse == static_cast<signed char>(HopKind::kNvlink) ? HopKind::kNvlink : classify());
  }
  return static_cast<HopKind>(k);
}

Route Router::route(int a, int b, const std::vector<double>& residual) {
  Route r;
  r.kind = kind(a, b);
  auto single = [&](double bottleneck) {
    r.res = path_;
    r.coeff.assign(path_.size(), 1.0);
    r.bytes_per_s = bottleneck;
  };
  switch (r.kind) {
    case HopKind::kNvlink: {
      // Stripe over parallel NVLink paths: successive widest paths, each taking its bottleneck from
      // what the next may use (taken_, cleared afterwards). coeff holds each path's bottleneck until
      // the total is known, then its share.
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
    case HopKind::kPcie: single(widest(a, b, kFamPcie | kFamSocket, false, residual)); break;
    case HopKind::kNet: single(widest(a, b, kFamPcie | kFamSocket | kFamNet, true, residual)); break;
    case HopKind::kHost: {
      int cpu = chassis_.node(a).cpu;
      int mem = cpu >= 0 ? res_.memory(cpu) : -1;
      if (mem < 0) break;
      double up = widest(a, cpu, kFamPcie, false, residual);
      if (path_.empty()) break;
      r.res = path_;
      r.res.push_back(mem);
      const std::size_t up_hops = path_.size();
      double down = widest(cpu, b, kFamPcie | kFamSocket, false, residual);
      if (path_.empty()) {
        r.res.clear();
        break;
      }
      r.res.insert(r.res.end(), path_.begin(), path_.end());
      r.coeff.assign(r.res.size(), 1.0);
      r.coeff[up_hops] = 2.0;  // written by the sender, read by the receiver
      r.bytes_per_s = std::min({up, down, residual[mem] / 2});
      break;
    }
  }
  return r;
}

std::pair<double, int> Router::nic_nearness(int gpu, int nic) {
  double bw = widest(gpu, nic, kFamPcie | kFamSocket, false, res_.capacity);
  return {bw, static_cast<int>(path_.size())};
}

const Route& Router::route_full(int a, int b) {
  auto it = full_.find(pair_key(a, b));
  if (it == full_.end()) it = full_.emplace(pair_key(a, b), route(a, b, res_.capacity)).first;
  return it->second;
}

double Router::pair_rate(int a, int b, const std::vector<double>& residual) {
  if (kind(a, b) != HopKind::kNvlink) return route(a, b, residual).bytes_per_s;
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
      auto it = std::find_if(sw.begin(), sw.end(), [&](const auto& t) { return std::get<0>(t) == arc.to; });
      if (it == sw.end()) sw.emplace_back(arc.to, r, 0.0);
      else std::get<1>(*it) += r;
    }
  }
  for (const Arc& arc : graph_.arcs(b)) {
    if (arc.family != kFamNvlink) continue;
    auto it = std::find_if(sw.begin(), sw.end(), [&](const auto& t) { return std::get<0>(t) == arc.to; });
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
