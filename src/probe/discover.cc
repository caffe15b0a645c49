#include "linkwise/probe/discover.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <set>

#include "pci_ids.h"
#include "spec_util.h"

namespace linkwise::probe {

using detail::DeviceKind;

const DiscoveredNode* Discovery::node_by_address(const std::string& address) const {
  for (const auto& n : nodes)
    if (!n.address.empty() && n.address == address) return &n;
  return nullptr;
}

const DiscoveredNode* Discovery::node_by_id(const std::string& id) const {
  for (const auto& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}

namespace {

topo::NodeSpec make_node(const std::string& id, const std::string& kind, const std::string& part) {
  topo::NodeSpec n;
  n.id = id;
  n.kind = kind;
  n.part = part;
  return n;
}

topo::LinkSpec make_link(const std::string& a, const std::string& b, const std::string& tech,
                         int width) {
  topo::LinkSpec l;
  l.a = a;
  l.b = b;
  l.tech = tech;
  l.width = width;
  return l;
}

class Folder {
 public:
  Folder(const Machine& m, const hw::Catalog& cat, Discovery& out) : m_(m), cat_(cat), out_(out) {
    for (const auto& d : m.devices) by_addr_[d.address] = &d;
  }
  void run();

 private:
  PortType bridge_type(const PciDevice& d);
  DeviceKind kind(const PciDevice& d);
  std::string cpu_for(const PciDevice& d);
  int numa_of(const PciDevice& d) const;
  void add_cpus();
  void add_devices();
  std::string add_node(const PciDevice& d, DeviceKind k, const std::string& prefix, int& counter);
  void attach(const PciDevice& d, const std::string& node);
  void add_nvlinks();
  void add_socket_links();
  const hw::Part* part_of(const std::string& node_id);
  std::string tech_for(int gen, const std::string& node_id, std::string* note);

  const Machine& m_;
  const hw::Catalog& cat_;
  Discovery& out_;
  std::map<std::string, const PciDevice*> by_addr_;
  std::map<std::string, PortType> types_;
  std::map<int, std::string> cpu_of_socket_;
  std::map<std::string, std::vector<std::string>> root_buses_;  // cpu id -> sorted root buses
  int max_gen_ = 0;
};

PortType Folder::bridge_type(const PciDevice& d) {
  if (auto it = types_.find(d.address); it != types_.end()) return it->second;
  PortType t = d.port_type;
  // Bridges whose parents form a loop (each listed below the other in a copied tree) end the walk
  // here: the one met again counts as a root port.
  types_[d.address] = PortType::kRootPort;
  if (t != PortType::kRootPort && t != PortType::kUpstream && t != PortType::kDownstream) {
    // Config space not readable: a bridge on the root bus is a root port, one below a switch's
    // upstream port a downstream port, and any other an upstream port.
    auto p = by_addr_.find(d.parent);
    if (d.parent.empty() || p == by_addr_.end() || !p->second->is_bridge())
      t = PortType::kRootPort;
    else
      t = bridge_type(*p->second) == PortType::kUpstream ? PortType::kDownstream
                                                         : PortType::kUpstream;
  }
  types_[d.address] = t;
  return t;
}

DeviceKind Folder::kind(const PciDevice& d) {
  if (!d.ids_read || d.virtual_function) return DeviceKind::kOther;
  return detail::kind_of(d.vendor, d.class_code);
}

int Folder::numa_of(const PciDevice& d) const {
  int numa = d.numa;
  for (auto it = d.chain.begin(); numa < 0 && it != d.chain.end(); ++it)
    if (auto p = by_addr_.find(*it); p != by_addr_.end()) numa = p->second->numa;
  return numa;
}

std::string Folder::cpu_for(const PciDevice& d) {
  int numa = numa_of(d);
  auto s = m_.numa_socket.find(numa);
  if (s != m_.numa_socket.end() && cpu_of_socket_.count(s->second))
    return cpu_of_socket_[s->second];
  return cpu_of_socket_.begin()->second;
}

void Folder::add_cpus() {
  for (const auto& d : m_.devices) max_gen_ = std::max(max_gen_, d.link.max_gen);
  std::string part = detail::cpu_part_for_model(m_.cpu_model);
  bool guessed = part.empty();
  if (guessed) part = detail::closest_cpu_part(m_.cpu_vendor, max_gen_);
  int i = 0;
  for (const auto& s : m_.sockets) {
    DiscoveredNode n;
    n.id = fmt::format("cpu{}", i);
    n.kind = "cpu";
    n.part = part;
    n.part_guessed = guessed;
    n.description = guessed ? fmt::format("CPU '{}' is not in the catalog: modelled as {}",
                                          m_.cpu_model.empty() ? "unknown" : m_.cpu_model, part)
                            : m_.cpu_model;
    topo::NodeSpec ns = make_node(n.id, "cpu", part);
    ns.numa = s.numa_nodes.empty() ? i : s.numa_nodes.front();
    ns.cpulist = s.cpulist;
    ns.label = fmt::format("socket {}{}", s.id, guessed ? "; " + n.description : "");
    out_.spec.nodes.push_back(ns);
    out_.nodes.push_back(n);
    cpu_of_socket_[s.id] = n.id;
    ++i;
  }
}

std::string Folder::add_node(const PciDevice& d, DeviceKind k, const std::string& prefix,
                             int& counter) {
  static const std::map<DeviceKind, std::string> kKinds = {{DeviceKind::kGpu, "gpu"},
                                                           {DeviceKind::kNic, "nic"},
                                                           {DeviceKind::kNvme, "nvme"},
                                                           {DeviceKind::kBridge, "pcie_switch"},
                                                           {DeviceKind::kNvSwitch, "nvswitch"}};
  DiscoveredNode n;
  n.id = fmt::format("{}{}", prefix, counter++);
  n.kind = kKinds.at(k);
  n.address = d.address;
  n.slot_path = d.slot_path();
  auto known = detail::known_part(d.vendor, d.device);
  if (known.part && cat_.find_part(known.part)) {
    n.part = known.part;
    n.description = known.name;
  } else {
    n.part = detail::closest_part(k, d.vendor, d.link.max_gen);
    n.part_guessed = true;
    n.description = fmt::format(
        "unknown device {:04x}:{:04x} (class 0x{:06x}): modelled as {}, the closest {} "
        "by vendor and PCIe generation",
        d.vendor, d.device, d.class_code, n.part, n.kind);
  }
  topo::NodeSpec ns = make_node(n.id, n.kind, n.part);
  ns.pci_address = d.address;
  // Sub-NUMA clustering (SNC/NPS): the socket has several NUMA nodes, so the device keeps its own
  // and that node's CPUs (its NUMA and CPU affinity, SYS between nodes as nvidia-smi prints it).
  if (int numa = numa_of(d); numa >= 0) {
    auto s = m_.numa_socket.find(numa);
    auto cl = m_.numa_cpulist.find(numa);
    const bool snc = s != m_.numa_socket.end() &&
                     std::count_if(m_.numa_socket.begin(), m_.numa_socket.end(),
                                   [&](const auto& e) { return e.second == s->second; }) > 1;
    if (snc && cl != m_.numa_cpulist.end()) ns.numa = numa, ns.cpulist = cl->second;
  }
  std::string label = d.slot.empty() ? n.slot_path : "slot " + d.slot + ", " + n.slot_path;
  ns.label = n.part_guessed ? label + "; " + n.description : label;
  out_.spec.nodes.push_back(ns);
  out_.nodes.push_back(n);
  return n.id;
}

void Folder::add_devices() {
  int gpus = 0, sws = 0, nics = 0, nvmes = 0;
  std::vector<std::pair<const PciDevice*, std::string>> placed;
  std::set<std::string> nic_slots;
  for (DeviceKind want : {DeviceKind::kGpu, DeviceKind::kBridge, DeviceKind::kNic,
                          DeviceKind::kNvme, DeviceKind::kNvSwitch}) {
    for (const auto& d : m_.devices) {
      DeviceKind k = kind(d);
      if (k != want) continue;
      if (k == DeviceKind::kBridge && bridge_type(d) != PortType::kUpstream) continue;
      if (k == DeviceKind::kNic && !nic_slots.insert(d.address.substr(0, 10)).second) {
        out_.notes.push_back(
            fmt::format("{}: another function of the NIC at {}.0, not a separate NIC", d.address,
                        d.address.substr(0, 10)));
        continue;
      }
      if (k == DeviceKind::kNvSwitch) continue;  // added by add_nvlinks() when NVLinks reach it
      std::string prefix = k == DeviceKind::kGpu      ? "gpu"
                           : k == DeviceKind::kBridge ? "sw"
                           : k == DeviceKind::kNic    ? "nic"
                                                      : "nvme";
      int& counter = k == DeviceKind::kGpu      ? gpus
                     : k == DeviceKind::kBridge ? sws
                     : k == DeviceKind::kNic    ? nics
                                                : nvmes;
      placed.emplace_back(&d, add_node(d, k, prefix, counter));
    }
  }
  for (const auto& d : m_.devices)
    if (kind(d) == DeviceKind::kOther)
      out_.other_devices.push_back(fmt::format("{} class 0x{:06x} {:04x}:{:04x}{}", d.address,
                                               d.class_code, d.vendor, d.device,
                                               d.virtual_function ? " (virtual function)" : ""));
  for (const auto& [d, id] : placed) attach(*d, id);
}

const hw::Part* Folder::part_of(const std::string& id) {
  const auto* n = out_.node_by_id(id);
  return n ? cat_.find_part(n->part) : nullptr;
}

std::string Folder::tech_for(int gen, const std::string& node_id, std::string* note) {
  if (gen >= 1 && gen <= 6) return fmt::format("pcie{}", gen);
  const hw::Part* p = part_of(node_id);
  std::string t = p ? p->attr("pcie") : "";
  if (t.empty()) t = "pcie4";
  *note = fmt::format("link speed not reported: assumed {}", t);
  return t;
}

void Folder::attach(const PciDevice& d, const std::string& node) {
  // The port directly above, and the chassis node the link ends at: the nearest switch upstream
  // port above that port, or the CPU.
  const PciDevice* port = nullptr;
  if (auto it = by_addr_.find(d.parent); it != by_addr_.end()) port = it->second;
  std::string upper;
  std::size_t steps =
      0;  // parents can loop in a copied tree: no walk is longer than the device list
  for (const PciDevice* p = port; p && upper.empty() && steps++ <= by_addr_.size();) {
    if (p->is_bridge() && bridge_type(*p) == PortType::kUpstream)
      if (const auto* n = out_.node_by_address(p->address)) upper = n->id;
    auto it = by_addr_.find(p->parent);
    p = it == by_addr_.end() ? nullptr : it->second;
  }
  DiscoveredLink l;
  l.lower = node;
  l.device_address = d.address;
  l.port_address = port ? port->address : "";
  l.slot_path = d.slot_path();
  l.device = d.link;
  if (port) l.port = port->link;
  auto lesser = [](int a, int b) { return a > 0 && b > 0 ? std::min(a, b) : std::max(a, b); };
  l.max_gen = lesser(d.link.max_gen, port ? port->link.max_gen : 0);
  l.max_width = lesser(d.link.max_width, port ? port->link.max_width : 0);
  // The trained state is the device's own: a missing or unreadable current file leaves it unknown
  // (the port's view is not put in its place), and a missing one is said in a note.
  l.cur_gen = d.link.cur_gen;
  l.cur_width = d.link.cur_width;
  std::vector<std::string> missing;
  if (l.cur_gen == 0 && !d.link.cur_gen_unreadable) missing.push_back("current_link_speed");
  if (l.cur_width == 0 && !d.link.cur_width_unreadable) missing.push_back("current_link_width");
  topo::LinkSpec ls;
  if (upper.empty()) {
    upper = cpu_for(d);
    auto& buses = root_buses_[upper];
    if (!d.root_bus.empty()) {
      auto it = std::find(buses.begin(), buses.end(), d.root_bus);
      if (it == buses.end()) it = buses.insert(buses.end(), d.root_bus);
      l.root_complex = static_cast<int>(it - buses.begin());
      ls.root_complex = l.root_complex;
    }
  }
  l.upper = upper;
  std::string note;
  if (!missing.empty())
    note = fmt::format("{} missing: trained {} not read", fmt::join(missing, ", "),
                       missing.size() == 2 ? "speed and width"
                       : l.cur_gen == 0    ? "speed"
                                           : "width");
  ls.a = upper;
  ls.b = node;
  std::string tech_note;
  ls.tech = tech_for(l.max_gen > 0 ? l.max_gen : l.cur_gen, node, &tech_note);
  l.gen_assumed = !tech_note.empty();
  if (!tech_note.empty()) note += (note.empty() ? "" : "; ") + tech_note;
  const auto& tech = cat_.link_tech(ls.tech);
  int width = l.max_width > 0 ? l.max_width : l.cur_width;
  if (width <= 0) {
    const hw::Part* p = part_of(node);
    width = p && p->has("pcie_width") ? static_cast<int>(p->get("pcie_width")) : 16;
    note += (note.empty() ? "" : "; ") + fmt::format("link width not reported: assumed x{}", width);
    l.width_assumed = true;
  }
  int allowed = 0;
  for (int w : tech.widths)
    if (w <= width) allowed = std::max(allowed, w);
  ls.width = allowed > 0 ? allowed : width;
  int gen = tech.generation;
  // A GPU at full width and a lower speed is idling (GPUs lower their link speed when idle; --check
  // warns link-speed-idle): that is not the rate it runs at under load, so it is not recorded as
  // trained.
  const auto* lower_node = out_.node_by_id(node);
  const bool idle_gpu =
      lower_node && lower_node->kind == "gpu" && !(l.cur_width > 0 && l.cur_width < ls.width);
  if (l.cur_gen > 0 && l.cur_gen < gen && !idle_gpu) ls.trained_gen = l.cur_gen;
  if (l.cur_width > 0 && l.cur_width < ls.width) ls.trained_width = l.cur_width;
  if (!note.empty()) out_.notes.push_back(fmt::format("{} ({}): {}", node, d.address, note));
  out_.spec.links.push_back(ls);
  out_.pcie_links.push_back(l);
}

void Folder::add_nvlinks() {
  if (!m_.nvml.read) return;
  // Active links per (GPU, remote end).
  std::map<std::pair<std::string, std::string>, int> count;
  std::map<std::pair<std::string, std::string>, int> gen;
  for (const auto& l : m_.nvml.links) {
    if (!l.active || l.remote.empty()) continue;
    count[{l.gpu, l.remote}]++;
    gen[{l.gpu, l.remote}] = l.generation;
  }
  int nvsws = 0;
  std::map<std::string, std::string> switch_ids;  // remote address -> node id
  for (const auto& [key, n] : count) {
    const auto& [gpu_addr, remote] = key;
    const DiscoveredNode* gpu = out_.node_by_address(gpu_addr);
    if (!gpu || gpu->kind != "gpu") {
      out_.notes.push_back(
          fmt::format("NVML reports GPU {}, which sysfs does not show as a GPU", gpu_addr));
      continue;
    }
    const hw::Part* gp = cat_.find_part(gpu->part);
    std::string tech = gp ? gp->attr("nvlink") : "";
    if (tech.empty() || gpu->part_guessed)
      tech = gen[key] > 0 ? fmt::format("nvlink{}", gen[key]) : "nvlink4";
    const DiscoveredNode* other = out_.node_by_address(remote);
    std::string other_id;
    if (other && other->kind == "gpu") {
      // Both GPUs report the link: keep the lower address's view.
      if (remote < gpu_addr && count.count({remote, gpu_addr})) continue;
      other_id = other->id;
    } else if (auto it = switch_ids.find(remote); it != switch_ids.end()) {
      other_id = it->second;
    } else {
      static const std::map<std::string, std::string> kSwitchFor = {{"nvlink2", "nvswitch-gen1"},
                                                                    {"nvlink3", "nvswitch-gen2"},
                                                                    {"nvlink4", "nvswitch-gen3"},
                                                                    {"nvlink5", "nvswitch-gen4"}};
      auto part = kSwitchFor.count(tech) ? kSwitchFor.at(tech) : "nvswitch-gen3";
      const PciDevice* pd = m_.find(remote);
      DiscoveredNode nn;
      nn.id = fmt::format("nvsw{}", nvsws++);
      nn.kind = "nvswitch";
      nn.part = part;
      nn.address = remote;
      if (pd) {
        nn.slot_path = pd->slot_path();
        auto known = detail::known_part(pd->vendor, pd->device);
        if (known.part) nn.part = known.part;
        nn.description = known.name ? known.name : "NVSwitch";
      } else {
        nn.description = "NVSwitch seen only through NVLink (not on this host's PCIe)";
      }
      topo::NodeSpec ns = make_node(nn.id, "nvswitch", nn.part);
      ns.pci_address = remote;
      ns.label = pd ? nn.slot_path : nn.description;
      out_.spec.nodes.push_back(ns);
      out_.nodes.push_back(nn);
      switch_ids[remote] = other_id = nn.id;
    }
    out_.spec.links.push_back(make_link(gpu->id, other_id, tech, n));
  }
}

void Folder::add_socket_links() {
  std::vector<std::string> cpus;
  for (const auto& [s, id] : cpu_of_socket_) cpus.push_back(id);
  if (cpus.size() < 2) return;
  const hw::Part* p = part_of(cpus.front());
  std::string tech = p ? p->attr("socket") : "";
  if (tech.empty()) tech = "upi-16";
  int links = p ? static_cast<int>(p->get("socket_links", 1)) : 1;
  int width = std::max(1, links / static_cast<int>(cpus.size() - 1));
  for (std::size_t i = 0; i < cpus.size(); ++i)
    for (std::size_t j = i + 1; j < cpus.size(); ++j)
      out_.spec.links.push_back(make_link(cpus[i], cpus[j], tech, width));
  out_.notes.push_back(
      fmt::format("socket links are not visible in sysfs: {} x{} per socket pair assumed from the "
                  "CPU part ({})",
                  tech, width, p ? p->id : "unknown"));
}

void Folder::run() {
  add_cpus();
  add_devices();
  add_nvlinks();
  add_socket_links();
  detail::fit_capacities(out_.spec, cat_);
  for (const auto& d : m_.devices)
    if (kind(d) == DeviceKind::kNvSwitch && !out_.node_by_address(d.address))
      out_.other_devices.push_back(
          fmt::format("{} class 0x{:06x} {:04x}:{:04x} (NVSwitch: no NVLink read reaches it)",
                      d.address, d.class_code, d.vendor, d.device));
}

}  // namespace

namespace detail {

void fit_capacities(topo::ChassisSpec& spec, const hw::Catalog& cat_) {
  // Guessed or variant parts may have fewer lanes or ports than the machine uses: record what it
  // uses as an override, so the chassis builds and says what it is.
  std::map<std::string, int> lanes, nvlinks, sockets;
  std::map<std::string, int> widest;
  for (const auto& l : spec.links) {
    const auto* t = cat_.find_link_tech(l.tech);
    if (!t) continue;
    for (const auto& end : {l.a, l.b}) {
      if (t->family == hw::LinkFamily::kPcie)
        lanes[end] += l.width, widest[end] = std::max(widest[end], l.width);
      if (t->family == hw::LinkFamily::kNvlink) nvlinks[end] += l.width;
      if (t->family == hw::LinkFamily::kSocket) sockets[end] += l.width;
    }
  }
  for (auto& ns : spec.nodes) {
    const hw::Part* p = cat_.find_part(ns.part);
    if (!p) continue;
    auto raise = [&](const char* field, int used) {
      if (p->has(field) && used > p->get(field)) ns.overrides[field] = used;
    };
    if (ns.kind == "cpu") raise("pcie_lanes", lanes[ns.id]);
    if (ns.kind == "pcie_switch") raise("lanes", lanes[ns.id]);
    if (ns.kind == "gpu" || ns.kind == "nic" || ns.kind == "nvme")
      raise("pcie_width", widest[ns.id]);
    if (ns.kind == "gpu") raise("nvlink_links", nvlinks[ns.id]);
    if (ns.kind == "nvswitch") raise("ports", nvlinks[ns.id]);
    if (ns.kind == "cpu") raise("socket_links", sockets[ns.id]);
  }
}

}  // namespace detail

Discovery discover(const Machine& machine, const std::string& name, const hw::Catalog& catalog) {
  Discovery out;
  out.spec.name = name;
  out.spec.description = "Discovered by linkwise probe";
  out.spec.sources.push_back(
      "linkwise probe: sysfs PCIe tree, CPU topology" +
      std::string(machine.nvml.read ? ", NVML NVLink state" : " (NVLink not read)"));
  Folder f(machine, catalog, out);
  f.run();
  return out;
}

}  // namespace linkwise::probe
