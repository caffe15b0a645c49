// export_nccl_topology(): a chassis -> NCCL's topology XML (NCCL_TOPO_FILE).
#include <fmt/format.h>

#include <algorithm>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <map>
#include <set>
#include <sstream>

#include "linkwise/probe/nccl_xml.h"
#include "linkwise/topo/paths.h"
#include "pci_ids.h"

namespace linkwise::probe {

namespace {

using topo::NodeKind;

using boost::property_tree::ptree;

// Sets the attributes of `element` in the order given (NCCL reads them by name; order kept for
// readers).
void set_attrs(ptree& element, std::initializer_list<std::pair<const char*, std::string>> attrs) {
  for (const auto& [key, value] : attrs) element.put(std::string("<xmlattr>.") + key, value);
}

// Transfer rate per generation as sysfs writes it (PCI Express Base Specification, §4.2).
const char* speed_text(int gen) {
  static const char* kText[] = {"",
                                "2.5 GT/s PCIe",
                                "5.0 GT/s PCIe",
                                "8.0 GT/s PCIe",
                                "16.0 GT/s PCIe",
                                "32.0 GT/s PCIe",
                                "64.0 GT/s PCIe"};
  return gen >= 1 && gen <= 6 ? kText[gen] : "";
}

// The <cpu> attributes NCCL's ncclTopoAddCpu() (src/graph/topo.cc) reads: numaid and arch always;
// on x86_64 the vendor, and familyid and modelid for Intel (familyid for AMD), with xmlGetAttrInt,
// which fails when the attribute is missing. Written in decimal, as NCCL's own dump does.
void set_cpu_attrs(ptree& cpu, const topo::Node& n) {
  set_attrs(cpu, {{"numaid", std::to_string(std::max(0, n.numa))}});
  std::string vendor;
  int family = 0, model = 0;
  if (!detail::cpuid_for_part(n.part->id, &vendor, &family, &model)) {
    // A CPU the CPUID table does not know: the closest known part of its vendor stands in.
    if (n.part->vendor != "Intel" && n.part->vendor != "AMD")
      return set_attrs(cpu, {{"arch", "arm64"}});
    std::string vendor_id = n.part->vendor == "AMD" ? "AuthenticAMD" : "GenuineIntel";
    const auto& gen = n.part->attr("pcie");
    int g = gen.size() > 4 ? gen.back() - '0' : 0;
    detail::cpuid_for_part(detail::closest_cpu_part(vendor_id, g), &vendor, &family, &model);
  }
  set_attrs(cpu, {{"arch", "x86_64"},
                  {"vendor", vendor},
                  {"familyid", std::to_string(family)},
                  {"modelid", std::to_string(model)}});
}

class Exporter {
 public:
  explicit Exporter(const topo::Chassis& c) : c_(c), f_(c) {}
  std::string run();
  /// "GPU0 0000:10:00.0" for each exported device whose bus ID was made up (no pci_address in the
  /// chassis).
  std::vector<std::string> synthetic_names() const {
    std::vector<std::string> out;
    for (int n : synthetic_)
      if (c_.node(n).kind != NodeKind::kCpu && c_.node(n).kind != NodeKind::kNvSwitch)
        out.push_back(c_.display_name(n) + " " + bus_.at(n));
    return out;
  }

 private:
  int parent(int n) const;  // the PCIe parent, retimers skipped
  const topo::Link* uplink(int n) const;
  void node(int n, ptree& parent_element);
  void gpu_body(int n, ptree& pci);
  std::string bus(int n);

