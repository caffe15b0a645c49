#include "linkwise/topo/chassis.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <boost/pending/disjoint_sets.hpp>
#include <deque>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>

#include "linkwise/topo/budget.h"
#include "linkwise/util/limits.h"
#include "linkwise/util/text.h"
#include "util/embedded.h"

namespace linkwise::topo {

double Node::fig(const std::string& field, double fallback) const {
  auto it = overrides.find(field);
  if (it != overrides.end()) return it->second;
  return part->get(field, fallback);
}

int Chassis::find(const std::string& name) const {
  if (auto it = network_by_name_.find(name); it != network_by_name_.end()) return it->second;
  std::string_view id = name;
  int box = 0;
  if (boxes_ > 1) {
    // "b<box>/<id>", the box written as build_chassis() writes it: digits, no leading zero.
    const std::size_t slash = name.find('/');
    if (name.size() < 3 || name[0] != 'b' || slash == std::string::npos || slash < 2 || slash > 5 ||
        (name[1] == '0' && slash > 2))
      return -1;
    for (std::size_t i = 1; i < slash; ++i) {
      if (name[i] < '0' || name[i] > '9') return -1;
      box = box * 10 + (name[i] - '0');
    }
    if (box >= boxes_) return -1;
    id = id.substr(slash + 1);
  }
  auto it = place_of_id_.find(std::string(id));
  return it == place_of_id_.end() ? -1 : box * per_box_ + it->second;
}

std::vector<int> Chassis::nodes_of_kind(NodeKind kind) const {
  std::vector<int> out;
  for (const auto& n : nodes_)
    if (n.kind == kind) out.push_back(n.index);
  return out;
}

std::string Chassis::display_name(int node) const {
  const char* prefix = "";
  switch (nodes_.at(node).kind) {
    case NodeKind::kGpu:
      prefix = "GPU";
      break;
    case NodeKind::kCpu:
      prefix = "CPU";
      break;
    case NodeKind::kNic:
      prefix = "NIC";
      break;
    case NodeKind::kNvme:
      prefix = "NVME";
      break;
    case NodeKind::kPcieSwitch:
      prefix = "PSW";
      break;
    case NodeKind::kNvSwitch:
      prefix = "NVSW";
      break;
    case NodeKind::kRetimer:
      prefix = "RT";
      break;
    case NodeKind::kNetSwitch:
      prefix = "NET";
      break;
  }
  return fmt::format("{}{}", prefix, display_index_.at(node));
}

int Chassis::find_display(const std::string& name) const {
  if (int i = find(name); i >= 0) return i;
  for (const auto& n : nodes_)
    if (display_name(n.index) == name) return n.index;
  return -1;
}

namespace {

struct Builder {
  const ChassisSpec& spec;
  const hw::Catalog& cat;
  Chassis& out;
  std::vector<Node>& nodes;
  std::vector<Link>& links;

  std::vector<std::string> local_ids;  // names within one box, for suggestions
  // Counts `n` more expanded names against the file's budget (limits::kMaxExpandedNames).
  void spend_names(std::size_t n, const SourceLocation& where) {
    expanded_names += static_cast<long long>(n);
    if (expanded_names > limits::kMaxExpandedNames)
      throw InputError(
          fmt::format("the chassis expands to more than {} node names and link pairs in all (brace "
                      "lists and match: all)",
                      limits::kMaxExpandedNames),
          where);
  }
  std::unordered_map<std::string, int>& network_by_name;
  std::map<std::string, const hw::Part*> own;  // parts the file defines (spec.parts)

  /// A part by id: the file's own first, then the catalog's (which throws with suggestions).
  const hw::Part& part(const std::string& id, NodeKind kind) const {
    auto it = own.find(id);
    if (it == own.end()) return cat.part(id, kind);
    if (it->second->kind != kind)
      throw InputError(fmt::format("part '{}' is a {}, not a {}", id,
                                   hw::to_string(it->second->kind), hw::to_string(kind)));
    return *it->second;
  }

