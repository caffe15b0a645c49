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

namespace linkwise::report {

namespace {
double gb(double bytes_per_s) { return bytes_per_s / 1e9; }
constexpr std::size_t kMatrixMaxDevices = 40;
}  // namespace

std::string topo_text(const topo::Chassis& c, const topo::TopoAnalysis& a) {
  std::string out;
  out += fmt::format("{}{}\n", c.name(), c.description().empty() ? "" : ": " + c.description());
  if (a.boxes > 1) out += fmt::format("{} boxes joined by a network\n", a.boxes);
  out += "\n";
  // Matrix (box 0 only when there are several boxes, as nvidia-smi shows one machine).
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < a.devices.size(); ++i) {
    int node = c.find_display(a.devices[i]);
    if (node >= 0 && c.node(node).box == 0) rows.push_back(i);
  }
  if (rows.size() <= kMatrixMaxDevices) {
    Table t;
    std::vector<std::string> head = {""};
    for (auto i : rows) head.push_back(a.devices[i]);
    head.insert(head.end(), {"CPU Affinity", "NUMA Affinity"});
    t.header(head);
    for (auto i : rows) {
      std::vector<std::string> row = {a.devices[i]};
      for (auto j : rows) row.push_back(a.matrix[i][j]);
      auto g = std::find_if(a.gpus.begin(), a.gpus.end(),
                            [&](const auto& x) { return x.name == a.devices[i]; });
      if (g != a.gpus.end()) {
        row.push_back(g->cpu_affinity);
        row.push_back(g->numa >= 0 ? std::to_string(g->numa) : "N/A");
      } else {
        row.insert(row.end(), {"", ""});
      }
      t.row(row);
    }
    out += t.render();
    out +=
        "\nLegend: X = self, NV# = # NVLinks, PIX = one PCIe switch, PXB = several PCIe switches,\n"
        "PHB = a CPU host bridge, NODE = host bridges of one NUMA node, SYS = the socket link, NET "
        "= network\n\n";
  } else {
    out += fmt::format("(matrix of {} devices left out; --json has it)\n\n", rows.size());
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
  if (!a.warnings.empty()) {
    out += "\nWarnings\n";
    for (const auto& w : a.warnings) out += fmt::format("  [{}] {}\n", w.kind, w.message);
  }
  out += budget_text(a.budgets);
  return out;
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
