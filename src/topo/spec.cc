#include "linkwise/topo/spec.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cmath>
#include <set>
#include <tuple>

#include "linkwise/util/limits.h"
#include "linkwise/util/text.h"
#include "util/yaml_util.h"

namespace linkwise::topo {

using detail::as_double;
using detail::as_int;
using detail::as_string;
using detail::check_keys;
using detail::location_of;

namespace {

// Values of one brace body: "0..7", "0..3:2", "a,b,c".
std::vector<std::string> brace_values(const std::string& body, const std::string& pattern,
                                      const SourceLocation& where) {
  auto bad = [&](const std::string& why) {
    throw InputError(fmt::format("bad pattern '{}': {}", limits::quote_value(pattern), why), where);
  };
  std::vector<std::string> out;
  auto dots = body.find("..");
  if (dots == std::string::npos) {
    std::size_t start = 0;
    while (true) {
      auto comma = body.find(',', start);
      std::string item =
          body.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (item.empty()) bad("empty item in {x,y}");
      if (static_cast<long long>(out.size()) >= limits::kMaxExpandedNames)
        bad(fmt::format("expands to more than {} names", limits::kMaxExpandedNames));
      out.push_back(item);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return out;
  }
  std::string lo_s = body.substr(0, dots), rest = body.substr(dots + 2), hi_s = rest, rep_s = "1";
  if (auto colon = rest.find(':'); colon != std::string::npos) {
    hi_s = rest.substr(0, colon);
    rep_s = rest.substr(colon + 1);
  }
  auto number = [&](const std::string& s) {
    if (s.empty() || s.size() > 6) bad("expected {a..b} or {a..b:r} with whole numbers");
    for (char c : s)
      if (!std::isdigit(static_cast<unsigned char>(c)))
        bad("expected {a..b} or {a..b:r} with whole numbers");
    return std::stoi(s);
  };
  int lo = number(lo_s), hi = number(hi_s), rep = number(rep_s);
  if (hi < lo) bad(fmt::format("range {}..{} runs backwards", lo, hi));
  if (rep < 1) bad("repeat count must be at least 1");
  if (static_cast<long long>(hi - lo + 1) * rep > limits::kMaxExpandedNames)
    bad(fmt::format("expands to more than {} names", limits::kMaxExpandedNames));
  for (int i = lo; i <= hi; ++i)
    for (int r = 0; r < rep; ++r) out.push_back(std::to_string(i));
  return out;
}

}  // namespace

std::vector<std::string> expand_pattern(const std::string& pattern, const SourceLocation& where) {
  // Left to right, one brace at a time: the names so far times the brace's values, never more than
  // limits::kMaxExpandedNames in all (a product of braces is bounded as a whole, not brace by
  // brace).
  std::vector<std::string> out = {""};
  std::size_t pos = 0;
  int braces = 0;
  auto bad = [&](const std::string& why) {
    throw InputError(fmt::format("bad pattern '{}': {}", limits::quote_value(pattern), why), where);
  };
  for (;;) {
    const auto open = pattern.find('{', pos);
    const std::string literal =
        pattern.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
    if (literal.find('}') != std::string::npos) bad("'}' without '{'");
    for (auto& o : out) o += literal;
    if (open == std::string::npos) break;
    const auto close = pattern.find('}', open);
    if (close == std::string::npos) bad("'{' without '}'");
    if (++braces > limits::kMaxPatternBraces)
      bad(fmt::format("more than {} braces", limits::kMaxPatternBraces));
    const auto values = brace_values(pattern.substr(open + 1, close - open - 1), pattern, where);
    if (static_cast<long long>(out.size()) * static_cast<long long>(values.size()) >
        limits::kMaxExpandedNames)
      bad(fmt::format("expands to more than {} names", limits::kMaxExpandedNames));
    std::vector<std::string> next;
    next.reserve(out.size() * values.size());
    for (const auto& o : out)
      for (const auto& v : values) next.push_back(o + v);
    out.swap(next);
    pos = close + 1;
  }
  return out;
}

namespace {

NodeSpec parse_node(const YAML::Node& n, const std::string& file) {
  check_keys(n,
             {"id", "kind", "part", "numa", "overrides", "pci_address", "label", "zone", "slot",
              "cpulist"},
             file, "a node");
  NodeSpec s;
  s.where = location_of(n, file);
  if (!n["id"]) throw InputError("node without an 'id'", s.where);
  if (!n["kind"]) throw InputError("node without a 'kind'", s.where);
  if (!n["part"]) throw InputError("node without a 'part'", s.where);
  s.id = as_string(n["id"], file, "id");
  s.kind = as_string(n["kind"], file, "kind");
  s.part = as_string(n["part"], file, "part");
  if (n["numa"]) s.numa = as_int(n["numa"], file, "numa");
  if (n["pci_address"]) s.pci_address = as_string(n["pci_address"], file, "pci_address");
  if (n["label"]) s.label = as_string(n["label"], file, "label");
  if (n["zone"]) s.zone = as_string(n["zone"], file, "zone");
  if (n["slot"]) s.slot = as_string(n["slot"], file, "slot");
  if (n["cpulist"]) {
    s.cpulist = as_string(n["cpulist"], file, "cpulist");
    // As Linux writes it: ranges and numbers joined by commas, nothing else (it is printed for
    // numactl).
    const bool ok = !s.cpulist.empty() && s.cpulist.size() <= 4096 &&
                    s.cpulist.find_first_not_of("0123456789,-") == std::string::npos &&
                    std::isdigit(static_cast<unsigned char>(s.cpulist.front())) &&
                    std::isdigit(static_cast<unsigned char>(s.cpulist.back()));
    if (!ok)
      throw InputError(
          fmt::format("'cpulist' must be a Linux CPU list such as 0-55,112-167, not '{}'",
                      limits::quote_value(s.cpulist)),
          location_of(n["cpulist"], file));
  }
  if (const auto& o = n["overrides"]) {
    if (!o.IsMap())
      throw InputError("'overrides' must be a map of figure names to numbers",
                       location_of(o, file));
    for (auto it = o.begin(); it != o.end(); ++it) {
      std::string key = it->first.Scalar();
      double v = as_double(it->second, file, key);
      // Figures are counts, rates, sizes and powers: never negative; peaks, rates and sizes never
      // zero.
      bool positive =
          key.ends_with("_tflops") || key.ends_with("_bytes_per_s") || key.ends_with("_bytes");
      if (v < 0 || (positive && v == 0) || v > 1e15)
        throw InputError(fmt::format("override '{}' must be {}, not {}", key,
                                     v > 1e15   ? "at most 1e15"
                                     : positive ? "positive"
                                                : "zero or more",
                                     it->second.Scalar()),
                         location_of(it->second, file));
      // Counts (lanes, ports, links) are whole numbers no part comes near limits::kMaxCountFigure
      // of.
      const bool count = key == "pcie_width" || key == "pcie_lanes" || key == "lanes" ||
                         key == "ports" || key == "nvlink_links";
      if (count && (v != std::floor(v) || v > limits::kMaxCountFigure))
        throw InputError(
            fmt::format("override '{}' is a count: a whole number up to {}, not {}", key,
                        limits::kMaxCountFigure, limits::quote_value(it->second.Scalar())),
            location_of(it->second, file));
      s.overrides[key] = v;
    }
  }
  return s;
}

LinkSpec parse_link(const YAML::Node& n, const std::string& file) {
  check_keys(n,
             {"a", "b", "tech", "width", "links", "match", "trace_mm", "material", "efficiency",
              "root_complex", "trained_gen", "trained_width", "connectors", "vias", "reported"},
             file, "a link");
  LinkSpec s;
  s.where = location_of(n, file);
  if (!n["a"] || !n["b"]) throw InputError("link needs both ends, 'a' and 'b'", s.where);
  if (!n["tech"]) throw InputError("link without a 'tech' (e.g. pcie5, nvlink4)", s.where);
  s.a = as_string(n["a"], file, "a");
  s.b = as_string(n["b"], file, "b");
  s.tech = as_string(n["tech"], file, "tech");
  if (n["width"] && n["links"])
    throw InputError("give either 'width' or 'links', not both", location_of(n["links"], file));
  if (n["width"]) s.width = as_int(n["width"], file, "width");
  if (n["links"]) s.width = as_int(n["links"], file, "links");
  if (n["match"]) {
    s.match = as_string(n["match"], file, "match");
    if (s.match != "zip" && s.match != "all")
      throw InputError(fmt::format("'match' must be 'zip' or 'all', not '{}'", s.match),
                       location_of(n["match"], file));
  }
  if (n["trace_mm"]) {
    s.trace_mm = as_double(n["trace_mm"], file, "trace_mm");
    if (*s.trace_mm < 0 || *s.trace_mm > 1e5)
      throw InputError(fmt::format("'trace_mm' must be 0 to 100000, not {}", *s.trace_mm),
                       location_of(n["trace_mm"], file));
  }
  for (const char* key : {"connectors", "vias"})
    if (n[key]) {
      int v = as_int(n[key], file, key);
      if (v < 0 || v > 100)
        throw InputError(fmt::format("'{}' must be 0 to 100, not {}", key, v),
                         location_of(n[key], file));
      (std::string(key) == "vias" ? s.vias : s.connectors) = v;
    }
  if (n["material"]) s.material = as_string(n["material"], file, "material");
  if (n["efficiency"]) {
    double e = as_double(n["efficiency"], file, "efficiency");
    if (e <= 0 || e > 1)
      throw InputError(fmt::format("'efficiency' must be in (0, 1], not {}", e),
                       location_of(n["efficiency"], file));
    s.efficiency = e;
  }
  if (n["root_complex"]) s.root_complex = as_int(n["root_complex"], file, "root_complex");
  if (n["trained_gen"]) s.trained_gen = as_int(n["trained_gen"], file, "trained_gen");
  if (n["trained_width"]) s.trained_width = as_int(n["trained_width"], file, "trained_width");
  if (n["reported"]) {
    s.reported = as_int(n["reported"], file, "reported");
    if (*s.reported != 0 && *s.reported != 1)
      throw InputError(fmt::format("'reported' must be 0 or 1, not {}", *s.reported),
                       location_of(n["reported"], file));
  }
  return s;
}

// A user part's field: the catalog name and the factor to it, from the unit its name ends with.
std::pair<std::string, double> catalog_field(const std::string& key) {
  static const std::vector<std::tuple<std::string, std::string, double>> units = {
      {"_GiB", "_bytes", 1073741824.0}, {"_GB", "_bytes", 1e9}, {"_GBps", "_bytes_per_s", 1e9},
      {"_TBps", "_bytes_per_s", 1e12},  {"_us", "_s", 1e-6},    {"_ns", "_s", 1e-9}};
  for (const auto& [suffix, to, factor] : units)
    if (key.size() > suffix.size() &&
        key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0)
      return {key.substr(0, key.size() - suffix.size()) + to, factor};
  return {key, 1.0};
}

// Whether a catalog field is a rate: bytes or FLOPs a second, or a clock.
bool is_rate_field(const std::string& field) {
  for (const char* suffix : {"_bytes_per_s", "_tflops", "_hz", "_mhz"}) {
    std::string sfx(suffix);
    if (field.size() > sfx.size() && field.compare(field.size() - sfx.size(), sfx.size(), sfx) == 0)
      return true;
  }
  return false;
}

PartSpec parse_part_spec(const YAML::Node& n, const std::string& file) {
  if (!n.IsMap())
    throw InputError("a part must be a map with 'id' and 'kind'", location_of(n, file));
  PartSpec p;
  p.where = location_of(n, file);
  if (!n["id"]) throw InputError("a part needs an 'id'", p.where);
  if (!n["kind"])
    throw InputError("a part needs a 'kind' (gpu, cpu, pcie_switch, nvswitch, nic, nvme, retimer)",
                     p.where);
  static const std::set<std::string> plain = {"id",   "kind", "like",   "name",   "vendor",
                                              "arch", "pcie", "nvlink", "socket", "network"};
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string key = it->first.Scalar();
    const YAML::Node v = it->second;  // a copy: the iterator's pair is a temporary
    const SourceLocation at = location_of(it->second, file);
    if (plain.count(key)) {
      std::string value = as_string(v, file, key);
      if (key == "id")
        p.id = value;
      else if (key == "kind")
        p.kind = value;
      else if (key == "like")
        p.like = value;
      else
        p.attributes[key] = value;
      p.field_where[key] = at;
      continue;
    }
    if (!v.IsScalar())
      throw InputError(
          fmt::format("part '{}': figure '{}' must be one number in the unit its name says", p.id,
                      key),
          at);
    double x = 0;
    std::size_t used = 0;
    try {
      x = std::stod(v.Scalar(), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != v.Scalar().size() || !std::isfinite(x) || x < 0)
      throw InputError(
          fmt::format(
              "part '{}': figure '{}' must be a number of zero or more in the unit its name says, "
              "not '{}'",
              p.id, key, v.Scalar()),
          at);
    auto [field, factor] = catalog_field(key);
    // A rate (bytes or FLOPs a second, a clock) of zero leaves the part unable to move or compute
    // anything: the chassis would fail later with no line to point at.
    if (x == 0 && is_rate_field(field))
      throw InputError(
          fmt::format("part '{}': figure '{}' is a rate and must be more than zero, not '{}'", p.id,
                      key, v.Scalar()),
          at);
    p.figures[field] = x * factor;
    p.field_where[field] = at;
  }
  return p;
}

double non_negative(const YAML::Node& n, const std::string& file, const char* key) {
  double v = as_double(n, file, key);
  if (v < 0 || v > 1e12)
    throw InputError(fmt::format("'{}' must be 0 to 1e12, not {}", key, n.Scalar()),
                     location_of(n, file));
  return v;
}

BudgetSpec parse_budgets(const YAML::Node& b, const std::string& file) {
  check_keys(b, {"power", "cooling_zones", "slots", "max_cost_usd", "prices_usd"}, file,
             "'budgets'");
  BudgetSpec out;
  if (b["slots"]) {
    out.slots = as_int(b["slots"], file, "slots");
    if (out.slots < 0 || out.slots > 4096)
      throw InputError(fmt::format("'slots' must be 0 to 4096, not {}", out.slots),
                       location_of(b["slots"], file));
  }
  out.where = location_of(b, file);
  if (const auto& p = b["power"]) {
    check_keys(p, {"supplies", "supply_w", "redundant"}, file, "'budgets.power'");
    if (!p["supplies"] || !p["supply_w"])
      throw InputError("'budgets.power' needs 'supplies' and 'supply_w'", location_of(p, file));
    out.supplies = as_int(p["supplies"], file, "supplies");
    out.supply_w = non_negative(p["supply_w"], file, "supply_w");
    if (p["redundant"]) out.redundant = as_int(p["redundant"], file, "redundant");
    if (out.supplies < 1 || out.supplies > 1000 || out.redundant < 0 ||
        out.redundant >= out.supplies)
      throw InputError(fmt::format("'budgets.power': supplies must be 1 to 1000 and redundant 0 to "
                                   "supplies - 1, not {} and {}",
                                   out.supplies, out.redundant),
                       location_of(p, file));
  }
  if (const auto& z = b["cooling_zones"]) {
    if (!z.IsSequence())
      throw InputError("'cooling_zones' must be a list of {id, capacity_w}", location_of(z, file));
    for (const auto& e : z) {
      check_keys(e, {"id", "capacity_w"}, file, "a cooling zone");
      if (!e["id"] || !e["capacity_w"])
        throw InputError("a cooling zone needs 'id' and 'capacity_w'", location_of(e, file));
      out.cooling_zones.push_back({as_string(e["id"], file, "id"),
                                   non_negative(e["capacity_w"], file, "capacity_w"),
                                   location_of(e, file)});
    }
  }
  if (b["max_cost_usd"]) out.max_cost_usd = non_negative(b["max_cost_usd"], file, "max_cost_usd");
  if (const auto& p = b["prices_usd"]) {
    if (!p.IsMap())
      throw InputError("'prices_usd' must be a map of part ids to prices", location_of(p, file));
    for (auto it = p.begin(); it != p.end(); ++it)
      out.prices_usd[it->first.Scalar()] = non_negative(it->second, file, "prices_usd");
  }
  return out;
}

}  // namespace

ChassisSpec parse_chassis_spec(const std::string& yaml_text, const std::string& filename) {
  YAML::Node root = detail::load_yaml(yaml_text, filename);
  if (!root.IsMap())
    throw InputError("a chassis file must be a map with 'nodes' and 'links'",
                     location_of(root, filename));
  check_keys(
      root,
      {"name", "description", "sources", "parts", "nodes", "links", "network", "nccl", "budgets"},
      filename, "the chassis");
  ChassisSpec spec;
  spec.file = filename;
  if (root["name"]) spec.name = as_string(root["name"], filename, "name");
  if (root["description"])
    spec.description = as_string(root["description"], filename, "description");
  if (const auto& s = root["sources"]) {
    if (!s.IsSequence())
      throw InputError("'sources' must be a list of text", location_of(s, filename));
    for (const auto& x : s) spec.sources.push_back(as_string(x, filename, "sources"));
  }
  const auto& nodes = root["nodes"];
  if (!nodes || !nodes.IsSequence() || nodes.size() == 0)
    throw InputError("the chassis needs a non-empty 'nodes' list",
                     location_of(nodes ? nodes : root, filename));
  for (const auto& n : nodes) spec.nodes.push_back(parse_node(n, filename));
  if (const auto& links = root["links"]) {
    if (!links.IsSequence())
      throw InputError("'links' must be a list", location_of(links, filename));
    for (const auto& n : links) spec.links.push_back(parse_link(n, filename));
  }
  if (const auto& net = root["network"]) {
    check_keys(net, {"boxes", "tech", "oversubscription"}, filename, "'network'");
    spec.network.where = location_of(net, filename);
    if (net["boxes"]) spec.network.boxes = as_int(net["boxes"], filename, "boxes");
    if (net["tech"]) spec.network.tech = as_string(net["tech"], filename, "tech");
    if (net["oversubscription"])
      spec.network.oversubscription =
          as_double(net["oversubscription"], filename, "oversubscription");
  }
  if (const auto& ps = root["parts"]) {
    if (!ps.IsSequence())
      throw InputError("'parts' must be a list of part definitions", location_of(ps, filename));
    for (const auto& n : ps) spec.parts.push_back(parse_part_spec(n, filename));
  }
  if (const auto& nc = root["nccl"]) {
    if (!nc.IsMap())
      throw InputError("'nccl' must be a map of NCCL settings, e.g. {NCCL_P2P_LEVEL: PHB}",
                       location_of(nc, filename));
    for (auto it = nc.begin(); it != nc.end(); ++it) {
      if (!it->second.IsScalar())
        throw InputError(
            fmt::format("nccl setting '{}' must be a single value", it->first.as<std::string>()),
            location_of(it->second, filename));
      spec.nccl.push_back({it->first.as<std::string>(), it->second.as<std::string>(),
                           location_of(it->first, filename)});
    }
  }
  if (const auto& b = root["budgets"]) spec.budgets = parse_budgets(b, filename);
  if (spec.name.empty()) {
    auto slash = filename.find_last_of('/');
    std::string base = slash == std::string::npos ? filename : filename.substr(slash + 1);
    spec.name = base.substr(0, base.rfind('.'));
  }
  return spec;
}

ChassisSpec load_chassis_spec_file(const std::string& path) {
  return parse_chassis_spec(read_file(path), path);
}

std::string chassis_spec_to_yaml(const ChassisSpec& spec) {
  YAML::Emitter out;
  out.SetDoublePrecision(10);  // enough for byte counts; fitted efficiencies read as 0.7934570312
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << spec.name;
  if (!spec.description.empty())
    out << YAML::Key << "description" << YAML::Value << spec.description;
  if (!spec.sources.empty()) out << YAML::Key << "sources" << YAML::Value << spec.sources;
  if (!spec.parts.empty()) {
    out << YAML::Key << "parts" << YAML::Value << YAML::BeginSeq;
    for (const auto& p : spec.parts) {
      out << YAML::Flow << YAML::BeginMap;
      out << YAML::Key << "id" << YAML::Value << p.id << YAML::Key << "kind" << YAML::Value
          << p.kind;
      if (!p.like.empty()) out << YAML::Key << "like" << YAML::Value << p.like;
      for (const auto& [k, v] : p.attributes) out << YAML::Key << k << YAML::Value << v;
      for (const auto& [k, v] : p.figures) out << YAML::Key << k << YAML::Value << v;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq;
  for (const auto& n : spec.nodes) {
    out << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "id" << YAML::Value << n.id << YAML::Key << "kind" << YAML::Value << n.kind;
    out << YAML::Key << "part" << YAML::Value << n.part;
    if (n.numa) out << YAML::Key << "numa" << YAML::Value << *n.numa;
    if (!n.pci_address.empty()) out << YAML::Key << "pci_address" << YAML::Value << n.pci_address;
    if (!n.label.empty()) out << YAML::Key << "label" << YAML::Value << n.label;
    if (!n.zone.empty()) out << YAML::Key << "zone" << YAML::Value << n.zone;
    if (!n.slot.empty()) out << YAML::Key << "slot" << YAML::Value << n.slot;
    if (!n.cpulist.empty()) out << YAML::Key << "cpulist" << YAML::Value << n.cpulist;
    if (!n.overrides.empty()) {
      out << YAML::Key << "overrides" << YAML::Value << YAML::BeginMap;
      for (const auto& [k, v] : n.overrides) out << YAML::Key << k << YAML::Value << v;
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "links" << YAML::Value << YAML::BeginSeq;
  for (const auto& l : spec.links) {
    out << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "a" << YAML::Value << l.a << YAML::Key << "b" << YAML::Value << l.b;
    out << YAML::Key << "tech" << YAML::Value << l.tech;
    if (l.width) out << YAML::Key << "width" << YAML::Value << l.width;
    if (l.match != "zip") out << YAML::Key << "match" << YAML::Value << l.match;
    if (l.trace_mm) out << YAML::Key << "trace_mm" << YAML::Value << *l.trace_mm;
    if (!l.material.empty()) out << YAML::Key << "material" << YAML::Value << l.material;
    if (l.efficiency) out << YAML::Key << "efficiency" << YAML::Value << *l.efficiency;
    if (l.root_complex) out << YAML::Key << "root_complex" << YAML::Value << *l.root_complex;
    if (l.trained_gen) out << YAML::Key << "trained_gen" << YAML::Value << *l.trained_gen;
    if (l.trained_width) out << YAML::Key << "trained_width" << YAML::Value << *l.trained_width;
    if (l.connectors) out << YAML::Key << "connectors" << YAML::Value << l.connectors;
    if (l.vias) out << YAML::Key << "vias" << YAML::Value << l.vias;
    if (l.reported) out << YAML::Key << "reported" << YAML::Value << *l.reported;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  if (spec.network.boxes != 1 || !spec.network.tech.empty() ||
      spec.network.oversubscription != 1.0) {
    out << YAML::Key << "network" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "boxes" << YAML::Value << spec.network.boxes;
    if (!spec.network.tech.empty()) out << YAML::Key << "tech" << YAML::Value << spec.network.tech;
    out << YAML::Key << "oversubscription" << YAML::Value << spec.network.oversubscription;
    out << YAML::EndMap;
  }
  if (!spec.nccl.empty()) {
    out << YAML::Key << "nccl" << YAML::Value << YAML::BeginMap;
    for (const auto& x : spec.nccl) out << YAML::Key << x.name << YAML::Value << x.value;
    out << YAML::EndMap;
  }
  if (!spec.budgets.empty()) {
    const auto& b = spec.budgets;
    out << YAML::Key << "budgets" << YAML::Value << YAML::BeginMap;
    if (b.supplies > 0) {
      out << YAML::Key << "power" << YAML::Value << YAML::Flow << YAML::BeginMap;
      out << YAML::Key << "supplies" << YAML::Value << b.supplies << YAML::Key << "supply_w"
          << YAML::Value << b.supply_w;
      if (b.redundant) out << YAML::Key << "redundant" << YAML::Value << b.redundant;
      out << YAML::EndMap;
    }
    if (!b.cooling_zones.empty()) {
      out << YAML::Key << "cooling_zones" << YAML::Value << YAML::BeginSeq;
      for (const auto& z : b.cooling_zones)
        out << YAML::Flow << YAML::BeginMap << YAML::Key << "id" << YAML::Value << z.id << YAML::Key
            << "capacity_w" << YAML::Value << z.capacity_w << YAML::EndMap;
      out << YAML::EndSeq;
    }
    if (b.slots) out << YAML::Key << "slots" << YAML::Value << b.slots;
    if (b.max_cost_usd) out << YAML::Key << "max_cost_usd" << YAML::Value << *b.max_cost_usd;
    if (!b.prices_usd.empty()) {
      out << YAML::Key << "prices_usd" << YAML::Value << YAML::BeginMap;
      for (const auto& [k, v] : b.prices_usd) out << YAML::Key << k << YAML::Value << v;
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace linkwise::topo
