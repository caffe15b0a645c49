#include "linkwise/probe/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "health.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/topo/paths.h"

namespace linkwise::probe {

const char* to_string(Severity s) {
  switch (s) {
    case Severity::kFault:
      return "fault";
    case Severity::kWarning:
      return "warning";
    case Severity::kInfo:
      return "info";
  }
  return "?";
}

int CheckReport::count(Severity s) const {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(),
                                        [s](const Finding& f) { return f.severity == s; }));
}

namespace {

std::string gen_width(int gen, int width) {
  return fmt::format("{} {}", gen > 0 ? fmt::format("Gen{}", gen) : "Gen?",
                     width > 0 ? fmt::format("x{}", width) : "x?");
}

std::string node_name(const Discovery& d, const std::string& id) {
  const auto* n = d.node_by_id(id);
  return n ? n->id : id;
}

// A link whose current state reads above what both ends can do: the files contradict each other.
bool check_link_above_max(const Discovery& d, const DiscoveredLink& l, std::vector<Finding>& out) {
  bool gen_high = l.cur_gen > 0 && l.max_gen > 0 && l.cur_gen > l.max_gen;
  bool width_high = l.cur_width > 0 && l.max_width > 0 && l.cur_width > l.max_width;
  if (!gen_high && !width_high) return false;
  out.push_back(
      {Severity::kWarning, "link-above-max", l.device_address, l.slot_path,
       fmt::format(
           "{} {}: PCIe link to {} reads {} now, above what both ends can do ({}): the link state "
           "files contradict each other, so this link is not checked",
           node_name(d, l.lower), l.device_address, node_name(d, l.upper),
           gen_width(l.cur_gen, l.cur_width), gen_width(l.max_gen, l.max_width)),
       "read current_link_speed/width and max_link_speed/width again (or `lspci -vv -s <addr>`: "
       "LnkSta "
       "against LnkCap); a copied sysfs tree may be inconsistent"});
  return true;
}

void check_links(const Discovery& d, std::vector<Finding>& out) {
  int unread = 0;
  for (const auto& l : d.pcie_links) {
    if (l.cur_gen == 0 || l.cur_width == 0) ++unread;
    if (check_link_above_max(d, l, out)) continue;
    bool width_low = l.cur_width > 0 && l.max_width > 0 && l.cur_width < l.max_width;
    bool speed_low = l.cur_gen > 0 && l.max_gen > 0 && l.cur_gen < l.max_gen;
    if (!width_low && !speed_low) continue;
    const auto* n = d.node_by_id(l.lower);
    bool gpu = n && n->kind == "gpu";
    Finding f;
    f.address = l.device_address;
    f.slot_path = l.slot_path;
    f.message = fmt::format(
        "{} {}: PCIe link to {} trained at {}, both ends can do {} (device max {}, port {} max {})",
        node_name(d, l.lower), l.device_address, node_name(d, l.upper),
        gen_width(l.cur_gen, l.cur_width), gen_width(l.max_gen, l.max_width),
        gen_width(l.device.max_gen, l.device.max_width),
        l.port_address.empty() ? "?" : l.port_address, gen_width(l.port.max_gen, l.port.max_width));
    if (gpu && !width_low) {
      f.severity = Severity::kWarning;
      f.kind = "link-speed-idle";
      f.advice =
          "an idle GPU lowers its link speed to save power: read current_link_speed (or "
          "`nvidia-smi -q -d "
          "PCIE`) again while the GPU copies data, e.g. during `nvbandwidth` or `linkwise probe "
          "--check` run "
          "alongside a job; it is a fault if the speed stays low under load";
    } else {
      f.severity = Severity::kFault;
      f.kind = "link-below-max";
      f.advice = width_low ? "reseat the card or cable and check the riser/retimer; a lane-width "
                             "drop is not a power-"
                             "saving state"
                           : "check the slot's BIOS link-speed setting, the riser or retimer, and "
                             "signal integrity";
      if (auto cost = detail::link_fault_cost(d, l.upper, l.lower); !cost.empty())
        f.message += "; " + cost;
    }
    out.push_back(f);
  }
  if (unread > 0)
    out.push_back(
        {Severity::kInfo, "link-not-read", "", "",
         fmt::format(
             "the trained speed or width of {} PCIe link(s) could not be read (shown as ?): not "
             "checked",
             unread),
         "see the notes for the files that could not be read"});
}

void check_acs(const Machine& m, const Discovery& d, std::vector<Finding>& out) {
  int unknown = 0;
  for (const auto& dev : m.devices) {
    if (!dev.is_bridge()) continue;
    bool under_switch = false;
    if (const auto* p = m.find(dev.parent)) under_switch = p->is_bridge() && !p->parent.empty();
    bool switch_port = dev.port_type == PortType::kDownstream ||
                       dev.port_type == PortType::kUpstream ||
                       d.node_by_address(dev.address) != nullptr || under_switch;
    if (!switch_port) continue;
    if (!dev.acs_p2p_redirect) {
      ++unknown;
      continue;
    }
    if (!*dev.acs_p2p_redirect) continue;
    Finding f;
    f.kind = "acs-redirect";
    f.address = dev.address;
    f.slot_path = dev.slot_path();
    f.message = fmt::format(
        "switch port {} ({}) has ACS P2P Request Redirect enabled: peer-to-peer traffic below it "
        "goes up to the root complex instead of across the switch",
        dev.address, to_string(dev.port_type));
    f.advice =
        "disable ACS on the switch ports (BIOS option, or `setpci -s <addr> ECAP_ACS+6.w=0000` at "
        "boot) "
        "unless the box runs VMs that need the isolation";
    out.push_back(f);
  }
  if (unknown > 0)
    out.push_back(
        {Severity::kInfo, "acs-not-read", "", "",
         fmt::format(
             "ACS not read on {} switch port(s): their extended config space is not readable",
             unknown),
         "run as root to read PCI config space"});
}

void check_iommu(const Machine& m, std::vector<Finding>& out) {
  const auto& s = m.iommu;
  std::string evidence =
      s.evidence.empty() ? "" : " (" + fmt::format("{}", fmt::join(s.evidence, "; ")) + ")";
  if (s.mode == "translated")
    out.push_back({Severity::kFault, "iommu-translated", "", "",
                   "IOMMU translates device DMA (not pass-through)" + evidence,
                   "boot with iommu=pt (intel_iommu=on iommu=pt / amd_iommu=on iommu=pt) unless "
                   "the box needs DMA "
                   "isolation"});
  else if (s.mode == "unknown")
    out.push_back({Severity::kWarning, "iommu-unknown", "", "",
                   "IOMMU is on but its mode could not be read" + evidence,
                   "check /sys/kernel/iommu_groups/*/type (identity = pass-through)"});
}

void check_nvlinks(const Machine& m, const Discovery& d, std::vector<Finding>& out) {
  if (!m.nvml.read) {
    out.push_back(
        {Severity::kInfo, "nvlink-not-read", "", "", "NVLink not read: " + m.nvml.why_not, ""});
    return;
  }
  std::map<std::string, std::pair<int, int>> up_down;
  for (const auto& l : m.nvml.links) (l.active ? up_down[l.gpu].first : up_down[l.gpu].second)++;
  for (const auto& l : m.nvml.links) {
    const auto* n = d.node_by_address(l.gpu);
    std::string name = n ? n->id + " " : "";
    std::string path = n ? n->slot_path : "";
    if (!l.active && up_down[l.gpu].first > 0)
      out.push_back(
          {Severity::kFault, "nvlink-down", l.gpu, path,
           fmt::format("{}{}: NVLink {} is down ({} of its {} links up)", name, l.gpu, l.link,
                       up_down[l.gpu].first, up_down[l.gpu].first + up_down[l.gpu].second),
           "check `nvidia-smi nvlink -s -i <gpu>`; on NVSwitch systems that the fabric manager "
           "runs"});
    std::vector<std::string> errs;
    for (int c = 0; c < kNvlinkErrorCounters; ++c)
      if (l.errors[c] > 0)
        errs.push_back(
            fmt::format("{} {}", to_string(static_cast<NvlinkErrorCounter>(c)), l.errors[c]));
    if (!errs.empty())
      out.push_back({Severity::kFault, "nvlink-errors", l.gpu, path,
                     fmt::format("{}{}: NVLink {} error counters: {}", name, l.gpu, l.link,
                                 fmt::join(errs, ", ")),
                     "watch whether they grow under load (`nvidia-smi nvlink -e`); growing "
                     "counters mean a bad link"});
  }
  for (const auto& [gpu, ud] : up_down)
    if (ud.first == 0 && ud.second > 0) {
      const auto* n = d.node_by_address(gpu);
      out.push_back(
          {Severity::kWarning, "nvlink-none", gpu, n ? n->slot_path : "",
           fmt::format("{}: none of its {} NVLinks is up", gpu, ud.second),
           "no NVLink bridge fitted, or the links are down: check `nvidia-smi nvlink -s`"});
    }
}

void check_gpu_nic(const Discovery& d, std::vector<Finding>& out) {
  topo::Chassis c;
  try {
    c = topo::build_chassis(d.spec);
  } catch (const InputError& e) {
    out.push_back({Severity::kInfo, "chassis-not-built", "", "",
                   std::string("the probed chassis does not build: ") + e.what(), ""});
    return;
  }
  topo::PathFinder f(c);
  std::vector<int> nics;
  for (int n : c.nodes_of_kind(topo::NodeKind::kNic))
    for (const auto& l : d.pcie_links)
      // x1/x4 NICs are management ports; a NIC whose width was not read is not taken for one.
      if (l.lower == c.node(n).name && (l.max_width >= 8 || l.max_width == 0)) nics.push_back(n);
  if (nics.empty()) return;
  for (int g : c.gpus()) {
    std::string best;
    auto rank = topo::PathType::kNet;
    for (int n : nics) {
      auto pc = f.path_class(g, n);
      if (pc.type < rank || best.empty())
        rank = pc.type, best = c.display_name(n) + " is " + pc.str();
    }
    if (rank == topo::PathType::kPix || rank == topo::PathType::kPxb) continue;
    const auto* dn = d.node_by_id(c.node(g).name);
    out.push_back(
        {Severity::kWarning, "gpu-nic-not-under-switch", dn ? dn->address : "",
         dn ? dn->slot_path : "",
         fmt::format("{} ({}) has no NIC under a PCIe switch with it; the nearest, {}",
                     c.display_name(g), c.node(g).name, best),
         "GPUDirect RDMA from this GPU crosses the CPU: place a NIC under the GPU's switch"});
  }
}

}  // namespace

CheckReport check(const Machine& m, const Discovery& d, const CheckOptions& options) {
  CheckReport r;
  r.strict = options.strict;
  check_links(d, r.findings);
  check_acs(m, d, r.findings);
  check_iommu(m, r.findings);
  check_nvlinks(m, d, r.findings);
  check_gpu_nic(d, r.findings);
  detail::check_field_health(m, d, r.findings);
  if (options.expect) {
    auto diffs = compare_with_design(d, *options.expect, {m.nvml.read, m.nvml.why_not});
    r.findings.insert(r.findings.end(), diffs.begin(), diffs.end());
  }
  std::stable_sort(r.findings.begin(), r.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity < b.severity; });
  return r;
}

}  // namespace linkwise::probe
