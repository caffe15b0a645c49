#include "linkwise/topo/analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <set>

namespace linkwise::topo {

namespace {

double gbps(double bytes_per_s) { return bytes_per_s / 1e9; }

std::string cpu_affinity(const Chassis& c, int cpu) {
  if (cpu < 0) return "N/A";
  const Node& n = c.node(cpu);
  if (!n.cpulist.empty())
    return n.cpulist;  // probed: the NUMA nodes' logical CPUs, SMT siblings included
  int cores = static_cast<int>(n.fig("cores"));
  if (cores <= 0) return "N/A";
  int pos = 0;
  for (int other : c.nodes_of_kind(NodeKind::kCpu)) {
    if (other == cpu) break;
    if (c.node(other).box == n.box) ++pos;
  }
  return fmt::format("{}-{}", pos * cores, (pos + 1) * cores - 1);
}

double split_flow(PathFinder& f, const std::vector<int>& gpus, std::uint64_t mask, Fabric fabric) {
  std::vector<int> a, b;
  for (std::size_t i = 0; i < gpus.size(); ++i) (mask >> i & 1 ? a : b).push_back(gpus[i]);
  return f.max_flow(a, b, fabric);
}

double split_flow(PathFinder& f, const std::vector<int>& gpus, const std::vector<char>& side,
                  Fabric fabric) {
  std::vector<int> a, b;
  for (std::size_t i = 0; i < gpus.size(); ++i) (side[i] ? a : b).push_back(gpus[i]);
  return f.max_flow(a, b, fabric);
}

void add_warnings(const Chassis& c, PathFinder& f, TopoAnalysis& out) {
  // Oversubscribed PCIe switch uplinks.
  for (int sw : c.nodes_of_kind(NodeKind::kPcieSwitch)) {
    if (c.node(sw).box > 0) continue;
    int up = f.pcie_uplink(sw);
    if (up < 0) continue;
    double down = 0;
    int count = 0;
    for (int li : c.incident(sw)) {
      const Link& l = c.link(li);
      if (li == up || l.family() != hw::LinkFamily::kPcie) continue;
      down += l.line_bytes_per_s();
      ++count;
    }
    double upbw = c.link(up).line_bytes_per_s();
    if (down > upbw * 1.0001)
      out.warnings.push_back(
          {"oversubscribed-uplink",
           fmt::format(
               "{} uplink ({} x{}, {:.1f} GB/s) serves {} downstream links of {:.1f} GB/s in all: "
               "{:.2f}:1 oversubscribed",
               c.node(sw).name, c.link(up).tech->id, c.link(up).width, gbps(upbw), count,
               gbps(down), down / upbw)});
  }
  // GPUs without a NIC under their switch.
  auto nics = c.nodes_of_kind(NodeKind::kNic);
  for (int g : c.gpus()) {
    if (c.node(g).box > 0) break;
    std::string best_cls;
    std::string best_nic;
    int best_rank = 99;
    for (int n : nics) {
      if (c.node(n).box != c.node(g).box) continue;
      PathClass pc = f.path_class(g, n);
      int rank = static_cast<int>(pc.type);
      if (rank < best_rank) {
        best_rank = rank;
        best_cls = pc.str();
        best_nic = c.display_name(n);
      }
    }
    if (best_nic.empty()) continue;
    if (best_cls != "PIX" && best_cls != "PXB")
      out.warnings.push_back(
          {"gpu-nic-not-under-switch",
           fmt::format(
               "{} has no NIC {}; its nearest, {}, is {}: GPUDirect RDMA traffic goes through the "
               "CPU{}",
               c.display_name(g),
               c.node(f.pcie_parent(g) >= 0 ? f.pcie_parent(g) : g).kind == NodeKind::kPcieSwitch
                   ? "under its PCIe switch"
                   : "under a PCIe switch with it (it sits on a CPU root port)",
               best_nic, best_cls, best_cls == "SYS" ? " and across the socket link" : "")});
  }
  // GPU pairs without NVLink whose traffic crosses a socket link.
  int sys_pairs = 0;
  std::string example;
  for (const auto& p : out.pairs)
    if (p.cls == "SYS" && c.node(p.a).box == 0 && c.node(p.b).box == 0 &&
        c.node(p.a).cpu != c.node(p.b).cpu) {
      if (++sys_pairs == 1) example = p.name_a + "-" + p.name_b;
    }
  if (sys_pairs > 0) {
    std::string socket;
    for (const auto& l : c.links())
      if (l.family() == hw::LinkFamily::kSocket && c.node(l.a).box == 0) {
        socket =
            fmt::format("{} x{}, {:.1f} GB/s", l.tech->id, l.width, gbps(l.line_bytes_per_s()));
        break;
      }
    out.warnings.push_back(
        {"cross-socket",
         fmt::format("{} GPU pair{} (e.g. {}){} have no NVLink and cross the socket link{}",
                     sys_pairs, sys_pairs == 1 ? "" : "s", example,
                     c.boxes() > 1 ? " in each box" : "",
                     socket.empty() ? "" : " (" + socket + ")")});
  }
  // Links that trained below their design.
  for (const auto& l : c.links())
    if (l.below_design())
      out.warnings.push_back(
          {"trained-below-spec",
           fmt::format("link {} - {} trained at Gen{} x{}, designed {} x{}; {}", c.node(l.a).name,
                       c.node(l.b).name, l.trained_gen ? l.trained_gen : l.tech->generation,
                       l.trained_width ? l.trained_width : l.width, l.tech->id, l.width,
                       c.rates() == LinkRates::kAsBuilt
                           ? "figures here use the trained rate (--as-designed: the design's)"
                           : "figures here use the design rate (--as-designed)")});
}

}  // namespace

double bisection_bytes_per_s(const Chassis& c, PathFinder& f, Fabric fabric, bool* exact) {
  const auto& gpus = c.gpus();
  const std::size_t n = gpus.size();
  if (exact) *exact = true;
  if (n < 2) return 0;
  const std::size_t half = n / 2;
  double best = std::numeric_limits<double>::infinity();
  if (n <= 16) {
    // GPU 0 stays on side A, so each split is tried once.
    for (std::uint64_t mask = 1; mask < (1ull << n); mask += 2)
      if (static_cast<std::size_t>(std::popcount(mask)) == half ||
          (n % 2 == 1 && static_cast<std::size_t>(std::popcount(mask)) == half + 1))
        best = std::min(best, split_flow(f, gpus, mask, fabric));
    return best;
  }
  if (exact) *exact = false;
  std::vector<std::vector<char>> candidates;
  std::vector<char> side(n);
  for (std::size_t i = 0; i < n; ++i) side[i] = i < half;
  candidates.push_back(side);  // contiguous halves (boxes in two halves when GPUs are box-ordered)
  for (std::size_t i = 0; i < n; ++i) side[i] = i % 2 == 0;
  candidates.push_back(side);  // interleaved
  std::map<int, std::vector<std::size_t>> by_box;
  for (std::size_t i = 0; i < n; ++i) by_box[c.node(gpus[i]).box].push_back(i);
  std::fill(side.begin(), side.end(), 0);
  for (auto& [box, idx] : by_box)
    for (std::size_t k = 0; k < idx.size() / 2; ++k) side[idx[k]] = 1;
  if (static_cast<std::size_t>(std::count(side.begin(), side.end(), 1)) == half)
    candidates.push_back(side);  // each box split in two
  // Random splits only while the graph is small enough for them to be cheap: on many identical
  // boxes a structured split is the worst one anyway (the network between box halves is the
  // narrowest cut).
  std::mt19937 rng(12345);
  std::vector<std::size_t> order(n);
  const int random_splits = c.boxes() <= 8 ? 16 : 0;
  for (int r = 0; r < random_splits; ++r) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    std::fill(side.begin(), side.end(), 0);
    for (std::size_t k = 0; k < half; ++k) side[order[k]] = 1;
    candidates.push_back(side);
  }
  for (const auto& cand : candidates) best = std::min(best, split_flow(f, gpus, cand, fabric));
  return best;
}