  /// Builds spec.parts into `store`, each from its `like:` part (catalog or earlier in the file).
  void add_parts(std::deque<hw::Part>& store) {
    for (const auto& ps : spec.parts) {
      auto kind = hw::part_kind_from_string(ps.kind);
      auto at = [&](const std::string& field) {
        auto it = ps.field_where.find(field);
        return it == ps.field_where.end() ? ps.where : it->second;
      };
      if (!kind || *kind == NodeKind::kNetSwitch)
        throw InputError(fmt::format("part '{}': unknown kind '{}' (gpu, cpu, pcie_switch, "
                                     "nvswitch, nic, nvme, retimer)",
                                     ps.id, ps.kind),
                         at("kind"));
      if (ps.id.empty()) throw InputError("a part needs an 'id'", ps.where);
      if (cat.find_part(ps.id) || own.count(ps.id))
        throw InputError(
            fmt::format("part id '{}' is already {}; give yours another id and 'like: {}'", ps.id,
                        own.count(ps.id) ? "defined above" : "in the catalog", ps.id),
            at("id"));
      hw::Part p;
      if (!ps.like.empty()) {
        auto it = own.find(ps.like);
        const hw::Part* base = it != own.end() ? it->second : cat.find_part(ps.like);
        if (!base) {
          std::vector<std::string> ids = cat.part_ids(*kind);
          for (const auto& [id, _] : own) ids.push_back(id);
          std::string hint = did_you_mean(ps.like, ids);
          throw InputError(fmt::format("part '{}': 'like: {}' names no part{}", ps.id, ps.like,
                                       hint.empty() ? "" : "; " + hint),
                           at("like"));
        }
        if (base->kind != *kind)
          throw InputError(fmt::format("part '{}' is a {} but 'like: {}' is a {}", ps.id, ps.kind,
                                       ps.like, hw::to_string(base->kind)),
                           at("like"));
        p = *base;
      }
      p.id = ps.id;
      p.kind = *kind;
      if (p.name.empty()) p.name = ps.id;
      for (const auto& [k, v] : ps.attributes) {
        if (k == "name")
          p.name = v;
        else if (k == "vendor")
          p.vendor = v;
        else {
          if (k != "arch" && !cat.find_link_tech(v)) {
            std::string hint = did_you_mean(v, cat.link_tech_ids());
            throw InputError(fmt::format("part '{}': '{}: {}' names no link technology{}", ps.id, k,
                                         v, hint.empty() ? "" : "; " + hint),
                             at(k));
          }
          p.attributes[k] = v;
        }
      }
      for (const auto& [field, value] : ps.figures) {
        if (!ps.like.empty() && !p.has(field)) {
          std::vector<std::string> fields;
          for (const auto& [f, _] : p.figures) fields.push_back(f);
          std::string hint = did_you_mean(field, fields);
          throw InputError(
              fmt::format(
                  "part '{}' (like: {}) has no figure '{}' -- figures are named with their "
                  "unit (_bytes, _bytes_per_s, _s, _w, _tflops, or _GiB, _GB, _GBps, _TBps, _us, "
                  "_ns){}",
                  ps.id, ps.like, field, hint.empty() ? "" : "; " + hint),
              at(field));
        }
        const auto loc = at(field);
        p.figures[field] = {value, fmt::format("chassis file {}:{}",
                                               loc.file.empty() ? spec.name : loc.file, loc.line)};
      }
      if (*kind == NodeKind::kGpu && p.attr("pcie").empty())
        throw InputError(
            fmt::format(
                "part '{}': a GPU needs 'pcie: <link technology>' (or 'like: <catalog GPU>')",
                ps.id),
            ps.where);
      store.push_back(std::move(p));
      own[ps.id] = &store.back();
    }
  }
  long long expanded_names = 0;  // node names and link end pairs the whole file expanded to

  // Boxes are laid out one after another, each with the same nodes in the same order: box b's node
  // of local position k is node b·per_box + k (add_nodes), so names resolve without formatting.
  // add_nodes, add_links and add_network make every box a copy of box 0 (Chassis::boxes() states
  // what that means; ChassisTest.BoxesAreCopiesOfTheFirst checks it).
  std::unordered_map<std::string, int> local_pos{};
  int per_box = 0;

  int find_local(const std::string& name, int box, int /*boxes*/) const {
    auto it = local_pos.find(name);
    return it == local_pos.end() ? -1 : box * per_box + it->second;
  }

