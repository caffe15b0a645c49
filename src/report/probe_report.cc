#include "linkwise/report/probe_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "linkwise/report/json.h"
#include "linkwise/report/table.h"
#include "linkwise/report/topo_report.h"
#include "linkwise/util/verbosity.h"

namespace linkwise::report {

using namespace probe;  // the discovery's types, read here

namespace {

// A link's state for the table; "?" for what could not be read.
std::string link_text(int gen, int width) {
  if (gen <= 0 && width <= 0) return "?";
  return fmt::format("{} {}", gen > 0 ? fmt::format("Gen{}", gen) : "Gen?",
                     width > 0 ? fmt::format("x{}", width) : "x?");
}

const DiscoveredLink* uplink_of(const Discovery& d, const std::string& id) {
  for (const auto& l : d.pcie_links)
    if (l.lower == id) return &l;
  return nullptr;
}

}  // namespace

std::string probe_text(const Machine& m, const Discovery& d) {
  std::string s;
  s += fmt::format(
      "CPU: {} socket(s){}{}\n", m.sockets.size(), m.cpu_model.empty() ? "" : ", " + m.cpu_model,
      m.numa_socket.empty() ? "" : fmt::format(", {} NUMA node(s)", m.numa_socket.size()));
  Table t;
  t.header({"node", "kind", "part", "pci", "above", "link now", "link max", "slot path"});
  for (const auto& n : d.nodes) {
    const auto* l = uplink_of(d, n.id);
    t.row({n.id, n.kind, n.part + (n.part_guessed ? "?" : ""), n.address.empty() ? "-" : n.address,
           l ? l->upper : "-", l ? link_text(l->cur_gen, l->cur_width) : "-",
           l ? link_text(l->max_gen, l->max_width) : "-", n.slot_path.empty() ? "-" : n.slot_path});
  }
  s += t.render();
  bool guessed = false;
  for (const auto& n : d.nodes) guessed = guessed || n.part_guessed;
  if (guessed)
    s +=
        "(? = not in the catalog's id table: the closest part of its kind; see the node's label)\n";
  s += fmt::format("PCI functions not in the chassis: {}\n", d.other_devices.size());
  s += fmt::format(
      "IOMMU: {}{}\n", m.iommu.mode,
      m.iommu.evidence.empty() ? "" : fmt::format(" ({})", fmt::join(m.iommu.evidence, "; ")));
  if (m.nvml.read) {
    int up = 0;
    for (const auto& l : m.nvml.links) up += l.active ? 1 : 0;
    s += fmt::format("NVLink: {} GPU(s) through NVML, {} of {} links up\n", m.nvml.gpus.size(), up,
                     m.nvml.links.size());
  } else {
    s += fmt::format("NVLink: not read ({})\n", m.nvml.why_not);
  }
  std::vector<std::string> notes = m.notes;
  notes.insert(notes.end(), d.notes.begin(), d.notes.end());
  for (const auto& dev : m.devices)
    for (const auto& n : dev.notes) notes.push_back(dev.address + ": " + n);
  if (!notes.empty() && !quiet()) {
    s += "Notes:\n";
    for (const auto& n : notes) s += "  " + n + "\n";
  }
  return fit_width(s);
}

nlohmann::json probe_json(const Machine& m, const Discovery& d) {
  nlohmann::json j;
  j["chassis"] = d.spec.name;
  j["cpu_model"] = m.cpu_model;
  j["sockets"] = nlohmann::json::array();
  for (const auto& s : m.sockets)
    j["sockets"].push_back({{"id", s.id}, {"numa_nodes", s.numa_nodes}, {"cpus", s.cpus}});
  j["devices"] = nlohmann::json::array();
  for (const auto& n : d.nodes)
    j["devices"].push_back({{"id", n.id},
                            {"kind", n.kind},
                            {"part", n.part},
                            {"part_guessed", n.part_guessed},
                            {"address", n.address},
                            {"slot_path", n.slot_path},
                            {"description", n.description}});
  j["links"] = nlohmann::json::array();
  for (const auto& l : d.pcie_links)
    j["links"].push_back({{"upper", l.upper},
                          {"lower", l.lower},
                          {"device", l.device_address},
                          {"port", l.port_address},
                          {"cur_gen", l.cur_gen},
                          {"cur_width", l.cur_width},
                          {"max_gen", l.max_gen},
                          {"max_width", l.max_width},
                          {"slot_path", l.slot_path}});
  j["iommu"] = {{"mode", m.iommu.mode}, {"evidence", m.iommu.evidence}};
  nlohmann::json nv = {
      {"read", m.nvml.read}, {"why_not", m.nvml.why_not}, {"links", nlohmann::json::array()}};
  for (const auto& l : m.nvml.links)
    nv["links"].push_back({{"gpu", l.gpu},
                           {"link", l.link},
                           {"active", l.active},
                           {"generation", l.generation},
                           {"remote", l.remote},
                           {"errors", l.errors}});
  j["nvlink"] = nv;
  j["other_devices"] = d.other_devices;
  std::vector<std::string> notes = m.notes;
  notes.insert(notes.end(), d.notes.begin(), d.notes.end());
  for (const auto& dev : m.devices)
    for (const auto& n : dev.notes) notes.push_back(dev.address + ": " + n);
  j["notes"] = notes;
  return with_schema(std::move(j));
}

std::string check_text(const CheckReport& r) {
  std::string s;
  for (const auto& f : r.findings) {
    s += fmt::format("{:<7} {}: {}\n", to_string(f.severity), f.kind, f.message);
    if (!f.slot_path.empty()) s += fmt::format("        at {}\n", f.slot_path);
    if (!f.advice.empty()) s += fmt::format("        -> {}\n", f.advice);
  }
  int unchecked =
      static_cast<int>(std::count_if(r.findings.begin(), r.findings.end(), [](const Finding& f) {
        return f.kind == "design-not-checked";
      }));
  s += fmt::format("{}: {} fault(s), {} warning(s){}\n", r.healthy() ? "HEALTHY" : "UNHEALTHY",
                   r.count(Severity::kFault), r.count(Severity::kWarning),
                   unchecked ? fmt::format(", {} design item(s) not checked", unchecked) : "");
  return fit_width(s);
}

nlohmann::json check_json(const CheckReport& r) {
  nlohmann::json j;
  j["healthy"] = r.healthy();  // the findings say which are faults and warnings (lists, not counts)
  j["findings"] = nlohmann::json::array();
  for (const auto& f : r.findings)
    j["findings"].push_back({{"severity", to_string(f.severity)},
                             {"kind", f.kind},
                             {"address", f.address},
                             {"slot_path", f.slot_path},
                             {"message", f.message},
                             {"advice", f.advice}});
  return with_schema(std::move(j));
}

std::string imported_text(const topo::Chassis& chassis, const topo::TopoAnalysis& a,
                          const std::vector<std::string>& notes) {
  std::string s = topo_text(chassis, a);
  if (!notes.empty() && !quiet()) {
    s += "Notes:\n";
    for (const auto& n : notes) s += "  " + n + "\n";
  }
  return s;
}

nlohmann::json imported_json(const topo::Chassis& chassis, const topo::TopoAnalysis& a,
                             const std::vector<std::string>& notes) {
  auto j = topo_json(chassis, a);
  j["notes"] = notes;
  return j;
}

std::string nccl_synthetic_note(const std::vector<std::string>& synthetic) {
  if (synthetic.empty()) return "";
  return fmt::format(
      "NCCL topology: {} bus ID(s) are synthetic (the chassis gives no pci_address; marked "
      "linkwise_busid=\"synthetic\"): {}. NCCL matches GPUs and NICs by bus ID: put the "
      "machine's in (nvidia-smi --query-gpu=pci.bus_id --format=csv)\n",
      synthetic.size(), fmt::join(synthetic, ", "));
}

std::string probe_output(const probe::ProbeRun& run, bool json) {
  using Kind = probe::ProbeRun::Kind;
  std::string out;
  if (run.kind == Kind::kImported) {
    out = json ? imported_json(*run.chassis, *run.analysis, run.notes).dump(2) + "\n"
               : imported_text(*run.chassis, *run.analysis, run.notes);
  } else if (run.kind == Kind::kCheck) {
    out = json ? check_json(*run.check).dump(2) + "\n"
               : probe_text(run.machine, run.discovery) + "\n" + check_text(*run.check);
  } else {
    out = json ? probe_json(run.machine, run.discovery).dump(2) + "\n"
               : probe_text(run.machine, run.discovery);
  }
  if (!json) out += fit_width(nccl_synthetic_note(run.synthetic));
  return out;
}

}  // namespace linkwise::report