namespace {

// The index of each GPU within its box, and the GPUs of box 0 and box 1.
struct BoxLayout {
  std::vector<int> local;  ///< per position in chassis.gpus(): index within its box
  std::vector<int> box0, box1;
};

BoxLayout box_layout(const Chassis& c) {
  BoxLayout b;
  std::map<int, int> count;
  for (int g : c.gpus()) {
    int box = c.node(g).box;
    b.local.push_back(count[box]++);
    if (box == 0) b.box0.push_back(g);
    if (box == 1) b.box1.push_back(g);
  }
  return b;
}

// The NICs or NVMe drives of one box, in order.
std::vector<int> peers_of_box(const Chassis& c, int box, NodeKind kind) {
  std::vector<int> out;
  for (int n : c.nodes_of_kind(kind))
    if (c.node(n).box == box) out.push_back(n);
  return out;
}

PairInfo pair_info(const Chassis& c, PathFinder& f, int a, int b) {
  PairInfo p;
  p.a = a;
  p.b = b;
  p.name_a = c.display_name(a);
  p.name_b = c.display_name(b);
  p.cls = f.path_class(a, b).str();
  Fabric fabric = f.gpu_fabric(a, b);
  Path path = f.widest_path(a, b, fabric);
  p.path_bytes_per_s = path.bottleneck_bytes_per_s;
  p.hops = static_cast<int>(path.links.size());
  p.path_links = path.links;
  p.maxflow_bytes_per_s = f.max_flow(a, b, fabric);
  return p;
}

// The link of `c` that joins the same nodes (by name) as link `l` of `model`.
int same_link(const Chassis& c, const Chassis& model, int l) {
  const Link& ml = model.link(l);
  int a = c.find(model.node(ml.a).name), b = c.find(model.node(ml.b).name);
  for (int li : c.incident(a))
    if (c.link(li).other(a) == b && c.link(li).tech == ml.tech) return li;
  return -1;
}

// Pair figures come from `model` (the chassis itself, or a copy with two boxes), by local index.
void add_pairs(const Chassis& c, const Chassis& model, PathFinder& f, const TopoOptions& options,
               TopoAnalysis& out) {
  const auto& gpus = c.gpus();
  BoxLayout layout = box_layout(c), mlayout = box_layout(model);
  const std::size_t per_box = mlayout.box0.size();
  std::vector<std::vector<PairInfo>> inside(per_box, std::vector<PairInfo>(per_box));
  std::vector<std::vector<PairInfo>> across(per_box, std::vector<PairInfo>(per_box));
  auto figures = [&](int a, int b) {
    PairInfo p = pair_info(model, f, a, b);
    if (&model != &c)
      for (int& l : p.path_links) l = same_link(c, model, l);
    return p;
  };
  for (std::size_t i = 0; i < per_box; ++i)
    for (std::size_t j = i + 1; j < per_box; ++j)
      inside[i][j] = figures(mlayout.box0[i], mlayout.box0[j]);
  if (!mlayout.box1.empty())
    for (std::size_t i = 0; i < per_box; ++i)
      for (std::size_t j = 0; j < per_box; ++j)
        across[i][j] = figures(mlayout.box0[i], mlayout.box1[j]);
  out.pairs_complete = static_cast<int>(gpus.size()) <= options.max_listed_gpus;
  for (std::size_t x = 0; x < gpus.size(); ++x)
    for (std::size_t y = x + 1; y < gpus.size(); ++y) {
      int bx = c.node(gpus[x]).box, by = c.node(gpus[y]).box;
      if (!out.pairs_complete && !(bx == 0 && by <= 1)) continue;
      const PairInfo& model = bx == by ? inside[layout.local[x]][layout.local[y]]
                                       : across[layout.local[x]][layout.local[y]];
      PairInfo p = model;
      p.a = gpus[x];
      p.b = gpus[y];
      p.name_a = c.display_name(p.a);
      p.name_b = c.display_name(p.b);
      if (bx != 0 || by > 1)
        p.path_links.clear();  // links of box 0 and 1 only; the copy has its own
      out.pairs.push_back(std::move(p));
    }
}

}  // namespace