  void add_nodes(int boxes) {
    std::set<std::string> seen;
    long long gpus_per_box = 0;
    std::vector<std::pair<std::string, const NodeSpec*>> expanded;
    for (const auto& ns : spec.nodes) {
      auto kind = hw::part_kind_from_string(ns.kind);
      if (!kind || *kind == NodeKind::kNetSwitch) {
        std::vector<std::string> kinds = {"gpu", "cpu",  "pcie_switch", "nvswitch",
                                          "nic", "nvme", "retimer"};
        std::string hint = did_you_mean(ns.kind, kinds);
        throw InputError(
            fmt::format("unknown node kind '{}' for '{}'{}", ns.kind, ns.id,
                        hint.empty() ? " (gpu, cpu, pcie_switch, nvswitch, nic, nvme, retimer)"
                                     : "; " + hint),
            ns.where);
      }
      try {
        part(ns.part, *kind);
      } catch (const InputError& e) {
        throw InputError(fmt::format("node '{}': {}", ns.id, e.bare_message()), ns.where);
      }
      auto ids = expand_pattern(ns.id, ns.where);
      spend_names(ids.size(), ns.where);
      if (expanded.size() + ids.size() > static_cast<std::size_t>(limits::kMaxNodesPerBox))
        throw InputError(fmt::format("more than {} nodes in one box", limits::kMaxNodesPerBox),
                         ns.where);
      if (*kind == NodeKind::kGpu) {
        gpus_per_box += static_cast<long long>(ids.size());
        if (gpus_per_box > limits::kMaxGpusPerBox)
          throw InputError(fmt::format("more than {} GPUs in one box", limits::kMaxGpusPerBox),
                           ns.where);
      }
      for (const auto& id : ids) {
        if (!seen.insert(id).second)
          throw InputError(fmt::format("duplicate node id '{}'", limits::quote_value(id)),
                           ns.where);
        expanded.emplace_back(id, &ns);
        local_ids.push_back(id);
      }
    }
    if (static_cast<long long>(expanded.size()) * boxes > limits::kMaxMachineNodes)
      throw InputError(
          fmt::format("{} boxes of {} nodes are more than the {} nodes one machine may have", boxes,
                      expanded.size(), limits::kMaxMachineNodes),
          spec.network.where);
    per_box = static_cast<int>(expanded.size());
    local_pos.reserve(expanded.size());
    for (std::size_t k = 0; k < expanded.size(); ++k)
      local_pos.emplace(expanded[k].first, static_cast<int>(k));
    nodes.reserve(expanded.size() * static_cast<std::size_t>(boxes) + boxes + 1);
    int cpu_order = 0;
    std::vector<int> cpu_numa;
    for (const auto& [id, ns] : expanded)
      if (ns->kind == "cpu") cpu_numa.push_back(ns->numa.value_or(cpu_order++));
    // Kind and part per entry, looked up once for every box.
    std::vector<std::pair<NodeKind, const hw::Part*>> typed;
    typed.reserve(expanded.size());
    for (const auto& [id, ns] : expanded) {
      const NodeKind kind = *hw::part_kind_from_string(ns->kind);
      typed.emplace_back(kind, &part(ns->part, kind));
    }
    for (int box = 0; box < boxes; ++box) {
      int cpu_i = 0;
      if (box > 0) {
        // A copy of box 0, whose nodes were checked: only the index, name, box and NUMA id differ.
        const std::string prefix = "b" + std::to_string(box) + "/";
        for (std::size_t e = 0; e < expanded.size(); ++e) {
          const auto& [id, ns] = expanded[e];
          nodes.push_back(nodes[e]);  // reserved above: no reallocation
          Node& n = nodes.back();
          n.index = static_cast<int>(nodes.size()) - 1;
          n.name.reserve(prefix.size() + id.size());
          n.name.assign(prefix).append(id);
          n.box = box;
          if (n.kind == NodeKind::kCpu)
            n.numa = cpu_numa[cpu_i++] + box * 1000;
          else if (ns->numa)
            n.numa = *ns->numa + box * 1000;
        }
        continue;
      }
      for (std::size_t e = 0; e < expanded.size(); ++e) {
        const auto& [id, ns] = expanded[e];
        Node n;
        n.index = static_cast<int>(nodes.size());
        n.name = boxes > 1 ? fmt::format("b{}/{}", box, id) : id;
        n.kind = typed[e].first;
        n.part = typed[e].second;
        n.overrides = ns->overrides;
        for (const auto& [k, v] : n.overrides)
          if (!n.part->has(k)) {
            std::vector<std::string> fields;
            for (const auto& [f, _] : n.part->figures) fields.push_back(f);
            std::string hint = did_you_mean(k, fields);
            throw InputError(fmt::format("node '{}': part '{}' has no figure '{}' to override{}",
                                         id, ns->part, k, hint.empty() ? "" : "; " + hint),
                             ns->where);
          }
        n.box = box;
        if (n.kind == NodeKind::kCpu)
          n.numa = cpu_numa[cpu_i++] + box * 1000;
        else if (ns->numa)
          n.numa = *ns->numa + box * 1000;  // its own (sub-NUMA clustering)
        n.pci_address = ns->pci_address;
        n.cpulist = ns->cpulist;
        n.label = ns->label;
        n.zone = ns->zone;
        n.slot = ns->slot;
        n.where = ns->where;
        nodes.push_back(std::move(n));
      }
    }
  }

  int resolve(const std::string& id, const LinkSpec& ls, int box, int boxes) {
    int i = find_local(id, box, boxes);
    if (i >= 0) return i;
    std::string hint = did_you_mean(id, local_ids);
    throw InputError(fmt::format("link to node '{}', which does not exist{}",
                                 limits::quote_value(id), hint.empty() ? "" : "; " + hint),
                     ls.where);
  }

  int default_width(const hw::LinkTech& t, const Node& a, const Node& b) const {
    if (t.family != hw::LinkFamily::kPcie) return 1;
    int w = 16;
    for (const Node* n : {&a, &b})
      if (n->part->has("pcie_width")) w = std::min(w, static_cast<int>(n->fig("pcie_width")));
    return w;
  }

  void check_family(const hw::LinkTech& t, const Node& a, const Node& b, const LinkSpec& ls) const {
    auto is = [&](std::initializer_list<NodeKind> kinds, const Node& n) {
      return std::find(kinds.begin(), kinds.end(), n.kind) != kinds.end();
    };
    bool ok = true;
    switch (t.family) {
      case hw::LinkFamily::kNvlink:
        ok = is({NodeKind::kGpu, NodeKind::kNvSwitch}, a) &&
             is({NodeKind::kGpu, NodeKind::kNvSwitch}, b);
        break;
      case hw::LinkFamily::kPcie:
        ok = !is({NodeKind::kNvSwitch, NodeKind::kNetSwitch}, a) &&
             !is({NodeKind::kNvSwitch, NodeKind::kNetSwitch}, b);
        break;
      case hw::LinkFamily::kSocket:
        ok = a.kind == NodeKind::kCpu && b.kind == NodeKind::kCpu;
        break;
      case hw::LinkFamily::kNetwork:
        ok = is({NodeKind::kNic, NodeKind::kNetSwitch}, a) &&
             is({NodeKind::kNic, NodeKind::kNetSwitch}, b);
        break;
    }
    if (!ok)
      throw InputError(fmt::format("a {} link cannot join '{}' ({}) and '{}' ({})",
                                   t.name.empty() ? t.id : t.name, a.name, hw::to_string(a.kind),
                                   b.name, hw::to_string(b.kind)),
                       ls.where);
  }

