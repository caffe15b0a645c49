// import_nccl_topology(): NCCL's topology XML -> chassis spec.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>

#include "linkwise/probe/machine.h"
#include "linkwise/probe/nccl_xml.h"
#include "linkwise/util/limits.h"
#include "pci_ids.h"
#include "spec_util.h"

namespace linkwise::probe {

namespace pt = boost::property_tree;

namespace {

std::string attr(const pt::ptree& n, const char* key) {
  return n.get<std::string>(std::string("<xmlattr>.") + key, "");
}

int attr_int(const pt::ptree& n, const char* key, int fallback) {
  std::string s = attr(n, key);
  if (s.empty()) return fallback;
  try {
    std::size_t used = 0;
    int v = std::stoi(s, &used, 0);
    return used == s.size() ? v : fallback;
  } catch (const std::exception&) {
    return fallback;
  }
}

// The 1-based line of the first `needle` in `text`, 0 when it is not there: NCCL topology files
// name each PCI function once by busid, which locates an element for error messages. With `then`:
// the line of the first `then` after `needle` (an element inside the one `needle` names).
int line_of(const std::string& text, const std::string& needle, const std::string& then = "") {
  auto at = text.find(needle);
  if (at != std::string::npos && !then.empty()) {
    auto next = text.find(then, at);
    at = next == std::string::npos ? at : next;
  }
  return at == std::string::npos
             ? 0
             : 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
}

unsigned attr_hex(const pt::ptree& n, const char* key) {
  return parse_hex(attr(n, key)).value_or(0);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class Importer {
 public:
  Importer(const hw::Catalog& cat, std::string file, const std::string& text)
      : cat_(cat), file_(std::move(file)), text_(text) {}
  void system(const pt::ptree& sys);
  topo::ChassisSpec spec;
  std::vector<std::string> notes;

 private:
  struct Nv {
    std::string gpu, gpu_bus, raw_bus, target, raw_target, tclass;
    int count = 0;
  };
  void cpu(const pt::ptree& c);
  void pci(const pt::ptree& p, const std::string& parent, bool under_cpu);
  std::string add(const std::string& prefix, int& counter, const std::string& kind,
                  const std::string& part, const std::string& bus, const std::string& label);
  void nvlinks();
  int pcie_width(const pt::ptree& p, const std::string& tech, const hw::Part* part) const;
  SourceLocation at(const std::string& raw_bus) const {
    return {file_, line_of(text_, "busid=\"" + raw_bus + "\""), 0};
  }

  const hw::Catalog& cat_;
  std::string file_;
  const std::string& text_;
  int cpus_ = 0, gpus_ = 0, sws_ = 0, nics_ = 0, nvmes_ = 0, nvsws_ = 0;
  std::map<std::string, std::string> id_of_bus_;
  std::vector<Nv> nv_;
  std::string cpu_part_;
};

std::string Importer::add(const std::string& prefix, int& counter, const std::string& kind,
                          const std::string& part, const std::string& bus,
                          const std::string& label) {
  topo::NodeSpec n;
  n.id = fmt::format("{}{}", prefix, counter++);
  n.kind = kind;
  n.part = part;
  n.pci_address = bus;
  n.label = label;
  n.where = {file_, 0, 0};
  spec.nodes.push_back(n);
  if (!bus.empty()) id_of_bus_[bus] = n.id;
  return n.id;
}

void Importer::cpu(const pt::ptree& c) {
  std::string vendor = attr(c, "vendor");
  std::string part =
      detail::cpu_part_for_cpuid(vendor, attr_int(c, "familyid", -1), attr_int(c, "modelid", -1));
  std::string label = "from NCCL topology";
  if (part.empty()) {
    part = detail::closest_cpu_part(vendor, 0);
    label =
        fmt::format("CPU {} family {} model {} is not in the catalog: modelled as {}",
                    vendor.empty() ? "?" : vendor, attr(c, "familyid"), attr(c, "modelid"), part);
  }
  int numa = attr_int(c, "numaid", -1);
  std::string id = add("cpu", cpus_, "cpu", part, "", label);
  spec.nodes.back().numa = numa >= 0 ? numa : cpus_ - 1;
  for (const auto& [tag, child] : c)
    if (tag == "pci") pci(child, id, true);
}

void Importer::pci(const pt::ptree& p, const std::string& parent, bool under_cpu) {
  std::string bus = lower(attr(p, "busid"));
  unsigned cls = attr_hex(p, "class"), vendor = attr_hex(p, "vendor"),
           device = attr_hex(p, "device");
  int gen = parse_link_speed(attr(p, "link_speed"));
  bool has_pci = p.count("pci") > 0, has_gpu = p.count("gpu") > 0, has_nic = p.count("nic") > 0;
  detail::DeviceKind k = has_gpu || (cls >> 16) == 0x03   ? detail::DeviceKind::kGpu
                         : has_nic || (cls >> 16) == 0x02 ? detail::DeviceKind::kNic
                         : cls == 0x010802                ? detail::DeviceKind::kNvme
                         : has_pci                        ? detail::DeviceKind::kBridge
                                                          : detail::DeviceKind::kOther;
  if (k == detail::DeviceKind::kOther) return;
  auto known = detail::known_part(vendor, device);
  std::string part = known.part ? known.part : "";
  if (part.empty() && k == detail::DeviceKind::kNic && has_nic) {
    int mbps = attr_int(p.get_child("nic").get_child("net", pt::ptree()), "speed", 0);
    part = mbps >= 800000   ? "connectx-8"
           : mbps >= 400000 ? "connectx-7"
           : mbps >= 200000 ? "connectx-6"
                            : "";
  }
  if (part.empty() && has_gpu) {
    int sm = attr_int(p.get_child("gpu"), "sm", 0);
    part = sm >= 100  ? "b200"
           : sm >= 90 ? "h100-sxm"
           : sm == 80 ? "a100-sxm"
           : sm == 70 ? "v100-sxm2"
                      : "";
  }
  std::string label = "from NCCL topology";
  if (part.empty()) {
    part = detail::closest_part(k, vendor, gen);
    label = fmt::format("unknown device {:04x}:{:04x}: modelled as {}", vendor, device, part);
  }
  std::string id;
  if (k == detail::DeviceKind::kGpu) id = add("gpu", gpus_, "gpu", part, bus, label);
  if (k == detail::DeviceKind::kNic) id = add("nic", nics_, "nic", part, bus, label);
  if (k == detail::DeviceKind::kNvme) id = add("nvme", nvmes_, "nvme", part, bus, label);
  if (k == detail::DeviceKind::kBridge) id = add("sw", sws_, "pcie_switch", part, bus, label);
  topo::LinkSpec l;
  l.a = parent;
  l.b = id;
  l.where = {file_, 0, 0};
  const hw::Part* pp = cat_.find_part(part);
  l.tech = gen > 0 ? fmt::format("pcie{}", gen)
                   : (pp && !pp->attr("pcie").empty() ? pp->attr("pcie") : "pcie4");
  l.width = pcie_width(p, l.tech, pp);
  if (under_cpu) {
    int rc = attr_int(p, "linkwise_rc", -1);
    if (rc >= 0) l.root_complex = rc;
  }
  spec.links.push_back(l);
  if (has_gpu)
    for (const auto& [tag, nv] : p.get_child("gpu"))
      if (tag == "nvlink")
        nv_.push_back({id, bus, attr(p, "busid"), lower(attr(nv, "target")), attr(nv, "target"),
                       lower(attr(nv, "tclass")), attr_int(nv, "count", 1)});
  for (const auto& [tag, child] : p)
    if (tag == "pci") pci(child, id, false);
}

// link_width as NCCL reads it (xmlGetAttrInt; 0 means "not known": the part's own width), checked
// against the widths the PCIe technology has.
int Importer::pcie_width(const pt::ptree& p, const std::string& tech_id,
                         const hw::Part* part) const {
  std::string text = attr(p, "link_width");
  int width = attr_int(p, "link_width", -1);
  if (text.empty() || width == 0)
    return part && part->has("pcie_width") ? static_cast<int>(part->get("pcie_width")) : 16;
  const auto& widths = cat_.link_tech(tech_id).widths;
  if (std::find(widths.begin(), widths.end(), width) == widths.end())
    throw InputError(
        fmt::format("<pci busid=\"{}\">: link_width \"{}\" is not a {} link width ({})",
                    attr(p, "busid"), text, tech_id, fmt::join(widths, ", ")),
        at(attr(p, "busid")));
  return width;
}

void Importer::nvlinks() {
  std::map<std::string, std::string> switches;
  for (const auto& n : nv_) {
    const topo::NodeSpec* gpu = nullptr;
    for (const auto& ns : spec.nodes)
      if (ns.id == n.gpu) gpu = &ns;
    const hw::Part* gp = gpu ? cat_.find_part(gpu->part) : nullptr;
    std::string tech = gp && !gp->attr("nvlink").empty() ? gp->attr("nvlink") : "nvlink4";
    auto it = id_of_bus_.find(n.target);
    std::string other;
    if (it != id_of_bus_.end() && it->second.rfind("gpu", 0) == 0) {
      if (n.target < n.gpu_bus) continue;  // each GPU pair once; both ends list the link
      other = it->second;
    } else if (n.tclass.empty() || n.tclass == "0x068000") {
      auto& sw = switches[n.target];
      if (sw.empty()) {
        static const std::map<std::string, std::string> kSwitchFor = {{"nvlink2", "nvswitch-gen1"},
                                                                      {"nvlink3", "nvswitch-gen2"},
                                                                      {"nvlink4", "nvswitch-gen3"},
                                                                      {"nvlink5", "nvswitch-gen4"}};
        sw = add("nvsw", nvsws_, "nvswitch",
                 kSwitchFor.count(tech) ? kSwitchFor.at(tech) : "nvswitch-gen3", n.target,
                 "NVSwitch, from NCCL topology");
      }
      other = sw;
    } else {
      // NCCL drops an NVLink whose GPU target it cannot find (ncclTopoAddNvLinks): a dump of a job
      // that used some of the box's GPUs lists links to the others. NVLinks to CPUs (POWER9) are
      // not modelled.
      bool gpu_target = n.tclass.rfind("0x03", 0) == 0;
      notes.push_back(fmt::format(
          "{}:{}: NVLink from GPU {} to {} (tclass {}) left out: {}", file_,
          line_of(text_, "busid=\"" + n.raw_bus + "\"", "target=\"" + n.raw_target + "\""),
          n.gpu_bus, n.target.empty() ? "?" : n.target, n.tclass.empty() ? "?" : n.tclass,
          gpu_target               ? "no GPU with that busid in the file"
          : n.tclass == "0x068001" ? "NVLinks to a CPU are not modelled"
                                   : "not a GPU or NVSwitch target"));
      continue;
    }
    // Checked here, before the counts are summed per GPU and switch.
    if (n.count < 1 || n.count > limits::kMaxNvlinkLinks)
      throw InputError(
          fmt::format("<nvlink target=\"{}\">: count {} is not 1 to {}",
                      limits::quote_value(n.raw_target), n.count, limits::kMaxNvlinkLinks),
          {file_, line_of(text_, "busid=\"" + n.raw_bus + "\"", "target=\"" + n.raw_target + "\""),
           0});
    topo::LinkSpec l;
    l.a = n.gpu;
    l.b = other;
    l.tech = tech;
    l.width = n.count;
    l.where = {file_, 0, 0};
    spec.links.push_back(l);
  }
}

void Importer::system(const pt::ptree& sys) {
  for (const auto& [tag, child] : sys)
    if (tag == "cpu") cpu(child);
  if (cpus_ == 0) throw InputError("NCCL topology has no <cpu> element", {file_, 0, 0});
  nvlinks();
  std::vector<std::string> cpus;
  for (const auto& n : spec.nodes)
    if (n.kind == "cpu") cpus.push_back(n.id);
  const hw::Part* p = cat_.find_part(spec.nodes.front().part);
  std::string tech = p && !p->attr("socket").empty() ? p->attr("socket") : "upi-16";
  int width = std::max(1, static_cast<int>(p ? p->get("socket_links", 1) : 1) /
                              std::max(1, static_cast<int>(cpus.size()) - 1));
  for (std::size_t i = 0; i < cpus.size(); ++i)
    for (std::size_t j = i + 1; j < cpus.size(); ++j) {
      topo::LinkSpec l;
      l.a = cpus[i];
      l.b = cpus[j];
      l.tech = tech;
      l.width = width;
      spec.links.push_back(l);
    }
  detail::fit_capacities(spec, cat_);
}

// Refuses elements nested deeper than limits::kMaxNestingDepth before the (recursive) XML parser
// sees them, naming the line. Comments, CDATA, processing instructions and quoted attribute values
// are skipped; end tags and empty-element tags close what they close.
void check_xml_depth(const std::string& text, const std::string& filename) {
  int depth = 0, line = 1;
  auto skip_to = [&](std::size_t& i, const char* end) {
    std::size_t at = text.find(end, i);
    std::size_t stop = at == std::string::npos ? text.size() : at + std::strlen(end);
    line += static_cast<int>(std::count(text.begin() + static_cast<std::ptrdiff_t>(i),
                                        text.begin() + static_cast<std::ptrdiff_t>(stop), '\n'));
    i = stop;
  };
  for (std::size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '\n') ++line;
    if (c != '<') {
      ++i;
      continue;
    }
    if (text.compare(i, 4, "<!--") == 0)
      skip_to(i, "-->");
    else if (text.compare(i, 9, "<![CDATA[") == 0)
      skip_to(i, "]]>");
    else if (text.compare(i, 2, "<?") == 0)
      skip_to(i, "?>");
    else if (text.compare(i, 2, "<!") == 0)
      skip_to(i, ">");
    else if (text.compare(i, 2, "</") == 0) {
      --depth;
      skip_to(i, ">");
    } else {
      // A start tag: find its end outside quoted attribute values.
      const int tag_line = line;
      std::size_t j = i + 1;
      char quote = 0;
      for (; j < text.size(); ++j) {
        if (text[j] == '\n') ++line;
        if (quote) {
          if (text[j] == quote) quote = 0;
        } else if (text[j] == '"' || text[j] == '\'') {
          quote = text[j];
        } else if (text[j] == '>') {
          break;
        }
      }
      bool empty = j < text.size() && j > i && text[j - 1] == '/';
      if (!empty && ++depth > limits::kMaxNestingDepth)
        throw InputError(
            fmt::format("XML nested deeper than {} elements", limits::kMaxNestingDepth),
            {filename, tag_line, 0});
      i = j + 1;
    }
  }
}

}  // namespace

topo::ChassisSpec import_nccl_topology(const std::string& xml_text, const std::string& filename,
                                       const std::string& name, std::vector<std::string>* notes) {
  check_xml_depth(xml_text, filename);
  pt::ptree tree;
  std::istringstream in(xml_text);
  try {
    pt::read_xml(in, tree, pt::xml_parser::trim_whitespace);
  } catch (const pt::xml_parser_error& e) {
    throw InputError(fmt::format("malformed NCCL topology XML: {}", e.message()),
                     {filename, static_cast<int>(e.line()), 0});
  }
  auto sys = tree.get_child_optional("system");
  if (!sys) throw InputError("not an NCCL topology: no <system> element", {filename, 1, 0});
  Importer imp(hw::Catalog::builtin(), filename, xml_text);
  imp.spec.name = name.empty() ? std::filesystem::path(filename).stem().string() : name;
  imp.spec.description =
      "Imported from NCCL topology XML " + std::filesystem::path(filename).filename().string();
  imp.spec.sources.push_back("NCCL topology dump (NCCL_TOPO_DUMP_FILE): " + filename);
  imp.system(*sys);
  if (notes) notes->insert(notes->end(), imp.notes.begin(), imp.notes.end());
  return imp.spec;
}

}  // namespace linkwise::probe
