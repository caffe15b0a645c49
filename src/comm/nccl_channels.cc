// NCCL's ring channel count and the host-staged rings' cap (nccl_channels.h).
#include "nccl_channels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "impl.h"
#include "linkwise/topo/chassis.h"

namespace linkwise::comm::detail {

namespace {

// NCCL src/graph/search.cc: speedArrayIntra, sm90SpeedArrayIntra, sm100SpeedArrayIntra (GB/s). One
// host: ncclTopoTrimSystem removes the NET nodes when every rank is on it, so the intra arrays.
constexpr double kIntra[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                             9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
constexpr double kSm90Intra[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
constexpr double kSm100Intra[] = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                  40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
// The same file's speedArrayInter, sm90SpeedArrayInter, sm100SpeedArrayInter: the arrays of a
// search whose system keeps NET nodes (ranks on several hosts).
constexpr double kInter[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                             7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr double kSm90Inter[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr double kSm100Inter[] = {96.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0,
                                  17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr int kGraphMaxChannels = 16;  // MAXCHANNELS / 2 (src/init.cc, ringGraph.maxChannels)
constexpr int kMaxChannels = 32;       // MAXCHANNELS (src/include/device.h)

std::span<const double> speeds_of(NcclSpeeds s, bool inter) {
  switch (s) {
    case NcclSpeeds::kHopper:
      return inter ? std::span<const double>(kSm90Inter) : kSm90Intra;
    case NcclSpeeds::kBlackwell:
      return inter ? std::span<const double>(kSm100Inter) : kSm100Intra;
    case NcclSpeeds::kPreHopper:
      break;
  }
  return inter ? std::span<const double>(kInter) : kIntra;
}

// Channels of one ring order that fit at speed s: every link direction keeps load·s·c <= width.
int fit_one(const std::vector<NcclLinkLoad>& loads, double s) {
  int c = kGraphMaxChannels;
  for (const auto& l : loads)
    if (l.load > 0)
      c = std::min(c, static_cast<int>(std::floor(l.width_GBps / (l.load * s) + 1e-6)));
  return std::max(c, 0);
}

// The orders after the first, each as the link directions it crosses: (index into the loads,
// crossings per channel) where above 0. The reverse order first (where any reverse load is given),
// then each further order in turn. Built once per search: the speeds' fits read them.
struct Orders {
  std::vector<std::pair<std::size_t, double>> first;  // the first order's
  std::vector<std::pair<std::size_t, double>> all;    // order o's: all[start[o]] to all[start[o+1]]
  std::vector<std::size_t> start;                     // empty: no order after the first
  std::vector<double> dense;  // order o's crossings as a row of loads.size(), rows in order
};

Orders orders_of(const std::vector<NcclLinkLoad>& loads) {
  Orders o;
  bool reverse = false;
  std::size_t others = 0;
  for (const auto& l : loads) {
    reverse = reverse || l.reverse_load > 0;
    others = std::max(others, l.other_loads.size());
  }
  for (std::size_t k = 0; k < loads.size(); ++k)
    if (loads[k].load > 0) o.first.emplace_back(k, loads[k].load);
  if (!reverse && others == 0) return o;
  const std::size_t n = loads.size();
  o.dense.assign((1 + others) * n, 0.0);
  for (std::size_t j = 0; j <= others; ++j) {
    o.start.push_back(o.all.size());
    for (std::size_t k = 0; k < n; ++k) {
      const auto& l = loads[k];
      const double x = j == 0                         ? l.reverse_load
                       : j - 1 < l.other_loads.size() ? l.other_loads[j - 1]
                                                      : 0.0;
      if (x > 0) {
        o.all.emplace_back(k, x);
        o.dense[j * n + k] = x;
      }
    }
  }
  o.start.push_back(o.all.size());
  return o;
}

// Channels that fit at speed s: a of the first order and, where reverse (or further) loads are
// given, as many of the reverse order, then of each further order in turn, as what the earlier
// channels leave carries (the most in all over a >= 1: NCCL's first channel takes the first order,
// its PCI order). `orders`: orders_of(loads).
int fit(const std::vector<NcclLinkLoad>& loads, const Orders& orders, double s) {
  const int one = fit_one(loads, s);
  if (orders.start.empty()) return one;
  // Channels of an order crossing `x` that fit in what `used` leaves, at most `room`; adds them.
  // An order that crosses nothing takes all the room; none (room 0) leaves `used` as it is. The
  // count is a minimum over the order's link directions, so the scan stops at the first that fits
  // none, and starts with the direction that stopped the last scan (`full`, a dense row per
  // order in `orders.dense`): once the first orders have filled a link, each later order crossing
  // it is turned away in one test.
  std::vector<double> used(loads.size());
  std::size_t full = loads.size();
  auto fits_on = [&](std::size_t k, double v) {
    return static_cast<int>(std::floor((loads[k].width_GBps - used[k]) / (v * s) + 1e-6));
  };
  auto take = [&](std::span<const std::pair<std::size_t, double>> x, const double* dense,
                  int room) {
    if (room <= 0) return 0;
    if (dense && full < loads.size() && dense[full] > 0 && fits_on(full, dense[full]) <= 0)
      return 0;
    int c = room;
    for (const auto& [k, v] : x) {
      c = std::min(c, fits_on(k, v));
      if (c <= 0) {
        full = k;
        return 0;
      }
    }
    for (const auto& [k, v] : x) used[k] += c * s * v;
    return c;
  };
  int best = one;
  for (int a = 1; a <= one && best < kGraphMaxChannels; ++a) {
    std::fill(used.begin(), used.end(), 0.0);
    int total = take(orders.first, nullptr, a);
    for (std::size_t o = 0; o + 1 < orders.start.size(); ++o)
      total += take({orders.all.data() + orders.start[o], orders.all.data() + orders.start[o + 1]},
                    orders.dense.data() + o * loads.size(), kGraphMaxChannels - total);
    best = std::max(best, std::min(kGraphMaxChannels, total));
  }
  return best;
}

}  // namespace

NcclRingGraph nccl_ring_search(const std::vector<NcclLinkLoad>& loads, double max_width_GBps,
                               NcclSpeeds speeds, bool inter, double total_width_GBps) {
  const auto sp = speeds_of(speeds, inter);
  const int n = static_cast<int>(sp.size());
  int i = 0;
  while (i < n - 1 && (sp[i] > max_width_GBps || sp[i] > total_width_GBps)) ++i;
  const Orders orders = orders_of(loads);
  NcclRingGraph best;
  bool same = true;  // the kept graph was found with the same order in every channel
  auto keep = [&](int c, double s, bool same_order) {
    if (c >= 1 && c * s > best.channels * best.speed_GBps) best = {c, s}, same = same_order;
  };
  // The kept graph carries the GPU's whole width (system->totalBw): "Optimal solution, stop here".
  auto optimal = [&] { return best.channels * best.speed_GBps >= total_width_GBps; };
  // Pass 1: at each speed the same order in every channel, then (unless that graph is already
  // optimal) any order per channel; step the speed down while the next is above 0.49 of the kept
  // graph's.
  for (;;) {
    keep(fit_one(loads, sp[i]), sp[i], true);
    if (optimal()) break;
    keep(fit(loads, orders, sp[i]), sp[i], false);
    if (optimal()) break;
    if (best.channels == kGraphMaxChannels && best.speed_GBps == max_width_GBps) break;
    if (i < n - 1 && (best.channels == 0 || sp[i + 1] / best.speed_GBps > 0.49))
      ++i;
    else
      break;
  }
  if (best.channels == 0) return {1, 0.1};  // "falling back to simple order"
  // Pass 2: a higher speed at the same channel count, searched as the kept graph was (its
  // sameChannels).
  auto fit_as_kept = [&](double s) { return same ? fit_one(loads, s) : fit(loads, orders, s); };
  i = 0;
  while (i < n - 1 && sp[i] > best.speed_GBps) ++i;
  while (i > 0 && fit_as_kept(sp[i - 1]) >= best.channels) best.speed_GBps = sp[--i];
  // Duplication of fast graphs (ncclTopoDupChannels: bw >= 25 GB/s; on compute capability above
  // 8.0 not below 50 GB/s with more than four channels; the Hopper and Blackwell arrays here, the
  // pre-Hopper array standing for 8.0 and older).
  const bool cc_above_80 = speeds != NcclSpeeds::kPreHopper;
  if (best.speed_GBps >= 25.0 && !(cc_above_80 && best.speed_GBps < 50.0 && best.channels > 4)) {
    const int dup = std::min(2 * best.channels, kGraphMaxChannels);
    best.speed_GBps /= (dup + best.channels - 1) / best.channels;
    best.channels = dup;
  }
  return best;
}

double shm_channel_bytes_per_s(int generation) {
  return generation <= 3 ? kShmChannelGen3BytesPerS : kShmChannelBytesPerS;
}

double shm_channel_one_way_bytes_per_s(int generation) {
  return generation <= 3 ? kShmChannelOneWayGen3BytesPerS : 0.0;
}

int nccl_ring_channels(const NcclRingGraph& graph, int min_channels, int max_channels) {
  int c = std::min(kMaxChannels, 2 * graph.channels);
  c = std::max(c, min_channels);
  return std::max(1, std::min({c, max_channels, kMaxChannels}));
}

}  // namespace linkwise::comm::detail

// ---------------------------------------------------------------- on a communicator

namespace linkwise::comm {

namespace {

// The speed array and NVLink figures NCCL takes for a GPU of the catalog's architecture `arch`.
detail::NcclSpeeds speeds_of_arch(const std::string& arch) {
  return arch == "blackwell" ? detail::NcclSpeeds::kBlackwell
         : arch == "hopper"  ? detail::NcclSpeeds::kHopper
                             : detail::NcclSpeeds::kPreHopper;
}

// NCCL's figure for a PCIe link the host does not report, GB/s per direction (below).
constexpr double kUnreportedPciGBps = 12.0;

// NCCL's width of one link direction, GB/s (nccl_channels.h): its technology's nccl_bw_GBps
// (data/catalog.yaml) per lane or link, or for the whole link between two CPUs.
double nccl_width(const topo::Link& l) {
  const auto& t = *l.tech;
  switch (t.family) {
    case hw::LinkFamily::kPcie:
      // A link the host does not report (a VM: link_speed "", link_width 0 in NCCL's topology):
      // NCCL takes width 0 as x16 and an unknown speed as its fallback code, 60 (src/graph/topo.cc,
      // ncclTopoAddPci and kvDictPciGen's default): 16 x 60 / 80 = 12 GB/s.
      if (!l.reported) return kUnreportedPciGBps;
      return l.width * t.nccl_bw_GBps.value;
    case hw::LinkFamily::kNvlink:
      return l.width * t.nccl_bw_GBps.value;
    case hw::LinkFamily::kSocket:
      return t.nccl_bw_GBps.value;  // one figure per CPU pair
    case hw::LinkFamily::kNetwork:  // the NET node's bw: the NIC's port speed (ncclTopoAddNet)
      return l.line_bytes_per_s() / 1e9;
    default:
      return 1e9;  // not a constraint of the search on one host
  }
}

}  // namespace

void Communicator::Impl::count_nccl_channels() {
  nccl_channels = 0;
  shm_ring_cap = 0;
  shm_one_way_cap = 0;
  if (rings.empty() || ring_routes.empty()) return;
  const auto& hops = ring_routes[0];
  bool staged = false;
  for (const auto& h : hops) staged = staged || h.kind == detail::HopKind::kHost;
  if (!staged) return;
  const int L = res.links;
  const auto& links = chassis->links();
  // The search's speed array: the smallest architecture among the ranks (the enum is in order).
  auto speeds = detail::NcclSpeeds::kBlackwell;
  for (int g : ranks)
    speeds = std::min(speeds, speeds_of_arch(chassis->node(g).part->attr("arch")));
  auto width_of = [&](int r) { return nccl_width(links[r / 2]); };
  // system->totalBw (src/graph/search.cc getTotalBw): per GPU the larger of its PCIe link's width
  // (the link to its PCIe parent) and the sum of its NVLinks' widths; the widest GPU's.
  double total_width = 0;
  for (int g : ranks) {
    double nvlink = 0, pcie = 0;
    for (int l : chassis->incident(g)) {
      const auto& link = links[static_cast<std::size_t>(l)];
      if (link.family() == hw::LinkFamily::kNvlink) nvlink += nccl_width(link);
    }
    if (const int up = chassis->node(g).pcie_uplink; up >= 0)
      pcie = nccl_width(links[static_cast<std::size_t>(up)]);
    total_width = std::max(total_width, std::max(nvlink, pcie));
  }
  auto from_node = [&](int r) { return r % 2 == 0 ? links[r / 2].a : links[r / 2].b; };
  auto intel_phb = [&](const detail::Route& h, int a) {
    if (h.kind != detail::HopKind::kHost) return false;
    for (int r : h.res)
      if (r < 2 * L && links[r / 2].family() == hw::LinkFamily::kSocket) return false;  // SYS
    const int cpu = chassis->node(a).cpu;
    return cpu >= 0 && chassis->node(cpu).part->vendor == "Intel";
  };
  const auto& order = rings[0].order;
  // Crossings per channel of hop h (from GPU `from`) on each link direction r (2 x link + 0 for
  // a->b, 1 for b->a), added to load[r] and, where `reverse` is given, to reverse[r ^ 1]: the
  // reverse order's hop from order[i+1] to order[i] crosses the same links the other way with the
  // same load (an Intel PHB hop joins two GPUs of one CPU either way; a network hop enters and
  // leaves the boxes by the same NICs).
  // hop_crossings calls `add(r, x)` for each link direction r and its crossings x, in route order.
  auto hop_crossings = [&](const detail::Route& h, int from, auto add) {
    const double overhead = intel_phb(h, from) ? 1.2 : 1.0;  // INTEL_P2P_OVERHEAD
    for (std::size_t j = 0; j < h.res.size(); ++j) {
      const int r = h.res[j];
      if (r >= 2 * L) continue;
      const auto fam = links[r / 2].family();
      add(r, fam == hw::LinkFamily::kNvlink ? h.coeff[j]
             : fam == hw::LinkFamily::kPcie ? overhead
                                            : 1.0);
    }
  };
  auto add_hop = [&](const detail::Route& h, int from, std::vector<double>& load,
                     std::vector<double>* reverse) {
    hop_crossings(h, from, [&](int r, double x) {
      load[r] += x;
      if (reverse) (*reverse)[r ^ 1] += x;
    });
  };
  // Further orders NCCL's search can give channels on one host (sameChannels 0: any next GPU per
  // channel, src/graph/search.cc ncclTopoSearchRec): the first ring's islands, the runs of ranks
  // its hops not staged through host memory join, in every other cyclic order and direction
  // (docs/collectives.md, "Channels through host memory"). Two to four islands; per order, its
  // crossings per link direction.
  //
  // An order whose crossings equal an earlier further order's is left out: the search gives it no
  // channel. The earlier one took what fits (nccl_ring_search's fit): either all the room left
  // (then none is left for any later order) or as many as its binding link direction carries, which
  // leaves that direction under one more channel's load at that speed (the fit's 1e-6 allowance of
  // a channel is far above the rounding of the sums), and nothing frees load in between. Turning
  // an island round may cross the same links (a switch's uplink carries one channel in and one out
  // either way); on pcie-8gpu-gen4 63 of the 94 further orders differ (Intel PHB hops load their
  // PCIe links 6/5 one way only).
  std::vector<double> other_orders;  // m orders' rows of 2L crossings, one after the other
  std::size_t m = 0;
  if (groups.size() == 1) {
    const int n = static_cast<int>(order.size());
    std::vector<int> shm;  // hops staged through host memory, in ring order
    for (int i = 0; i < n; ++i)
      if (hops[static_cast<std::size_t>(i)].kind == detail::HopKind::kHost) shm.push_back(i);
    const int k = static_cast<int>(shm.size());
    if (k >= 2 && k <= 4) {
      std::vector<std::vector<int>> islands;  // island j: order[shm[j-1]+1 .. shm[j]], cyclically
      for (int j = 0; j < k; ++j) {
        std::vector<int> isl;
        for (int i = (shm[(j + k - 1) % k] + 1) % n;; i = (i + 1) % n) {
          isl.push_back(order[i]);
          if (i == shm[j]) break;
        }
        islands.push_back(std::move(isl));
      }
      // The first order and its reverse are searched already: a cycle written from its smallest
      // node as either is left out. (A cycle met twice, as where an island of one rank is turned
      // round, crosses the same links: the second is left out below.)
      auto canonical = [](std::vector<int>& c) {
        std::rotate(c.begin(), std::min_element(c.begin(), c.end()), c.end());
      };
      std::vector<int> first(order), back(order.rbegin(), order.rend()), cyc, key;
      canonical(first);
      canonical(back);
      const auto row_len = static_cast<std::size_t>(2 * L);
      std::vector<double> load(row_len);
      // The rows kept, each with a hash of its crossings' bits: a row is left out only where it
      // equals a kept one element for element (the hash only spares the comparisons).
      std::vector<std::pair<std::uint64_t, std::size_t>> kept;
      auto row_hash = [&] {
        std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over each element's bits
        for (double x : load) {
          const double v = x == 0 ? 0.0 : x;  // -0.0 equals 0.0: one hash for both
          std::uint64_t b;
          std::memcpy(&b, &v, sizeof b);
          h = (h ^ b) * 1099511628211ULL;
        }
        return h;
      };
      // Per hop from GPU a to GPU b (n x n by place in the first order): its crossings, (link
      // direction, per channel) in route order, as add_hop adds them; each pair routed once.
      std::vector<int> place(chassis->nodes().size(), -1);
      for (int i = 0; i < n; ++i) place[static_cast<std::size_t>(order[i])] = i;
      std::vector<std::pair<int, double>> crossings;  // every routed pair's, one after the other
      // Per pair: where its crossings start and end in `crossings`; -1: not routed yet.
      std::vector<std::pair<int, int>> at_pair(static_cast<std::size_t>(n * n), {-1, -1});
      auto crossings_of = [&](int a, int b) {
        auto& [lo, hi] = at_pair[static_cast<std::size_t>(place[a] * n + place[b])];
        if (lo < 0) {
          lo = static_cast<int>(crossings.size());
          hop_crossings(router->route_full(a, b), a,
                        [&](int r, double x) { crossings.emplace_back(r, x); });
          hi = static_cast<int>(crossings.size());
        }
        return std::span<const std::pair<int, double>>(crossings.data() + lo,
                                                       crossings.data() + hi);
      };
      std::vector<int> perm(k - 1);
      for (int j = 0; j < k - 1; ++j) perm[j] = j + 1;
      do {
        for (int dirs = 0; dirs < (1 << k); ++dirs) {
          cyc.clear();
          for (int j = 0; j < k; ++j) {
            const int which = j == 0 ? 0 : perm[j - 1];
            const auto& isl = islands[which];
            if (dirs >> which & 1)
              for (auto it = isl.rbegin(); it != isl.rend(); ++it) cyc.push_back(*it);
            else
              for (int g : isl) cyc.push_back(g);
          }
          key = cyc;
          canonical(key);
          if (key == first || key == back) continue;
          std::fill(load.begin(), load.end(), 0.0);
          for (int i = 0; i < n; ++i)
            for (const auto& [r, x] : crossings_of(cyc[i], cyc[(i + 1) % n])) load[r] += x;
          const std::uint64_t h = row_hash();
          bool seen = false;
          for (const auto& [kh, o] : kept)
            if (kh == h && std::equal(load.begin(), load.end(),
                                      other_orders.begin() + static_cast<long>(o * row_len))) {
              seen = true;
              break;
            }
          if (seen) continue;
          kept.emplace_back(h, m++);
          other_orders.insert(other_orders.end(), load.begin(), load.end());
        }
      } while (std::next_permutation(perm.begin(), perm.end()));
    }
  }
  // The search over the first ring's hops that `take` keeps: per link direction, crossings per
  // channel; the widest path among them (system->maxBw).
  auto search = [&](auto take, bool inter) {
    // Per link direction: crossings per channel of the ring's order, of the reverse order and, on
    // one host, of the further orders above.
    std::vector<double> load(2 * L, 0.0), reverse(2 * L, 0.0);
    for (std::size_t i = 0; i < hops.size(); ++i)
      if (take(hops[i])) add_hop(hops[i], order[i], load, &reverse);
    const bool others = !inter && m > 0;
    auto other = [&](std::size_t o, int r) {
      return other_orders[o * static_cast<std::size_t>(2 * L) + static_cast<std::size_t>(r)];
    };
    std::vector<detail::NcclLinkLoad> loads;
    for (int r = 0; r < 2 * L; ++r) {
      bool used = load[r] > 0 || reverse[r] > 0;
      for (std::size_t o = 0; !used && others && o < m; ++o) used = other(o, r) > 0;
      if (!used) continue;
      detail::NcclLinkLoad l{width_of(r), load[r], reverse[r], {}};
      if (others) {
        l.other_loads.resize(m);
        for (std::size_t o = 0; o < m; ++o) l.other_loads[o] = other(o, r);
      }
      loads.push_back(std::move(l));
    }
    // The widest GPU-to-GPU path (system->maxBw): NCCL takes it over every pair of ranks; here over
    // the ring's own hops (NVLink peers: their links out of the sender; the others: the narrowest
    // link direction on the way), which holds the widest pair on the machines of
    // docs/VALIDATION.md and spares a route per pair. Several hosts: NCCL takes the widest
    // GPU-to-NIC path instead (ncclTopoSearchInit), here the narrowest link direction of the
    // ring's network hops.
    double max_width = 0;
    for (std::size_t i = 0; i < hops.size(); ++i) {
      const auto& rt = hops[i];
      if (!take(rt) || inter != (rt.kind == detail::HopKind::kNet)) continue;
      double w = rt.kind == detail::HopKind::kNvlink ? 0 : 1e18;
      for (int r : rt.res) {
        if (r >= 2 * L) continue;
        if (rt.kind == detail::HopKind::kNvlink) {
          if (from_node(r) == order[i]) w += width_of(r);
        } else {
          w = std::min(w, width_of(r));
        }
      }
      if (w < 1e18) max_width = std::max(max_width, w);
    }
    return detail::nccl_ring_channels(
        detail::nccl_ring_search(loads, max_width, speeds, inter, total_width), opt.min_channels,
        opt.max_channels);
  };
  auto in_box = [](const detail::Route& h) { return h.kind != detail::HopKind::kNet; };
  // One box: the intra search. Several: NCCL keeps the NET nodes and searches with the inter
  // speed arrays, each channel entering a box from a NIC, running the box's chain of SHM hops and
  // leaving to a NIC, all at one speed (ncclTopoCompute: bwIntra = bwInter). The SHM hops inside a
  // box carry as many channels as on one host at most: the channel count is the smaller of that
  // search and the intra search over the same in-box hops.
  nccl_channels = search(in_box, false);
  if (groups.size() > 1)
    nccl_channels =
        std::min(nccl_channels, search([](const detail::Route&) { return true; }, true));
  // What one channel moves: the figure of the slowest PCIe generation its SHM hops cross.
  // One way only (no GPU both writing and reading host buffers): the one-way figure of the slowest
  // generation that has one; none (0) where no hop crosses such a link.
  double per_channel = detail::kShmChannelBytesPerS, one_way = 0;
  for (const auto& h : hops) {
    if (h.kind != detail::HopKind::kHost) continue;
    for (int r : h.res)
      if (r < 2 * L && links[r / 2].family() == hw::LinkFamily::kPcie) {
        const int gen = links[r / 2].tech->generation;
        per_channel = std::min(per_channel, detail::shm_channel_bytes_per_s(gen));
        if (double o = detail::shm_channel_one_way_bytes_per_s(gen); o > 0)
          one_way = one_way > 0 ? std::min(one_way, o) : o;
      }
  }
  shm_ring_cap = nccl_channels * per_channel;
  shm_one_way_cap = nccl_channels * one_way;
}

}  // namespace linkwise::comm
