#include "linkwise/report/topo_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>
#include <sstream>

#include "linkwise/report/budget_report.h"
#include "linkwise/report/json.h"
#include "linkwise/report/table.h"
#include "linkwise/util/verbosity.h"

namespace linkwise::report {

namespace {
double gb(double bytes_per_s) { return bytes_per_s / 1e9; }
constexpr std::size_t kMatrixMaxDevices = 40;
}  // namespace

std::string nvidia_smi_matrix(const topo::Chassis& c, const topo::TopoAnalysis& a) {
  // As `nvidia-smi topo -m` prints (driver 535 and later): an underlined header, tab-separated,
  // GPUs then NICs of one machine (box 0), the self cell " X ", GPU rows ending in CPU Affinity,
  // NUMA Affinity, an empty cell and GPU NUMA ID (N/A: no GPU here has its memory as a NUMA node),
  // the Legend, the NIC Legend with each NIC's RDMA device name.
  std::vector<std::size_t> rows;
  std::vector<std::string> nic_names;
  for (std::size_t i = 0; i < a.devices.size(); ++i) {
    int node = c.find_display(a.devices[i]);
    if (node < 0 || c.node(node).box != 0) continue;
    const auto kind = c.node(node).kind;
    if (kind != topo::NodeKind::kGpu && kind != topo::NodeKind::kNic) continue;
    rows.push_back(i);
    if (kind == topo::NodeKind::kNic) {
      const auto& vendor = c.node(node).part->vendor;
      const bool mlx = vendor.find("Mellanox") != std::string::npos ||
                       vendor.find("NVIDIA") != std::string::npos;
      nic_names.push_back(
          fmt::format("  {}: {}", a.devices[i],
                      mlx ? fmt::format("mlx5_{}", nic_names.size()) : c.node(node).name));
    }
  }
  if (rows.size() > kMatrixMaxDevices)
    return fmt::format("(matrix of {} GPUs and NICs left out; --json has it)\n", rows.size());
  // The header is underlined (ESC[4m ... ESC[0m), as the driver prints it to a file too
  // (data/measured/h200-gpu-check-2026-11-30/nvidia-smi-topo.txt, driver 580).
  std::string out = "\t\x1b[4m";
  for (auto i : rows) out += a.devices[i] + "\t";
  out += "CPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n";
  for (auto i : rows) {
    out += a.devices[i];
    for (auto j : rows) out += "\t" + (i == j ? std::string(" X ") : a.matrix[i][j]);
    auto g = std::find_if(a.gpus.begin(), a.gpus.end(),
                          [&](const auto& x) { return x.name == a.devices[i]; });
    if (g != a.gpus.end())
      out += fmt::format("\t{}\t{}\t\tN/A", g->cpu_affinity.empty() ? "N/A" : g->cpu_affinity,
                         g->numa >= 0 ? std::to_string(g->numa) : "N/A");
    out += "\n";
  }
  out +=
      "\nLegend:\n\n"
      "  X    = Self\n"
      "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes "
      "(e.g., QPI/UPI)\n"
      "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges "
      "within a NUMA node\n"
      "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
      "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
      "Bridge)\n"
      "  PIX  = Connection traversing at most a single PCIe bridge\n"
      "  NV#  = Connection traversing a bonded set of # NVLinks\n";
  if (!nic_names.empty()) {
    out += "\nNIC Legend:\n\n";
    for (const auto& n : nic_names) out += n + "\n";
  }
  return out;
}

std::string topo_text(const topo::Chassis& c, const topo::TopoAnalysis& a) {
  // The nvidia-smi matrix first, byte for byte; linkwise's own sections after it.
  std::string out =
      fmt::format("{}{}\n", c.name(), c.description().empty() ? "" : ": " + c.description());
  if (a.boxes > 1)
    out += fmt::format("{} boxes joined by a network (the matrix shows box 0)\n", a.boxes);
  out += "\n";
  // Other devices (NVMe drives) by their nearest GPUs, path classes as in the matrix.
  std::vector<std::pair<std::string, std::string>> others;
  for (std::size_t i = 0; i < a.devices.size(); ++i) {
    int node = c.find_display(a.devices[i]);
    if (node < 0 || c.node(node).box != 0 || c.node(node).kind != topo::NodeKind::kNvme) continue;
    static const std::vector<std::string> order = {"PIX", "PXB", "PHB", "NODE", "SYS"};
    std::size_t best = order.size();
    std::vector<std::string> nearest;
    for (const auto& g : a.gpus) {
      auto k = static_cast<std::size_t>(std::find(a.devices.begin(), a.devices.end(), g.name) -
                                        a.devices.begin());
      if (k >= a.devices.size()) continue;
      auto rank = static_cast<std::size_t>(std::find(order.begin(), order.end(), a.matrix[i][k]) -
                                           order.begin());
      if (rank < best) nearest.clear(), best = rank;
      if (rank == best && rank < order.size()) nearest.push_back(g.name);
    }
    if (!nearest.empty())
      others.emplace_back(a.devices[i],
                          fmt::format("{} to {}", order[best], fmt::join(nearest, " ")));
  }
  if (!others.empty()) {
    out += "NVMe drives: nearest GPUs (path class as in the matrix)\n";
    for (const auto& [name, text] : others) out += fmt::format("  {}  {}\n", name, text);
    out += "\n";
  }
  if (!a.pairs.empty()) {
    out += "GPU pairs (GB/s per direction, line rate)\n";
    Table t;
    t.header({"pair", "class", "path GB/s", "max-flow GB/s", "hops"});
    std::size_t shown = 0;
    for (const auto& p : a.pairs) {
      if (shown++ >= 64) break;
      t.row({p.name_a + "-" + p.name_b, p.cls, fmt::format("{:.1f}", gb(p.path_bytes_per_s)),
             fmt::format("{:.1f}", gb(p.maxflow_bytes_per_s)), std::to_string(p.hops)});
    }
    out += t.render();
    if (a.pairs.size() > 64)
      out += fmt::format("... {} more pairs (--json lists {})\n", a.pairs.size() - 64,
                         a.pairs_complete
                             ? "all"
                             : "box 0's and those from box 0 to box 1; other boxes repeat them");
    out += "\n";
  }
  out += "GPU to host memory, NICs and NVMe (GB/s per direction)\n";
  {
    Table t;
    t.header({"GPU", "CPU", "host", "NICs", "NVMe"});
    std::size_t shown = 0;
    for (const auto& g : a.gpus) {
      if (shown++ >= 16) break;
      std::vector<std::string> nics, nvmes;
      for (const auto& p : g.nics)
        nics.push_back(fmt::format("{} {} {:.1f}", p.name, p.cls, gb(p.bytes_per_s)));
      for (const auto& p : g.nvmes)
        nvmes.push_back(fmt::format("{} {} {:.1f}", p.name, p.cls, gb(p.bytes_per_s)));
      auto brief = [](const std::vector<std::string>& v) {
        if (v.size() <= 2) return fmt::to_string(fmt::join(v, ", "));
        return v[0] + ", " + v[1] + fmt::format(", +{}", v.size() - 2);
      };
      t.row({g.name, g.cpu.empty() ? "-" : g.cpu, fmt::format("{:.1f}", gb(g.host_bytes_per_s)),
             brief(nics), brief(nvmes)});
    }
    out += t.render();
  }
  if (a.gpus.size() >= 2)
    out += fmt::format(
        "\nBisection bandwidth: {:.1f} GB/s per direction ({}; NVLink only {:.1f} GB/s)\n",
        gb(a.bisection_bytes_per_s),
        a.bisection_exact ? "exact" : "not exact: the least of the splits tried",
        gb(a.bisection_nvlink_bytes_per_s));
  else
    out += "\nBisection bandwidth: none (fewer than two GPUs)\n";
  out += "\nPCIe lanes\n";
  {
    Table t;
    t.header({"node", "part", "used", "available"});
    for (const auto& l : a.lanes)
      t.row({l.node, l.part, std::to_string(l.used), std::to_string(l.available)});
    out += t.render();
  }
  if (!a.warnings.empty() && !quiet()) {
    out += "\nWarnings\n";
    for (const auto& w : a.warnings) out += fmt::format("  [{}] {}\n", w.kind, w.message);
  }
  out += budget_text(a.budgets);
  return nvidia_smi_matrix(c, a) + "\n" + fit_width(out);
}

nlohmann::json topo_json(const topo::Chassis& c, const topo::TopoAnalysis& a) {
  using nlohmann::json;
  json j;
  j["chassis"] = a.chassis;
  j["boxes"] = a.boxes;
  j["gpus"] = json::array();
  for (const auto& g : a.gpus) {
    json nics = json::array(), nvmes = json::array();
    for (const auto& p : g.nics)
      nics.push_back({{"name", p.name}, {"class", p.cls}, {"GBps", gb(p.bytes_per_s)}});
    for (const auto& p : g.nvmes)
      nvmes.push_back({{"name", p.name}, {"class", p.cls}, {"GBps", gb(p.bytes_per_s)}});
    j["gpus"].push_back({{"name", g.name},
                         {"node", c.node(g.node).name},
                         {"part", g.part},
                         {"cpu", g.cpu},
                         {"numa", g.numa},
                         {"cpu_affinity", g.cpu_affinity},
                         {"host_GBps", gb(g.host_bytes_per_s)},
                         {"nics", nics},
                         {"nvme", nvmes}});
  }
  json m = json::object();
  for (std::size_t i = 0; i < a.devices.size(); ++i) {
    json row = json::object();
    for (std::size_t k = 0; k < a.devices.size(); ++k) row[a.devices[k]] = a.matrix[i][k];
    m[a.devices[i]] = row;
  }
  j["matrix"] = m;
  j["pairs"] = json::array();
  for (const auto& p : a.pairs)
    j["pairs"].push_back({{"a", p.name_a},
                          {"b", p.name_b},
                          {"class", p.cls},
                          {"path_GBps", gb(p.path_bytes_per_s)},
                          {"maxflow_GBps", gb(p.maxflow_bytes_per_s)},
                          {"hops", p.hops}});
  j["pairs_complete"] = a.pairs_complete;
  j["matrix_complete"] = a.matrix_complete;
  if (a.gpus.size() >= 2)
    j["bisection_GBps"] = gb(a.bisection_bytes_per_s);
  else
    j["bisection_GBps"] = nullptr;
  j["bisection_nvlink_GBps"] = gb(a.bisection_nvlink_bytes_per_s);
  j["bisection_exact"] = a.bisection_exact;
  j["lanes"] = json::array();
  for (const auto& l : a.lanes)
    j["lanes"].push_back(
        {{"node", l.node}, {"part", l.part}, {"used", l.used}, {"available", l.available}});
  j["warnings"] = json::array();
  for (const auto& w : a.warnings)
    j["warnings"].push_back({{"kind", w.kind}, {"message", w.message}});
  j["budgets"] = budget_json(a.budgets);
  return with_schema(std::move(j));
}

std::string topo_dot(const topo::Chassis& c) {
  // Boost.Graph writes the DOT (write_graphviz_dp) and quotes every name and label, so a name
  // holding
  // '"' or spaces still gives valid DOT.
  struct Vertex {
    std::string name, shape, label;
  };
  struct Edge {
    std::string color, label;
  };
  using G = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, Vertex, Edge>;
  G g(c.nodes().size());
  for (const auto& n : c.nodes()) {
    const char* shape = "box";
    switch (n.kind) {
      case topo::NodeKind::kGpu:
        shape = "box3d";
        break;
      case topo::NodeKind::kCpu:
        shape = "component";
        break;
      case topo::NodeKind::kNvSwitch:
      case topo::NodeKind::kPcieSwitch:
      case topo::NodeKind::kNetSwitch:
        shape = "hexagon";
        break;
      case topo::NodeKind::kNic:
        shape = "cds";
        break;
      case topo::NodeKind::kNvme:
        shape = "cylinder";
        break;
      case topo::NodeKind::kRetimer:
        shape = "point";
        break;
    }
    g[n.index] = {n.name, shape, n.name + "\\n" + n.part->id};
  }
  for (const auto& l : c.links()) {
    const char* color = l.family() == hw::LinkFamily::kNvlink   ? "forestgreen"
                        : l.family() == hw::LinkFamily::kPcie   ? "steelblue"
                        : l.family() == hw::LinkFamily::kSocket ? "firebrick"
                                                                : "gray40";
    boost::add_edge(l.a, l.b, Edge{color, fmt::format("{} x{}", l.tech->id, l.width)}, g);
  }
  boost::dynamic_properties dp;
  dp.property("node_id", boost::get(&Vertex::name, g));
  dp.property("shape", boost::get(&Vertex::shape, g));
  dp.property("label", boost::get(&Vertex::label, g));
  dp.property("color", boost::get(&Edge::color, g));
  dp.property("label", boost::get(&Edge::label, g));
  std::ostringstream out;
  boost::write_graphviz_dp(out, g, dp);
  // The writer names every graph G: the chassis' name instead, escaped the same way, and a font for
  // all.
  std::string dot = out.str();
  const std::string head = "graph G {\n";
  if (dot.rfind(head, 0) == 0)
    dot.replace(
        0, head.size(),
        "graph " + boost::escape_dot_string(c.name()) + " {\n  node [fontname=Helvetica];\n");
  return dot;
}

}  // namespace linkwise::report