  static int max_width(hw::LinkFamily f) {
    switch (f) {
      case hw::LinkFamily::kPcie:
        return limits::kMaxPcieWidth;
      case hw::LinkFamily::kNvlink:
        return limits::kMaxNvlinkLinks;
      case hw::LinkFamily::kSocket:
        return limits::kMaxSocketLinks;
      case hw::LinkFamily::kNetwork:
        return limits::kMaxNetworkPorts;
    }
    return limits::kMaxPcieWidth;
  }

  void add_link(int a, int b, const hw::LinkTech& t, const LinkSpec& ls, int spec_link = -1) {
    const Node& na = nodes[a];
    const Node& nb = nodes[b];
    if (a == b) throw InputError(fmt::format("link from '{}' to itself", na.name), ls.where);
    if (na.box <= 0 || nb.box <= 0) check_family(t, na, nb, ls);  // later boxes: the same kinds
    Link l;
    l.index = static_cast<int>(links.size());
    l.a = a;
    l.b = b;
    l.tech = &t;
    l.width = ls.width > 0 ? ls.width : default_width(t, na, nb);
    if (ls.width < 0)
      throw InputError(fmt::format("width {} must be positive", ls.width), ls.where);
    if (int most = max_width(t.family); l.width > most)
      throw InputError(
          fmt::format("width {} is more than a {} link may have ({} {})", l.width, t.id, most,
                      t.family == hw::LinkFamily::kPcie ? "lanes" : "links"),
          ls.where);
    if (!t.widths.empty() &&
        std::find(t.widths.begin(), t.widths.end(), l.width) == t.widths.end()) {
      std::vector<std::string> ws;
      for (int w : t.widths) ws.push_back(fmt::format("x{}", w));
      throw InputError(fmt::format("width {} is not allowed for {} (allowed: {})", l.width, t.id,
                                   fmt::to_string(fmt::join(ws, ", "))),
                       ls.where);
    }
    l.efficiency = ls.efficiency.value_or(t.efficiency.value);
    l.trace_mm = ls.trace_mm;
    l.material = ls.material;
    l.connectors = ls.connectors;
    l.vias = ls.vias;
    l.root_complex = ls.root_complex.value_or(-1);
    l.trained_gen = ls.trained_gen.value_or(0);
    l.trained_width = ls.trained_width.value_or(0);
    l.reported = ls.reported.value_or(1) != 0;
    if (!l.reported && t.family != hw::LinkFamily::kPcie)
      throw InputError(
          fmt::format("'reported: 0' is for PCIe links (how a VM shows its devices), not {}", t.id),
          ls.where);
    if (l.trained_gen < 0 || l.trained_gen > 64)
      throw InputError(fmt::format("trained_gen {} is not a PCIe generation", l.trained_gen),
                       ls.where);
    if (l.trained_width < 0 || l.trained_width > max_width(t.family))
      throw InputError(
          fmt::format("trained_width {} must be 1 to {}", l.trained_width, max_width(t.family)),
          ls.where);
    l.spec_link = spec_link;
    l.where = ls.where;
    links.push_back(l);
  }

  void add_links(int boxes) {
    // Every link line is expanded first, so that the file's budget of names is spent before any
    // link is made; then the links are made in order.
    std::vector<const hw::LinkTech*> techs(spec.links.size());
    std::vector<std::vector<std::pair<std::string, std::string>>> all_pairs(spec.links.size());
    for (std::size_t k = 0; k < spec.links.size(); ++k) {
      const LinkSpec& ls = spec.links[k];
      const hw::LinkTech* t = cat.find_link_tech(ls.tech);
      if (!t) {
        std::string hint = did_you_mean(ls.tech, cat.link_tech_ids());
        throw InputError(fmt::format("unknown link technology '{}'{}", limits::quote_value(ls.tech),
                                     hint.empty() ? "" : "; " + hint),
                         ls.where);
      }
      auto as = expand_pattern(ls.a, ls.where);
      auto bs = expand_pattern(ls.b, ls.where);
      auto& pairs = all_pairs[k];
      techs[k] = t;
      spend_names(ls.match == "all" ? as.size() * bs.size() : std::max(as.size(), bs.size()),
                  ls.where);
      if (ls.match == "all") {
        for (const auto& x : as)
          for (const auto& y : bs) pairs.emplace_back(x, y);
      } else if (as.size() == bs.size()) {
        for (std::size_t i = 0; i < as.size(); ++i) pairs.emplace_back(as[i], bs[i]);
      } else if (as.size() == 1 || bs.size() == 1) {
        for (std::size_t i = 0; i < std::max(as.size(), bs.size()); ++i)
          pairs.emplace_back(as[as.size() == 1 ? 0 : i], bs[bs.size() == 1 ? 0 : i]);
      } else {
        throw InputError(
            fmt::format("link '{}' - '{}' pairs {} names with {}: with match: zip both sides need "
                        "the same count (or one side a single node); use match: all for every pair",
                        ls.a, ls.b, as.size(), bs.size()),
            ls.where);
      }
    }
    std::size_t total = 0;
    for (const auto& pairs : all_pairs) total += pairs.size();
    if (static_cast<long long>(total) * boxes <= limits::kMaxMachineLinks)
      links.reserve(total * static_cast<std::size_t>(boxes) + nodes.size());
    for (std::size_t k = 0; k < spec.links.size(); ++k) {
      const LinkSpec& ls = spec.links[k];
      const auto& pairs = all_pairs[k];
      if (static_cast<long long>(links.size()) + static_cast<long long>(pairs.size()) * boxes >
          limits::kMaxMachineLinks)
        throw InputError(
            fmt::format("the machine would have more than {} links", limits::kMaxMachineLinks),
            ls.where);
      // Box 0's links are resolved and checked; every other box's are copies of them between
      // the same nodes of that box (box b's node k is node b·per_box + k).
      const std::size_t first = links.size();
      for (const auto& [x, y] : pairs)
        add_link(resolve(x, ls, 0, boxes), resolve(y, ls, 0, boxes), *techs[k], ls,
                 static_cast<int>(k));
      for (int box = 1; box < boxes; ++box)
        for (std::size_t p = 0; p < pairs.size(); ++p) {
          Link l = links[first + p];
          l.index = static_cast<int>(links.size());
          l.a += box * per_box;
          l.b += box * per_box;
          links.push_back(std::move(l));
        }
    }
  }

