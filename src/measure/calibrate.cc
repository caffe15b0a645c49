#include "linkwise/measure/calibrate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include "linkwise/comm/collective.h"
#include "linkwise/comm/predict.h"
#include "linkwise/hw/catalog.h"
#include "linkwise/measure/stats.h"
#include "linkwise/topo/paths.h"
#include "linkwise/util/text.h"

namespace linkwise::measure {

namespace {

using topo::Fabric;

// The chassis an entry is predicted on, with its path finders at effective and at line rate.
struct Model {
  explicit Model(topo::Chassis c)
      : chassis(std::move(c)),
        eff(chassis, topo::Rate::kEffective),
        line(chassis, topo::Rate::kLine) {}
  topo::Chassis chassis;
  topo::PathFinder eff, line;
};

int gpu_node(const topo::Chassis& c, int k, const Measurement& m) {
  const auto& g = c.gpus();
  if (k < 0 || k >= static_cast<int>(g.size()))
    throw InputError(
        fmt::format("measurements[{}]: GPU{} is not in chassis '{}', which has {} GPU(s)",
                    m.where.column - 1, k, c.name(), g.size()),
        {m.where.file, m.where.line, 0});
  return g[k];
}

// The slowest link (at line rate) on the widest path, or null when the path has no links.
const hw::LinkTech* bottleneck(Model& md, int src, int dst, Fabric f) {
  auto p = md.line.widest_path(src, dst, f);
  const hw::LinkTech* tech = nullptr;
  double least = std::numeric_limits<double>::infinity();
  for (int l : p.links) {
    const auto& link = md.chassis.link(l);
    if (link.line_bytes_per_s() < least) {
      least = link.line_bytes_per_s();
      tech = link.tech;
    }
  }
  return tech;
}

// The PCIe links from `n` up to its CPU (topo::PathFinder's PCIe tree).
void uplinks(Model& md, int n, std::vector<int>& out) {
  for (; n >= 0 && md.line.pcie_uplink(n) >= 0; n = md.line.pcie_parent(n))
    out.push_back(md.line.pcie_uplink(n));
}

// A peer transfer's NVLinks: each GPU's links to the other or to an NVSwitch.
void peer_nvlinks(const topo::Chassis& c, int a, int b, std::vector<int>& out) {
  for (int g : {a, b})
    for (int l : c.incident(g)) {
      const auto& link = c.link(l);
      int o = link.other(g);
      if (link.family() == hw::LinkFamily::kNvlink &&
          (o == a || o == b || c.node(o).kind == topo::NodeKind::kNvSwitch))
        out.push_back(l);
    }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

// Keeps the links of technology `tech` (the figure's bottleneck): the ones a fit may write on.
std::vector<int> of_tech(const topo::Chassis& c, std::vector<int> links, const hw::LinkTech* tech) {
  std::erase_if(links, [&](int l) { return !tech || c.link(l).tech != tech; });
  return links;
}

// Back-to-back copies of `bytes` each, moving at `rate` bytes/s with a fixed cost `t0` s per copy:
// bytes / (bytes / rate + t0) (docs/measure.md, "Calibration"). No size or no cost: the rate
// itself.
double with_overhead(double rate, std::uint64_t bytes, double t0) {
  if (bytes == 0 || t0 <= 0 || rate <= 0) return rate;
  double b = static_cast<double>(bytes);
  return b / (b / rate + t0);
}

// The per-copy cost of copies the GPU node drives (its part's copy_overhead_s; 0 when not given).
double copy_overhead(const topo::Chassis& c, int gpu) {
  return c.node(gpu).fig("copy_overhead_s", 0);
}

// One direction's rate `one_way` (bytes/s) turned into the figure of `m`'s kind: both directions
// (`both`) keep `duplex` of it each and share `cap`; then the per-copy cost. Returns GB/s.
double copy_figure(double one_way, bool both, double duplex, double cap, std::uint64_t bytes,
                   double t0) {
  double dir = both ? std::min(one_way * duplex, cap / 2) : std::min(one_way, cap);
  return with_overhead(dir, bytes, t0) * (both ? 2 : 1) / 1e9;
}

// Copy-kernel (SM) copies over links are not modelled: what a kernel reaches depends on how many
// SMs and loads in flight it uses. Their prediction is the copy-engine link bound without per-copy
// cost.
void mark_kernel_bound(const Measurement& m, CalibrationEntry& e) {
  if (m.engine != "sm") return;
  e.bound = true;
  e.method =
      "upper bound only (copy kernel not modelled: its rate depends on its SMs and loads in "
      "flight): " +
      e.method;
}

void predict_host(Model& md, const Measurement& m, CalibrationEntry& e) {
  int g = gpu_node(md.chassis, m.gpus[0], m);
  int cpu = md.chassis.node(g).cpu;
  if (cpu < 0) {
    e.method = "no prediction: the GPU has no CPU above it";
    return;
  }
  bool up = m.kind == "h2d", both = m.kind == "bidir";
  int src = up ? cpu : g, dst = up ? g : cpu;
  double mem =
      md.chassis.node(cpu).fig("memory_bytes_per_s", std::numeric_limits<double>::infinity());
  const hw::LinkTech* tech = bottleneck(md, src, dst, Fabric::kHost);
  double duplex = tech ? tech->duplex_efficiency.value : 1.0;
  double t0 = m.engine == "sm" ? 0 : copy_overhead(md.chassis, g);
  double eff = md.eff.max_flow(src, dst, Fabric::kHost),
         line = md.line.max_flow(src, dst, Fabric::kHost);
  e.predicted_GBps = copy_figure(eff, both, duplex, mem, m.bytes, t0);
  e.line_GBps = copy_figure(line, both, duplex, mem, m.bytes, t0);
  bool mem_bound = (both ? 2 * eff * duplex : eff) > mem;
  e.bottleneck_tech = tech && !mem_bound ? tech->id : "";
  std::vector<int> path;
  uplinks(md, g, path);
  e.path_links = of_tech(md.chassis, path, tech);
  e.method = fmt::format(
      "max flow {} {} over PCIe{}{}", md.chassis.display_name(src), md.chassis.display_name(dst),
      both ? fmt::format(", both directions x {:.3g} duplex efficiency", duplex) : "",
      t0 > 0 && m.bytes ? fmt::format(", {:.3g} us per copy", t0 * 1e6) : "");
  mark_kernel_bound(m, e);
}

void predict_peer(Model& md, const Measurement& m, CalibrationEntry& e) {
  int a = gpu_node(md.chassis, m.gpus[0], m), b = gpu_node(md.chassis, m.gpus[1], m);
  Fabric f = m.peer_access ? md.eff.gpu_fabric(a, b) : Fabric::kHost;
  bool both = m.kind == "p2p_bidir";
  const hw::LinkTech* tech = bottleneck(md, a, b, f);
  double duplex = tech ? tech->duplex_efficiency.value : 1.0;
  double t0 = m.engine == "sm" ? 0 : copy_overhead(md.chassis, a);
  double inf = std::numeric_limits<double>::infinity();
  e.predicted_GBps = copy_figure(md.eff.max_flow(a, b, f), both, duplex, inf, m.bytes, t0);
  e.line_GBps = copy_figure(md.line.max_flow(a, b, f), both, duplex, inf, m.bytes, t0);
  e.bottleneck_tech = tech ? tech->id : "";
  std::vector<int> path;
  if (f == Fabric::kNvlink) {
    peer_nvlinks(md.chassis, a, b, path);
  } else if (f == Fabric::kHost) {
    uplinks(md, a, path);
    uplinks(md, b, path);
  } else {
    path = md.line.widest_path(a, b, f).links;
  }
  e.path_links = of_tech(md.chassis, path, tech);
  const char* fabric = f == Fabric::kNvlink ? "NVLink"
                       : f == Fabric::kHost ? "host fabric"
                                            : "all links";
  e.method = fmt::format(
      "max flow {} {} over {}{}{}", md.chassis.display_name(a), md.chassis.display_name(b), fabric,
      both ? fmt::format(", both directions x {:.3g} duplex efficiency", duplex) : "",
      t0 > 0 && m.bytes ? fmt::format(", {:.3g} us per copy", t0 * 1e6) : "");
  mark_kernel_bound(m, e);
}

void predict_link(Model& md, const Measurement& m, CalibrationEntry& e) {
  const auto& tech = hw::Catalog::builtin().link_tech(m.tech);
  double eff = tech.efficiency.value;
  std::string from = "catalog";
  for (const auto& l : md.chassis.links())
    if (l.tech->id == m.tech) {
      eff = l.efficiency;
      from = "chassis";
      break;
    }
  e.line_GBps = tech.line_bytes_per_s(m.width) / 1e9;
  e.predicted_GBps = e.line_GBps * eff;
  e.bottleneck_tech = m.tech;
  for (const auto& l : md.chassis.links())
    if (l.tech->id == m.tech && l.width == m.width) e.path_links.push_back(l.index);
  e.method = fmt::format("{} x{} line rate x {} efficiency {:.3f}", m.tech, m.width, from, eff);
}

// A copy inside one GPU reads and writes each byte: memory bandwidth × memory_efficiency / 2, then
// the per-copy cost. Either engine: both are bound by the memory, not by how the copy is issued.
void predict_local(Model& md, const Measurement& m, CalibrationEntry& e) {
  int g = gpu_node(md.chassis, m.gpus[0], m);
  const auto& node = md.chassis.node(g);
  double mem = node.fig("memory_bytes_per_s", 0);
  if (mem <= 0) {
    e.method = "no prediction: the GPU part has no memory bandwidth figure";
    return;
  }
  double me = node.fig("memory_efficiency", 1.0), t0 = copy_overhead(md.chassis, g);
  e.predicted_GBps = with_overhead(mem * me / 2, m.bytes, t0) / 1e9;
  e.method = fmt::format(
      "GPU memory bandwidth x {:.3g} memory efficiency / 2 (each byte read and written){}", me,
      t0 > 0 && m.bytes ? fmt::format(", {:.3g} us per copy", t0 * 1e6) : "");
}

void predict_one(Model& md, const Measurement& m, const CalibrateOptions& o, CalibrationEntry& e) {
  if (m.kind == "h2d" || m.kind == "d2h" || m.kind == "bidir") {
    predict_host(md, m, e);
  } else if (m.kind == "p2p" || m.kind == "p2p_bidir") {
    predict_peer(md, m, e);
  } else if (m.kind == "link") {
    predict_link(md, m, e);
  } else if (m.kind == "d2d_local") {
    predict_local(md, m, e);
  } else if (m.kind == "collective") {
    std::vector<int> nodes;
    for (int k : m.gpus) nodes.push_back(gpu_node(md.chassis, k, m));
    std::string method;
    auto busbw = o.collective ? o.collective(md.chassis, m.op, nodes, m.bytes, m.algo, &method)
                              : std::nullopt;
    if (busbw) e.predicted_GBps = *busbw / 1e9;
    e.method =
        method.empty() ? (busbw ? "collective predictor" : "no collective predictor") : method;
  }
}

}  // namespace

std::optional<double> comm_busbw(const topo::Chassis& chassis, const std::string& op,
                                 const std::vector<int>& gpu_nodes, std::uint64_t bytes,
                                 const std::string& algo, std::string* method) {
  if (gpu_nodes.size() < 2) {
    if (method) *method = "no prediction: one rank moves nothing over links";
    return std::nullopt;
  }
  auto o = comm::parse_op(op);
  auto a = algo.empty() ? comm::Algo::kAuto : comm::parse_algo(algo);
  // nccl-tests' large-message figures: 8 GiB when the entry does not say.
  double s = bytes ? static_cast<double>(bytes) : 8.0 * (1ull << 30);
  try {
    auto p = comm::predict(chassis, o, gpu_nodes, s, a);
    if (method)
      *method = fmt::format("comm::predict: {} {}, {} channels", comm::to_string(p.algorithm),
                            comm::to_string(p.protocol), p.channels);
    return p.busbw_Bps;
  } catch (const InputError& e) {
    if (method) *method = fmt::format("no prediction: {}", e.bare_message());
    return std::nullopt;
  }
}

std::optional<double> ring_bound_busbw(const topo::Chassis& chassis, const std::string& op,
                                       const std::vector<int>& gpu_nodes, std::uint64_t,
                                       const std::string& algo, std::string* method) {
  (void)op;
  if (gpu_nodes.size() < 2) {
    if (method) *method = "no prediction: one rank moves nothing over links";
    return std::nullopt;
  }
  topo::PathFinder f(chassis, topo::Rate::kEffective);
  double least = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < gpu_nodes.size(); ++i) {
    int a = gpu_nodes[i], b = gpu_nodes[(i + 1) % gpu_nodes.size()];
    least = std::min(least, f.max_flow(a, b, f.gpu_fabric(a, b)));
  }
  if (method)
    *method = fmt::format(
        "ring bound (fallback): least neighbour max flow{}",
        algo.empty() || algo == "ring" ? "" : fmt::format("; algo '{}' not modelled", algo));
  return least;
}

Calibration calibrate(const topo::Chassis& chassis, const MeasurementFile& file,
                      const CalibrateOptions& o) {
  Calibration cal;
  cal.chassis = chassis.name();
  cal.threshold_pct = o.threshold_pct;
  std::map<std::string, std::unique_ptr<Model>> models;
  models[""] = std::make_unique<Model>(chassis);
  for (const auto& m : file.measurements) {
    auto it = models.find(m.chassis);
    if (it == models.end()) {
      try {
        it =
            models.emplace(m.chassis, std::make_unique<Model>(topo::load_chassis(m.chassis))).first;
      } catch (const InputError& err) {
        throw InputError(
            fmt::format("measurements[{}]: 'chassis': {}", m.where.column - 1, err.what()),
            {m.where.file, m.where.line, 0});
      }
    }
    Model& md = *it->second;
    CalibrationEntry e;
    e.measured = m;
    e.chassis = md.chassis.name();
    predict_one(md, m, o, e);
    if (e.predicted_GBps) {
      e.error_pct = (*e.predicted_GBps - m.measured_GBps) / m.measured_GBps * 100;
      // A bound is off only when the measurement beats it.
      e.flagged =
          e.bound ? -e.error_pct > o.threshold_pct : std::abs(e.error_pct) > o.threshold_pct;
      ++cal.predicted;
      cal.flagged += e.flagged;
      cal.bounds += e.bound;
    }
    cal.entries.push_back(std::move(e));
  }
  return cal;
}

namespace {

// One fitted figure: its entry, implied efficiency and the links it crossed.
struct Implied {
  std::size_t entry;
  double eff;
  std::vector<int> links;
};

std::string label(const CalibrationEntry& e, std::size_t i) {
  const auto& m = e.measured;
  std::vector<std::string> g;
  for (int x : m.gpus) g.push_back(fmt::format("GPU{}", x));
  return fmt::format("measurements[{}] ({}{}{}, {:.4g} GB/s)", i, m.kind, g.empty() ? "" : " ",
                     fmt::to_string(fmt::join(g, "-")), m.measured_GBps);
}

// The spec with `eff` written on the given chassis links. A spec line whose links are only partly
// fitted is split into one line per pair of nodes (names of box 0; every box shares the spec).
topo::ChassisSpec with_efficiencies(const topo::Chassis& c, const std::map<int, double>& eff) {
  topo::ChassisSpec spec = c.spec();
  auto local = [&](int n) {
    const std::string& name = c.node(n).name;
    auto slash = name.find('/');
    return c.boxes() > 1 && slash != std::string::npos ? name.substr(slash + 1) : name;
  };
  std::vector<topo::LinkSpec> out;
  for (std::size_t k = 0; k < spec.links.size(); ++k) {
    std::vector<std::pair<std::string, std::string>> pairs;
    std::map<std::pair<std::string, std::string>, double> fitted;
    for (const auto& l : c.links()) {
      if (l.spec_link != static_cast<int>(k)) continue;
      std::pair<std::string, std::string> p{local(l.a), local(l.b)};
      if (std::find(pairs.begin(), pairs.end(), p) == pairs.end()) pairs.push_back(p);
      if (auto it = eff.find(l.index); it != eff.end()) fitted[p] = it->second;
    }
    const topo::LinkSpec& ls = spec.links[k];
    if (fitted.empty() || fitted.size() == pairs.size()) {
      out.push_back(ls);
      if (!fitted.empty()) out.back().efficiency = fitted.begin()->second;
      continue;
    }
    for (const auto& p : pairs) {
      topo::LinkSpec one = ls;
      one.a = p.first;
      one.b = p.second;
      one.match = "zip";
      if (auto it = fitted.find(p); it != fitted.end()) one.efficiency = it->second;
      out.push_back(one);
    }
  }
  spec.links = std::move(out);
  return spec;
}

}  // namespace

Fit fit_efficiencies(const topo::Chassis& chassis, const Calibration& cal) {
  static const std::vector<std::string> fitted_kinds = {"h2d", "d2h",       "bidir",
                                                        "p2p", "p2p_bidir", "link"};
  Fit fit;
  std::map<std::string, std::vector<Implied>> implied;
  for (std::size_t i = 0; i < cal.entries.size(); ++i) {
    const auto& e = cal.entries[i];
    const auto& m = e.measured;
    if (e.chassis != chassis.name() || m.engine != "ce" || e.line_GBps <= 0 ||
        e.bottleneck_tech.empty())
      continue;
    if (std::find(fitted_kinds.begin(), fitted_kinds.end(), m.kind) == fitted_kinds.end()) continue;
    double x = m.measured_GBps / e.line_GBps;
    if (x > 1) {
      fit.warnings.push_back(
          fmt::format("{}: measured above the line rate of its path ({:.2f} GB/s, {}): efficiency "
                      "clamped to 1",
                      label(e, i), e.line_GBps, e.bottleneck_tech));
      x = 1;
    }
    if (x < kImplausibleEfficiency) {
      fit.warnings.push_back(
          fmt::format("{}: {:.3g} of the line rate of its path ({:.2f} GB/s, {}) is implausible "
                      "(below {:g}): left out of the fit",
                      label(e, i), x, e.line_GBps, e.bottleneck_tech, kImplausibleEfficiency));
      continue;
    }
    implied[e.bottleneck_tech].push_back({i, x, e.path_links});
  }
  if (implied.empty())
    throw InputError(fmt::format(
        "nothing to fit on '{}': no plausible copy-engine link figure was predicted on it{}",
        chassis.name(),
        fit.warnings.empty() ? "" : " (" + fmt::to_string(fmt::join(fit.warnings, "; ")) + ")"));
  const auto& cat = hw::Catalog::builtin();
  std::map<int, double> eff;
  for (const auto& [tech, v] : implied) {
    FittedTech t;
    t.tech = tech;
    t.catalog_efficiency = cat.link_tech(tech).efficiency.value;
    for (const auto& x : v) t.implied.push_back(x.eff);
    double med = median(t.implied);
    t.fitted_efficiency = std::clamp(med, 1e-6, 1.0);
    t.figures = static_cast<int>(v.size());
    auto [lo, hi] = std::minmax_element(t.implied.begin(), t.implied.end());
    t.spread_pct = (*hi - *lo) / med * 100;
    if (t.spread_pct > cal.threshold_pct)
      fit.warnings.push_back(fmt::format(
          "{}: the {} figures imply efficiencies from {:.3f} to {:.3f} (spread {:.0f}% of "
          "the median, more than {:g}%); the median {:.3f} is written",
          tech, t.figures, *lo, *hi, t.spread_pct, cal.threshold_pct, t.fitted_efficiency));
    for (const auto& x : v)
      for (int l : x.links) eff[l] = t.fitted_efficiency;
    for (const auto& l : chassis.links())
      if (l.tech->id == tech) {
        ++t.tech_links;
        t.links += eff.count(l.index) ? 1 : 0;
      }
    fit.techs.push_back(t);
  }
  fit.spec = with_efficiencies(chassis, eff);
  fit.spec.description += " (efficiencies fitted to measurements by linkwise calibrate)";
  return fit;
}

}  // namespace linkwise::measure
