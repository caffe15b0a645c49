// compare_with_design(): a probed chassis against the designed one.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <utility>

#include "linkwise/probe/check.h"
#include "linkwise/topo/analysis.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/topo/paths.h"

namespace linkwise::probe {

namespace {

constexpr std::size_t kMaxMatrixDiffs = 32;

Finding diff(const std::string& message, const std::string& address = "",
             const std::string& path = "") {
  return {Severity::kFault, "differs-from-design", address, path, message, ""};
}

Finding not_checked(const std::string& message) {
  return {Severity::kInfo, "design-not-checked", "", "", message, ""};
}

void compare_counts(const topo::Chassis& found, const topo::Chassis& want, const Discovery& d,
                    bool nvlinks_read, std::vector<Finding>& out) {
  using K = topo::NodeKind;
  // Parts the probe only guessed (not in the id table) cannot be held against the design: grouped
  // by (guessed part, designed part), reported as not checked.
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> guessed;
  for (K k : {K::kCpu, K::kGpu, K::kPcieSwitch, K::kNvSwitch, K::kNic, K::kNvme}) {
    if (k == K::kNvSwitch && !nvlinks_read) continue;
    auto f = found.nodes_of_kind(k), w = want.nodes_of_kind(k);
    if (f.size() != w.size())
      out.push_back(
          diff(fmt::format("designed {} {}(s), found {}", w.size(), hw::to_string(k), f.size())));
    for (std::size_t i = 0; i < std::min(f.size(), w.size()); ++i) {
      const auto& fn = found.node(f[i]);
      const auto& wn = want.node(w[i]);
      if (k == K::kPcieSwitch || fn.part->id == wn.part->id) continue;
      const auto* dn = d.node_by_id(fn.name);
      if (dn && dn->part_guessed)
        guessed[{fn.part->id, wn.part->id}].push_back(found.display_name(f[i]));
      else
        out.push_back(diff(fmt::format("{} is {}, designed {}", found.display_name(f[i]),
                                       fn.part->id, wn.part->id),
                           fn.pci_address, fn.label));
    }
  }
  for (const auto& [parts, names] : guessed)
    out.push_back(not_checked(
        fmt::format("part of {} not checked: not in the catalog's id table (modelled as {}?), "
                    "designed {}",
                    fmt::join(names, ", "), parts.first, parts.second)));
}

const DiscoveredLink* probed_link(const Discovery& d, const std::string& lower) {
  for (const auto& l : d.pcie_links)
    if (l.lower == lower) return &l;
  return nullptr;
}

// A generation or width the probe only assumed (no end reported it) is not held against the design:
// such uplinks are listed, grouped, as not checked.
void compare_uplinks(const topo::Chassis& found, const topo::Chassis& want, const Discovery& d,
                     std::vector<Finding>& out) {
  topo::PathFinder ff(found), fw(want);
  using K = topo::NodeKind;
  std::vector<std::string> assumed;
  for (K k : {K::kGpu, K::kNic, K::kNvme}) {
    auto f = found.nodes_of_kind(k), w = want.nodes_of_kind(k);
    for (std::size_t i = 0; i < std::min(f.size(), w.size()); ++i) {
      int lf = ff.pcie_uplink(f[i]), lw = fw.pcie_uplink(w[i]);
      if (lf < 0 || lw < 0) continue;
      const auto& a = found.link(lf);
      const auto& b = want.link(lw);
      const DiscoveredLink* pl = probed_link(d, found.node(f[i]).name);
      bool gen_assumed = pl && pl->gen_assumed, width_assumed = pl && pl->width_assumed;
      bool gen_low = a.tech->generation < b.tech->generation, width_low = a.width < b.width;
      if ((gen_low && !gen_assumed) || (width_low && !width_assumed))
        out.push_back(
            diff(fmt::format("{}: PCIe link can do {} x{}, designed {} x{}",
                             found.display_name(f[i]), gen_assumed ? "pcie?" : a.tech->id,
                             width_assumed ? "?" : std::to_string(a.width), b.tech->id, b.width),
                 found.node(f[i]).pci_address, found.node(f[i]).label));
      else if (gen_assumed || width_assumed)
        assumed.push_back(
            fmt::format("{} (designed {} x{})", found.display_name(f[i]), b.tech->id, b.width));
    }
  }
  if (!assumed.empty())
    out.push_back(not_checked(
        fmt::format("PCIe link of {} not checked: its speed or width was not reported, only "
                    "assumed (see the notes)",
                    fmt::join(assumed, ", "))));
}

// Two devices below one CPU on different NUMA nodes of it (sub-NUMA clustering).
bool split_socket(const topo::Chassis& c, const std::string& a, const std::string& b) {
  const int x = c.find_display(a), y = c.find_display(b);
  if (x < 0 || y < 0) return false;
  const auto &na = c.node(x), &nb = c.node(y);
  return na.cpu >= 0 && na.cpu == nb.cpu && na.numa >= 0 && nb.numa >= 0 && na.numa != nb.numa;
}

void compare_matrix(const topo::Chassis& found, const topo::Chassis& want, bool nvlinks_read,
                    std::vector<Finding>& out) {
  topo::TopoOptions opt;
  opt.pairs = false;
  opt.bisection = false;
  auto af = topo::analyse(found, opt), aw = topo::analyse(want, opt);
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < af.devices.size(); ++i) index[af.devices[i]] = i;
  std::size_t diffs = 0, total = 0, snc = 0;
  std::string snc_example;
  for (std::size_t i = 0; i < aw.devices.size(); ++i)
    for (std::size_t j = i + 1; j < aw.devices.size(); ++j) {
      auto fi = index.find(aw.devices[i]), fj = index.find(aw.devices[j]);
      if (fi == index.end() || fj == index.end()) continue;
      const auto& got = af.matrix[fi->second][fj->second];
      const auto& exp = aw.matrix[i][j];
      if (got == exp || (!nvlinks_read && exp.rfind("NV", 0) == 0)) continue;
      if (exp == "NODE" && got == "SYS" && split_socket(found, aw.devices[i], aw.devices[j])) {
        if (++snc == 1) snc_example = aw.devices[i] + "-" + aw.devices[j];
        continue;
      }
      ++total;
      if (++diffs <= kMaxMatrixDiffs)
        out.push_back(diff(
            fmt::format("{}-{}: designed {}, found {}", aw.devices[i], aw.devices[j], exp, got)));
    }
  if (total > kMaxMatrixDiffs)
    out.push_back(
        diff(fmt::format("... and {} more path-class differences", total - kMaxMatrixDiffs)));
  if (snc > 0)
    out.push_back(
        {Severity::kWarning, "sub-numa-clustering", "", "",
         fmt::format(
             "{} device pair(s) designed NODE are SYS (e.g. {}): one socket, two of its NUMA "
             "nodes. Sub-NUMA clustering (SNC/NPS) is on, a BIOS setting, not other wiring",
             snc, snc_example),
         "NCCL and nvidia-smi treat each NUMA node as its own CPU: pin each rank to its GPU's node "
         "(`numactl --cpunodebind`, the NUMA Affinity column), or turn SNC/NPS off in the BIOS to "
         "match the design"});
}

topo::ChassisSpec without_nvlinks(const topo::ChassisSpec& spec) {
  topo::ChassisSpec out = spec;
  const auto& cat = hw::Catalog::builtin();
  std::erase_if(out.links, [&](const topo::LinkSpec& l) {
    const auto* t = cat.find_link_tech(l.tech);
    return t && t->family == hw::LinkFamily::kNvlink;
  });
  std::erase_if(out.nodes, [](const topo::NodeSpec& n) { return n.kind == "nvswitch"; });
  return out;
}

std::string nvlinks_not_checked(const topo::Chassis& want, const std::string& why) {
  topo::TopoOptions opt;
  opt.pairs = false;
  opt.bisection = false;
  auto a = topo::analyse(want, opt);
  std::size_t pairs = 0;
  std::string example;
  for (std::size_t i = 0; i < a.devices.size(); ++i)
    for (std::size_t j = i + 1; j < a.devices.size(); ++j)
      if (a.matrix[i][j].rfind("NV", 0) == 0 && ++pairs == 1)
        example =
            fmt::format(" (e.g. {}-{} designed {})", a.devices[i], a.devices[j], a.matrix[i][j]);
  return fmt::format(
      "NVLink not read ({}): not checked: {} NVSwitch(es) and the NVLink path classes of {} device "
      "pair(s){}; PCIe path classes are checked against the design without its NVLinks",
      why.empty() ? "no reason given" : why, want.nodes_of_kind(topo::NodeKind::kNvSwitch).size(),
      pairs, example);
}

}  // namespace