  void add_network(int boxes) {
    if (boxes <= 1) return;
    std::vector<int> nics;
    for (const auto& n : nodes)
      if (n.kind == NodeKind::kNic) nics.push_back(n.index);
    if (nics.empty())
      throw InputError(
          fmt::format("{} boxes need a network, but chassis '{}' has no NIC", boxes, spec.name),
          spec.network.where);
    std::string tech_id = spec.network.tech;
    if (tech_id.empty()) tech_id = nodes[nics.front()].part->attr("network");
    const hw::LinkTech* t = cat.find_link_tech(tech_id);
    if (!t || t->family != hw::LinkFamily::kNetwork) {
      std::vector<std::string> ids;
      for (const auto& x : cat.link_techs())
        if (x.family == hw::LinkFamily::kNetwork) ids.push_back(x.id);
      std::string hint = did_you_mean(tech_id, ids);
      throw InputError(fmt::format("unknown network technology '{}'{}", tech_id,
                                   hint.empty() ? "" : "; " + hint),
                       spec.network.where);
    }
    if (spec.network.oversubscription < 1)
      throw InputError(fmt::format("network oversubscription must be at least 1, not {}",
                                   spec.network.oversubscription),
                       spec.network.where);
    const hw::Part* sw = nullptr;
    for (const auto& p : cat.parts())
      if (p.kind == NodeKind::kNetSwitch && (!sw || p.attr("network") == tech_id)) sw = &p;
    if (!sw) throw InputError("the catalog has no network switch part");
    auto add_switch = [&](const std::string& name, int box) {
      Node n;
      n.index = static_cast<int>(nodes.size());
      n.name = name;
      n.kind = NodeKind::kNetSwitch;
      n.part = sw;
      n.box = box;
      network_by_name[n.name] = n.index;
      nodes.push_back(n);
      return n.index;
    };
    int spine = add_switch("net", -1);
    LinkSpec ls;
    ls.where = spec.network.where;
    bool leafs = spec.network.oversubscription > 1.0;
    // NICs by box (nodes are in box order), and each box-0 NIC's port count: the other boxes'
    // NICs at the same place are copies of it.
    std::vector<std::size_t> box_start(boxes + 1, nics.size());
    for (std::size_t i = nics.size(); i-- > 0;) box_start[nodes[nics[i]].box] = i;
    for (int box = boxes - 1; box >= 0; --box)
      box_start[box] = std::min(box_start[box], box_start[box + 1]);
    std::vector<int> nic_ports;
    for (std::size_t i = box_start[0]; i < box_start[1]; ++i)
      nic_ports.push_back(std::max(1, static_cast<int>(nodes[nics[i]].fig("ports", 1))));
    for (int box = 0; box < boxes; ++box) {
      int up = spine;
      double ports = 0;
      if (leafs) up = add_switch(fmt::format("b{}/leaf", box), box);
      for (std::size_t i = box_start[box]; i < box_start[box + 1]; ++i) {
        const int nic = nics[i];
        int w = nic_ports[i - box_start[box]];
        ports += w;
        ls.width = w;
        add_link(nic, up, *t, ls);
      }
      if (leafs) {
        ls.width = std::max(1, static_cast<int>(ports / spec.network.oversubscription + 0.5));
        add_link(up, spine, *t, ls);
      }
    }
  }