  const topo::Chassis& c_;
  topo::PathFinder f_;
  std::map<int, std::string> bus_;
  std::map<int, std::vector<int>> children_;
  int next_bus_ = 0x10;
  std::set<int> synthetic_;  ///< nodes whose bus ID bus() made up
  int gpu_index_ = 0, nic_index_ = 0;
};

int Exporter::parent(int n) const {
  int p = f_.pcie_parent(n);
  while (p >= 0 && c_.node(p).kind == NodeKind::kRetimer) p = f_.pcie_parent(p);
  return p;
}

const topo::Link* Exporter::uplink(int n) const {
  int l = f_.pcie_uplink(n);
  return l >= 0 ? &c_.link(l) : nullptr;
}

std::string Exporter::bus(int n) {
  auto& b = bus_[n];
  if (b.empty()) {
    b = c_.node(n).pci_address;
    if (b.empty()) {
      b = fmt::format("{:04x}:{:02x}:00.0", next_bus_ >> 8, next_bus_ & 0xff), ++next_bus_;
      synthetic_.insert(n);
    }
  }
  return b;
}

void Exporter::gpu_body(int n, ptree& pci) {
  const auto& node = c_.node(n);
  static const std::map<std::string, int> kSm = {{"volta", 70}, {"turing", 75}, {"ampere", 80},
                                                 {"ada", 89},   {"hopper", 90}, {"blackwell", 100}};
  std::string arch = node.part->attr("arch");
  int sm = kSm.count(arch) ? kSm.at(arch) : 90;
  ptree& gpu = pci.add_child("gpu", ptree());
  set_attrs(gpu, {{"dev", std::to_string(gpu_index_)},
                  {"sm", std::to_string(sm)},
                  {"rank", std::to_string(gpu_index_)},
                  {"gdr", "1"}});
  ++gpu_index_;
  std::map<int, int> count;  // other node -> NVLinks
  for (int li : c_.incident(n)) {
    const auto& l = c_.link(li);
    if (l.family() == hw::LinkFamily::kNvlink) count[l.other(n)] += l.width;
  }
  for (const auto& [other, k] : count) {
    bool to_gpu = c_.node(other).kind == NodeKind::kGpu;
    set_attrs(gpu.add_child("nvlink", ptree()), {{"target", bus(other)},
                                                 {"count", std::to_string(k)},
                                                 {"tclass", to_gpu ? "0x030200" : "0x068000"}});
  }
}

void Exporter::node(int n, ptree& parent_element) {
  const auto& nd = c_.node(n);
  static const std::map<NodeKind, const char*> kClass = {{NodeKind::kGpu, "0x030200"},
                                                         {NodeKind::kNic, "0x020700"},
                                                         {NodeKind::kNvme, "0x010802"},
                                                         {NodeKind::kPcieSwitch, "0x060400"}};
  if (!kClass.count(nd.kind)) return;
  unsigned vendor = 0, device = 0;
  detail::ids_for_part(nd.part->id, &vendor, &device);  // optional to NCCL: left out when not known
  const topo::Link* up = uplink(n);
  // As NCCL reads a live machine (sysfs current_link_speed/width): the trained state where the
  // chassis records one and is built as built, else the design.
  const bool trained = up && up->as_built;
  int gen = up && up->family() == hw::LinkFamily::kPcie
                ? (trained && up->trained_gen > 0 ? up->trained_gen : up->tech->generation)
                : 0;
  const int width = !up ? 0 : trained && up->trained_width > 0 ? up->trained_width : up->width;
  if (gen == 0) {
    // NCCL requires link_speed; without a PCIe uplink, the part's own PCIe generation.
    const auto* t = hw::Catalog::builtin().find_link_tech(nd.part->attr("pcie"));
    gen = t ? t->generation : 0;
  }
  ptree& pci = parent_element.add_child("pci", ptree());
  set_attrs(pci, {{"busid", bus(n)}, {"class", kClass.at(nd.kind)}});
  if (vendor)
    set_attrs(pci, {{"vendor", fmt::format("0x{:04x}", vendor)},
                    {"device", fmt::format("0x{:04x}", device)}});
  if (synthetic_.count(n)) set_attrs(pci, {{"linkwise_busid", "synthetic"}});
  set_attrs(pci, {{"link_speed", speed_text(gen)}, {"link_width", std::to_string(width)}});
  if (parent(n) >= 0 && c_.node(parent(n)).kind == NodeKind::kCpu) {
    // The link that leaves the CPU (through any retimers) carries the host bridge number.
    int top = n;
    while (f_.pcie_parent(top) >= 0 && c_.node(f_.pcie_parent(top)).kind != NodeKind::kCpu)
      top = f_.pcie_parent(top);
    const topo::Link* cl = uplink(top);
    if (cl && cl->root_complex >= 0)
      set_attrs(pci, {{"linkwise_rc", std::to_string(cl->root_complex)}});
  }
  if (nd.kind == NodeKind::kGpu) gpu_body(n, pci);
  if (nd.kind == NodeKind::kNic) {
    std::string tech_id = nd.part->attr("network");
    double bytes = 0;
    for (const auto& t : hw::Catalog::builtin().link_techs())
      if (t.id == tech_id) bytes = t.unit_bytes_per_s.value;
    set_attrs(pci.add_child("nic", ptree()).add_child("net", ptree()),
              {{"name", fmt::format("mlx5_{}", nic_index_)},
               {"dev", std::to_string(nic_index_)},
               {"speed", fmt::format("{:.0f}", bytes * 8 / 1e6)},
               {"port", "1"},
               {"latency", "0"},
               {"guid", fmt::format("0x{:x}", nic_index_ + 1)},
               {"maxconn", "131072"},
               {"gdr", "1"}});
    ++nic_index_;
  }
  for (int ch : children_[n]) node(ch, pci);
}

std::string Exporter::run() {
  for (const auto& n : c_.nodes())
    if (n.box == 0 && n.kind != NodeKind::kRetimer && parent(n.index) >= 0)
      children_[parent(n.index)].push_back(n.index);
  ptree doc;
  ptree& system = doc.add_child("system", ptree());
  set_attrs(system, {{"version", "1"}});
  for (int cpu : c_.nodes_of_kind(NodeKind::kCpu)) {
    const auto& n = c_.node(cpu);
    if (n.box != 0) continue;
    ptree& element = system.add_child("cpu", ptree());
    set_cpu_attrs(element, n);
    for (int ch : children_[cpu]) node(ch, element);
  }
  std::ostringstream out;
  boost::property_tree::write_xml(
      out, doc, boost::property_tree::xml_writer_make_settings<std::string>(' ', 2));
  // NCCL's reader (src/graph/xml.cc, xmlGetNode) takes elements only: it fails on the XML
  // declaration PropertyTree writes first, so that line is left out, as NCCL's own dump does.
  std::string xml = out.str();
  return xml.substr(xml.find('\n') + 1);
}

}  // namespace

std::string export_nccl_topology(const topo::Chassis& chassis,
                                 std::vector<std::string>* synthetic) {
  Exporter e(chassis);
  std::string xml = e.run();
  if (synthetic) *synthetic = e.synthetic_names();
  return xml;
}

}  // namespace linkwise::probe