std::vector<Finding> compare_with_design(const Discovery& discovery,
                                         const topo::ChassisSpec& designed,
                                         const DesignScope& scope) {
  std::vector<Finding> out;
  topo::Chassis found, want;
  try {
    want = topo::build_chassis(designed);
  } catch (const InputError& e) {
    throw InputError(fmt::format("the designed chassis does not build: {}", e.bare_message()),
                     e.where());
  }
  try {
    found = topo::build_chassis(discovery.spec);
  } catch (const InputError& e) {
    out.push_back(diff(
        std::string("the probed chassis does not build, so it cannot be compared: ") + e.what()));
    return out;
  }
  if (!scope.nvlinks_read) {
    // Without NVLinks the probe sees the PCIe tree only: hold it against the design's PCIe tree
    // (the design without its NVLinks and NVSwitches) and report the NVLink part as not checked.
    out.push_back(not_checked(nvlinks_not_checked(want, scope.nvlinks_why_not)));
    try {
      want = topo::build_chassis(without_nvlinks(designed));
    } catch (const InputError&) {
      // A design whose other links need its NVSwitches: compare it whole, NVLink path classes
      // skipped.
    }
  }
  compare_counts(found, want, discovery, scope.nvlinks_read, out);
  compare_uplinks(found, want, discovery, out);
  compare_matrix(found, want, scope.nvlinks_read, out);
  return out;
}

}  // namespace linkwise::probe