  void check_budgets() {
    std::vector<int> pcie(nodes.size()), nvl(nodes.size()), sock(nodes.size());
    // Box 0's nodes: their PCIe and NVLink links.
    std::vector<std::vector<int>> box0_pcie(nodes.size()), box0_nvlink(nodes.size());
    for (const auto& l : links)
      for (int end : {l.a, l.b}) {
        if (nodes[end].box == 0 && l.family() == hw::LinkFamily::kPcie)
          box0_pcie[end].push_back(l.index);
        if (nodes[end].box == 0 && l.family() == hw::LinkFamily::kNvlink)
          box0_nvlink[end].push_back(l.index);
        switch (l.family()) {
          case hw::LinkFamily::kPcie:
            pcie[end] += l.width;
            break;
          case hw::LinkFamily::kNvlink:
            nvl[end] += l.width;
            break;
          case hw::LinkFamily::kSocket:
            sock[end] += l.width;
            break;
          case hw::LinkFamily::kNetwork:
            break;
        }
      }
    auto first_link = [&](int node, hw::LinkFamily f) -> SourceLocation {
      SourceLocation w = nodes[node].where;
      for (const auto& l : links)
        if ((l.a == node || l.b == node) && l.family() == f) w = l.where;
      return w;
    };
    for (const auto& n : nodes) {
      if (n.box > 0) break;  // every box is a copy of box 0
      double lanes = 0;
      if (n.kind == NodeKind::kCpu) lanes = n.fig("pcie_lanes");
      if (n.kind == NodeKind::kPcieSwitch) lanes = n.fig("lanes");
      if (n.kind == NodeKind::kRetimer) lanes = 2 * n.fig("lanes");
      if (lanes > 0 && pcie[n.index] > lanes)
        throw InputError(fmt::format("'{}' ({}) has {} PCIe lanes but its links use {}", n.name,
                                     n.part->id, static_cast<int>(lanes), pcie[n.index]),
                         first_link(n.index, hw::LinkFamily::kPcie));
      // A PCIe link trains at the highest generation both ends support: one written faster than an
      // end is a mistake (retimers: the retimer-generation budget).
      if (const auto* own = cat.find_link_tech(n.part->attr("pcie"));
          own && own->family == hw::LinkFamily::kPcie && n.kind != NodeKind::kRetimer)
        for (int li : box0_pcie[n.index])
          if (const auto& l = links[li]; l.tech->generation > own->generation)
            throw InputError(
                fmt::format("'{}' ({}) has a PCIe Gen{} interface, but its link is {} (Gen{}): a "
                            "link runs at the newest generation both ends support; write tech: {}",
                            n.name, n.part->id, own->generation, l.tech->id, l.tech->generation,
                            own->id),
                l.where);
      // A GPU's or NVSwitch's NVLink-family links speak its own generation: the technology's id up
      // to its first '-' (nvlink4, nvlink4-bridge and nvlink4-nvl-bridge are one generation; an
      // H100 NVL on nvlink3-bridge or an A100 on nvlink4 is a mistake). A PCIe card's NVLink is
      // its bridge (the part's nvlink names it, e.g. nvlink4-bridge): that one only, not the SXM
      // board's fabric of its generation.
      if (const auto* own = cat.find_link_tech(n.part->attr("nvlink"));
          own && own->family == hw::LinkFamily::kNvlink) {
        auto stem = [](const std::string& id) { return id.substr(0, id.find('-')); };
        const bool bridge = stem(own->id) != own->id;
        auto fits = [&](const std::string& id) {
          return bridge ? id == own->id : stem(id) == stem(own->id);
        };
        for (int li : box0_nvlink[n.index]) {
          const auto& l = links[li];
          if (fits(l.tech->id)) continue;
          std::string same;
          int count = 0;
          for (const auto& t : cat.link_techs())
            if (t.family == hw::LinkFamily::kNvlink && fits(t.id))
              same += (count++ == 0 ? "" : ", ") + t.id;
          throw InputError(
              fmt::format("'{}' ({}) has {} links, but its link is {}: write {}{}", n.name,
                          n.part->id, own->id, l.tech->id, count > 1 ? "one of " : "", same),
              l.where);
        }
      }
      if (n.kind == NodeKind::kGpu || n.kind == NodeKind::kNic || n.kind == NodeKind::kNvme) {
        double w = n.fig("pcie_width", 16);
        for (int li : box0_pcie[n.index])
          if (const auto& l = links[li]; l.width > w)
            throw InputError(fmt::format("'{}' ({}) has a x{} PCIe interface, but its link is x{}",
                                         n.name, n.part->id, static_cast<int>(w), l.width),
                             l.where);
      }
      double ports = n.kind == NodeKind::kGpu        ? n.fig("nvlink_links")
                     : n.kind == NodeKind::kNvSwitch ? n.fig("ports")
                                                     : -1;
      if (ports >= 0 && nvl[n.index] > ports)
        throw InputError(fmt::format("'{}' ({}) has {} NVLink ports but its links use {}", n.name,
                                     n.part->id, static_cast<int>(ports), nvl[n.index]),
                         first_link(n.index, hw::LinkFamily::kNvlink));
      if (n.kind == NodeKind::kCpu && n.part->has("socket_links") &&
          sock[n.index] > n.fig("socket_links"))
        throw InputError(
            fmt::format("'{}' ({}) has {} socket links but its links use {}", n.name, n.part->id,
                        static_cast<int>(n.fig("socket_links")), sock[n.index]),
            first_link(n.index, hw::LinkFamily::kSocket));
      if (n.kind == NodeKind::kGpu && pcie[n.index] + nvl[n.index] == 0)
        throw InputError(fmt::format("GPU '{}' is not connected to anything", n.name), n.where);
    }
  }
};

// Each node's CPU, and its parent and uplink in the PCIe tree: breadth first from every CPU over
// PCIe links, through switches and retimers.
void assign_affinity(std::vector<Node>& nodes, const std::vector<Link>& links,
                     const std::vector<std::vector<int>>& incident) {
  std::deque<int> queue;
  for (auto& n : nodes)
    if (n.kind == NodeKind::kCpu) {
      n.cpu = n.index;
      queue.push_back(n.index);
    }
  while (!queue.empty()) {
    int u = queue.front();
    queue.pop_front();
    const Node& nu = nodes[u];
    bool transit = nu.kind == NodeKind::kCpu || nu.kind == NodeKind::kPcieSwitch ||
                   nu.kind == NodeKind::kRetimer;
    if (!transit) continue;
    for (int li : incident[u]) {
      const Link& l = links[li];
      if (l.family() != hw::LinkFamily::kPcie) continue;
      int v = l.other(u);
      if (nodes[v].cpu >= 0) continue;
      nodes[v].cpu = nu.cpu;
      nodes[v].pcie_parent = u;
      nodes[v].pcie_uplink = li;
      queue.push_back(v);
    }
  }
  for (auto& n : nodes)
    if (n.cpu >= 0 && n.numa < 0) n.numa = nodes[n.cpu].numa;
}

// PCIe is a tree below each CPU; every box needs a CPU, and a box's CPUs are joined by socket
// links.
void check_structure(const ChassisSpec& spec, const std::vector<Node>& nodes,
                     const std::vector<Link>& links) {
  boost::disjoint_sets_with_storage<> pcie(nodes.size()), sockets(nodes.size());
  for (const auto& l : links) {
    if (l.family() == hw::LinkFamily::kPcie && pcie.find_set(l.a) == pcie.find_set(l.b))
      throw InputError(
          fmt::format("PCIe links form a loop through '{}' and '{}': PCIe below a CPU is a tree",
                      nodes[l.a].name, nodes[l.b].name),
          l.where);
    if (l.family() == hw::LinkFamily::kPcie) pcie.union_set(l.a, l.b);
    if (l.family() == hw::LinkFamily::kSocket) sockets.union_set(l.a, l.b);
  }
  std::vector<int> first_cpu;  // per box
  for (const auto& n : nodes) {
    if (n.kind != NodeKind::kCpu || n.box < 0) continue;
    if (static_cast<int>(first_cpu.size()) <= n.box) first_cpu.resize(n.box + 1, -1);
    int& first = first_cpu[n.box];
    if (first < 0)
      first = n.index;
    else if (sockets.find_set(first) != sockets.find_set(n.index))
      throw InputError(
          fmt::format("CPUs '{}' and '{}' are not joined by socket links (e.g. tech: upi-16)",
                      nodes[first].name, n.name),
          n.where);
  }
  if (first_cpu.empty())
    throw InputError(
        fmt::format("chassis '{}' has no CPU: GPUs, NICs and NVMe drives need a PCIe path to one",
                    spec.name),
        {spec.file, 0, 0});
}

// Every GPU, NIC and NVMe drive reaches a CPU through PCIe (assign_affinity() found which).
void check_host_paths(const ChassisSpec&, const std::vector<Node>& nodes,
                      const std::vector<Link>&) {
  for (const auto& n : nodes) {
    if (n.box > 0) break;
    bool needs_host =
        n.kind == NodeKind::kGpu || n.kind == NodeKind::kNic || n.kind == NodeKind::kNvme;
    if (needs_host && n.cpu < 0)
      throw InputError(fmt::format("{} '{}' has no PCIe path to a CPU: every {} needs a host link",
                                   n.kind == NodeKind::kGpu   ? "GPU"
                                   : n.kind == NodeKind::kNic ? "NIC"
                                                              : "NVMe drive",
                                   n.name, hw::to_string(n.kind)),
                       n.where);
  }
}

}  // namespace

// The box as built: a PCIe link recorded as trained below its design runs at the trained
// generation's unit rate × the trained width, with that generation's efficiency unless the file
// sets one (a Gen4 link carries less of its line rate than a Gen5 one: catalog.yaml pcie4/pcie5
// efficiency).
static void apply_trained_rates(const ChassisSpec& spec, const hw::Catalog& cat,
                                std::vector<Link>& links) {
  std::map<int, const hw::LinkTech*> pcie_by_gen;
  for (const auto& id : cat.link_tech_ids())
    if (const auto* t = cat.find_link_tech(id); t && t->family == hw::LinkFamily::kPcie)
      pcie_by_gen[t->generation] = t;
  for (auto& l : links) {
    if (l.family() != hw::LinkFamily::kPcie || !l.below_design()) continue;
    const hw::LinkTech* t = l.tech;
    if (l.trained_gen > 0 && l.trained_gen < l.tech->generation) {
      auto it = pcie_by_gen.find(l.trained_gen);
      if (it == pcie_by_gen.end())
        throw InputError(fmt::format("trained_gen {}: the catalog has no PCIe generation {}",
                                     l.trained_gen, l.trained_gen),
                         l.where);
      t = it->second;
    }
    const int w = l.trained_width > 0 && l.trained_width < l.width ? l.trained_width : l.width;
    l.as_built = true;
    l.built_line_bytes_per_s = t->line_bytes_per_s(w);
    const bool own_efficiency =
        l.spec_link >= 0 && spec.links[static_cast<std::size_t>(l.spec_link)].efficiency;
    if (!own_efficiency) l.efficiency = t->efficiency.value;
  }
}

std::string link_rates_note(const Chassis& c) {
  std::vector<std::string> items;
  for (const auto& l : c.links()) {
    if (!l.below_design() || l.family() != hw::LinkFamily::kPcie || c.node(l.a).box != 0) continue;
    const int g = l.trained_gen > 0 && l.trained_gen < l.tech->generation ? l.trained_gen
                                                                          : l.tech->generation;
    const int w = l.trained_width > 0 && l.trained_width < l.width ? l.trained_width : l.width;
    items.push_back(fmt::format("{} - {} trained at Gen{} x{} (designed {} x{})", c.node(l.a).name,
                                c.node(l.b).name, g, w, l.tech->id, l.width));
  }
  if (items.empty()) return "";
  if (c.rates() == LinkRates::kAsBuilt)
    return fmt::format(
        "links as built: {}; these run at the trained rate (--as-designed for the design figures)",
        fmt::join(items, ", "));
  return fmt::format(
      "links as designed (--as-designed): {} run at the design rate, not the trained one",
      fmt::join(items, ", "));
}

Chassis build_chassis(const ChassisSpec& spec, const hw::Catalog& catalog, int boxes,
                      bool enforce_budgets, LinkRates rates) {
  Chassis c;
  c.name_ = spec.name;
  c.description_ = spec.description;
  c.spec_ = spec;
  c.boxes_ = boxes > 0 ? boxes : spec.network.boxes;
  if (c.boxes_ < 1 || c.boxes_ > kMaxBoxes)
    throw InputError(fmt::format("number of boxes must be 1 to {}, not {}", kMaxBoxes, c.boxes_),
                     spec.network.where);
  Builder b{spec, catalog, c, c.nodes_, c.links_, {}, c.network_by_name_, {}};
  c.own_parts_ = std::make_shared<std::deque<hw::Part>>();
  b.add_parts(*c.own_parts_);
  b.add_nodes(c.boxes_);
  b.add_links(c.boxes_);
  b.add_network(c.boxes_);
  c.per_box_ = b.per_box;
  c.place_of_id_ = b.local_pos;  // a box's ids (find())
  b.check_budgets();
  c.rates_ = rates;
  if (rates == LinkRates::kAsBuilt) apply_trained_rates(spec, catalog, c.links_);
  c.incident_.assign(c.nodes_.size(), {});
  {
    std::vector<int> degree(c.nodes_.size(), 0);  // one block per node, of its own size
    for (const auto& l : c.links_) ++degree[l.a], ++degree[l.b];
    for (std::size_t v = 0; v < degree.size(); ++v) c.incident_[v].reserve(degree[v]);
  }
  for (const auto& l : c.links_) {
    c.incident_[l.a].push_back(l.index);
    c.incident_[l.b].push_back(l.index);
  }
  check_structure(spec, c.nodes_, c.links_);
  assign_affinity(c.nodes_, c.links_, c.incident_);
  check_host_paths(spec, c.nodes_, c.links_);
  std::map<NodeKind, int> counters;
  c.display_index_.resize(c.nodes_.size());
  for (const auto& n : c.nodes_) {
    c.display_index_[n.index] = counters[n.kind]++;
    if (n.kind == NodeKind::kGpu) c.gpus_.push_back(n.index);
  }
  // numa ids of box k were offset to keep boxes apart; show them per box again.
  for (auto& n : c.nodes_)
    if (n.numa >= 1000) n.numa %= 1000;
  if (enforce_budgets) throw_first_error(check_budgets(c, catalog));
  return c;
}

std::vector<PresetInfo> presets() {
  std::vector<PresetInfo> out;
  for (const auto& f : linkwise::detail::embedded_files()) {
    std::string_view p = f.path;
    if (p.rfind("data/presets/", 0) != 0) continue;
    std::string id(p.substr(13, p.size() - 13 - 5));
    auto spec = parse_chassis_spec(std::string(f.contents), std::string(p));
    out.push_back({id, spec.description});
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.id < y.id; });
  return out;
}