TopoAnalysis analyse(const Chassis& c, const TopoOptions& options) {
  TopoAnalysis out;
  out.chassis = c.name();
  out.boxes = c.boxes();
  PathFinder f(c);
  // Boxes are identical copies on a symmetric network: pairs and per-GPU figures are the same in a
  // copy of two boxes, whose graphs are far smaller than those of hundreds of boxes.
  std::optional<Chassis> two;
  if (c.boxes() > 2) two = build_chassis(c.spec(), hw::Catalog::builtin(), 2, true, c.rates());
  const Chassis& model = two ? *two : c;
  std::optional<PathFinder> model_finder;
  if (two) model_finder.emplace(*two);
  PathFinder& mf = two ? *model_finder : f;

  std::vector<int> devices = c.gpus();
  for (int n : c.nodes_of_kind(NodeKind::kNic)) devices.push_back(n);
  for (int n : c.nodes_of_kind(NodeKind::kNvme)) devices.push_back(n);
  if (static_cast<int>(devices.size()) > options.max_matrix_devices) {
    out.matrix_complete = false;
    std::erase_if(devices, [&](int d) { return c.node(d).box > 1; });
  }
  for (int d : devices) out.devices.push_back(c.display_name(d));
  out.matrix.assign(devices.size(), std::vector<std::string>(devices.size()));
  for (std::size_t i = 0; i < devices.size(); ++i)
    for (std::size_t j = i; j < devices.size(); ++j)
      out.matrix[i][j] = out.matrix[j][i] = f.path_class(devices[i], devices[j]).str();

  // Per GPU: computed for box 0, copied to the other boxes with their own devices' names.
  BoxLayout layout = box_layout(c);
  std::vector<GpuInfo> box0;
  for (std::size_t x = 0; x < c.gpus().size(); ++x) {
    int g = c.gpus()[x];
    const Node& n = c.node(g);
    std::vector<int> nics = peers_of_box(c, n.box, NodeKind::kNic),
                     nvmes = peers_of_box(c, n.box, NodeKind::kNvme);
    GpuInfo info;
    if (n.box == 0) {
      // Inside box 0, which `model` holds with the same names.
      int mg = model.find(n.name), mcpu = n.cpu >= 0 ? model.find(c.node(n.cpu).name) : -1;
      info.part = n.part->id;
      if (mcpu >= 0) {
        double flow = mf.max_flow(mg, mcpu, Fabric::kHost);
        info.host_bytes_per_s = std::min(flow, c.node(n.cpu).fig("memory_bytes_per_s", flow));
      }
      for (int d : nics) {
        int md = model.find(c.node(d).name);
        info.nics.push_back({"", mf.path_class(mg, md).str(), mf.max_flow(mg, md, Fabric::kHost)});
      }
      for (int d : nvmes) {
        int md = model.find(c.node(d).name);
        info.nvmes.push_back({"", mf.path_class(mg, md).str(), mf.max_flow(mg, md, Fabric::kHost)});
      }
    } else {
      info = box0.at(layout.local[x]);
    }
    for (std::size_t i = 0; i < nics.size(); ++i) info.nics[i].name = c.display_name(nics[i]);
    for (std::size_t i = 0; i < nvmes.size(); ++i) info.nvmes[i].name = c.display_name(nvmes[i]);
    info.node = g;
    info.name = c.display_name(g);
    info.numa = n.numa;
    info.cpu = n.cpu >= 0 ? c.display_name(n.cpu) : "";
    // A GPU's own NUMA node's CPUs where probed (sub-NUMA clustering), else its socket's.
    info.cpu_affinity = n.cpulist.empty() ? cpu_affinity(c, n.cpu) : n.cpulist;
    if (n.box == 0) box0.push_back(info);
    out.gpus.push_back(std::move(info));
  }

  if (options.pairs) add_pairs(c, model, mf, options, out);
  if (options.bisection && c.gpus().size() >= 2) {
    out.bisection_bytes_per_s = bisection_bytes_per_s(c, f, Fabric::kAll, &out.bisection_exact);
    out.bisection_nvlink_bytes_per_s = bisection_bytes_per_s(c, f, Fabric::kNvlink);
  }
  for (const auto& n : c.nodes()) {
    if (n.box > 0) continue;
    int avail = n.kind == NodeKind::kCpu          ? static_cast<int>(n.fig("pcie_lanes"))
                : n.kind == NodeKind::kPcieSwitch ? static_cast<int>(n.fig("lanes"))
                                                  : 0;
    if (avail <= 0) continue;
    int used = 0;
    for (int li : c.incident(n.index))
      if (c.link(li).family() == hw::LinkFamily::kPcie) used += c.link(li).width;
    out.lanes.push_back({n.name, n.part->id, used, avail});
  }
  add_warnings(c, f, out);
  out.budgets = check_budgets(c);
  return out;
}

}  // namespace linkwise::topo