ChassisSpec load_spec(const std::string& preset_or_path) {
  if (const auto* f = linkwise::detail::find_embedded("data/presets/" + preset_or_path + ".yaml"))
    return parse_chassis_spec(std::string(f->contents), std::string(f->path));
  std::error_code ec;
  // A validation chassis named by its path in the source tree (examples/validation/...), from any
  // working directory: the embedded copy when no such file is here.
  if (!std::filesystem::is_regular_file(preset_or_path, ec))
    if (const auto* f = linkwise::detail::find_embedded(preset_or_path))
      return parse_chassis_spec(std::string(f->contents), std::string(f->path));
  // A file; something there that is not a regular file (a directory, a FIFO) or a name written as a
  // path (a '/' or a .yaml/.yml ending) that is not there is read too, and read_file says what is
  // wrong (exit 2).
  if (std::filesystem::exists(preset_or_path, ec) || detail::looks_like_path(preset_or_path))
    return load_chassis_spec_file(preset_or_path);
  std::vector<std::string> ids;
  for (const auto& p : presets()) ids.push_back(p.id);
  std::string hint = did_you_mean(preset_or_path, ids);
  throw InputError(
      fmt::format("'{}' is neither a preset nor a chassis file{}", preset_or_path,
                  hint.empty() ? " (linkwise presets lists the presets)" : "; " + hint));
}

Chassis load_chassis(const std::string& preset_or_path, int boxes, LinkRates rates) {
  return build_chassis(load_spec(preset_or_path), hw::Catalog::builtin(), boxes, true, rates);
}

}  // namespace linkwise::topo
