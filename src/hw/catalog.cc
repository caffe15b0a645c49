#include "linkwise/hw/catalog.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "hw/catalog_fields.h"
#include "linkwise/util/error.h"
#include "linkwise/util/text.h"
#include "util/yaml_util.h"

namespace linkwise::hw {

const char* to_string(LinkFamily f) {
  switch (f) {
    case LinkFamily::kPcie:
      return "pcie";
    case LinkFamily::kNvlink:
      return "nvlink";
    case LinkFamily::kSocket:
      return "socket";
    case LinkFamily::kNetwork:
      return "network";
  }
  return "?";
}

const char* to_string(PartKind k) {
  switch (k) {
    case PartKind::kGpu:
      return "gpu";
    case PartKind::kCpu:
      return "cpu";
    case PartKind::kPcieSwitch:
      return "pcie_switch";
    case PartKind::kNvSwitch:
      return "nvswitch";
    case PartKind::kNic:
      return "nic";
    case PartKind::kNvme:
      return "nvme";
    case PartKind::kRetimer:
      return "retimer";
    case PartKind::kNetSwitch:
      return "net_switch";
  }
  return "?";
}

std::optional<PartKind> part_kind_from_string(const std::string& s) {
  for (auto k : {PartKind::kGpu, PartKind::kCpu, PartKind::kPcieSwitch, PartKind::kNvSwitch,
                 PartKind::kNic, PartKind::kNvme, PartKind::kRetimer, PartKind::kNetSwitch})
    if (s == to_string(k)) return k;
  return std::nullopt;
}

double Part::get(const std::string& field, double fallback) const {
  auto it = figures.find(field);
  return it == figures.end() ? fallback : it->second.value;
}

std::string Part::attr(const std::string& key) const {
  auto it = attributes.find(key);
  return it == attributes.end() ? std::string() : it->second;
}

namespace {

using detail::location_of;

Figure parse_figure(const YAML::Node& n, const std::string& file, const std::string& field) {
  if (!n.IsSequence() || n.size() != 2 || !n[0].IsScalar() || !n[1].IsScalar())
    throw InputError(fmt::format("figure '{}' must be [value, \"source\"]", field),
                     location_of(n, file));
  Figure f;
  f.value = detail::as_double(n[0], file, field);
  f.source = n[1].as<std::string>();
  if (f.source.empty())
    throw InputError(fmt::format("figure '{}' has an empty source", field), location_of(n, file));
  return f;
}

LinkFamily parse_family(const YAML::Node& n, const std::string& file) {
  std::string s = n.as<std::string>();
  for (auto f : {LinkFamily::kPcie, LinkFamily::kNvlink, LinkFamily::kSocket, LinkFamily::kNetwork})
    if (s == to_string(f)) return f;
  throw InputError(fmt::format("unknown link family '{}' (pcie, nvlink, socket, network)", s),
                   location_of(n, file));
}

LinkTech parse_tech(const YAML::Node& n, const std::string& file) {
  LinkTech t;
  std::optional<YAML::Node> nccl_bw;  // where nccl_bw_GBps was given, for its error
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string key = it->first.as<std::string>();
    const YAML::Node v = it->second;  // a copy: the iterator's pair is a temporary
    if (key == "id")
      t.id = v.as<std::string>();
    else if (key == "name")
      t.name = v.as<std::string>();
    else if (key == "family")
      t.family = parse_family(v, file);
    else if (key == "generation")
      t.generation = static_cast<int>(detail::as_double(v, file, key));
    else if (key == "unit")
      t.unit = v.as<std::string>();
    else if (key == "widths") {
      for (const auto& w : v) t.widths.push_back(static_cast<int>(detail::as_double(w, file, key)));
    } else if (auto field = gen::figure_field(gen::kLinkTechFigures, key)) {
      t.*field = parse_figure(v, file, key);
      if (key == "nccl_bw_GBps") nccl_bw.emplace(v);
    } else if (key == "note" || key == "notes")
      continue;
    else
      throw InputError(fmt::format("unknown key '{}' in link technology '{}'", key, t.id),
                       location_of(it->first, file));
  }
  if (t.id.empty()) throw InputError("link technology without an id", location_of(n, file));
  if (t.unit_bytes_per_s.value <= 0)
    throw InputError(fmt::format("link technology '{}' needs unit_bytes_per_s", t.id),
                     location_of(n, file));
  if (t.efficiency.value <= 0)
    t.efficiency = {1.0, "derived: no efficiency given, line rate assumed"};
  if (t.duplex_efficiency.value <= 0 || t.duplex_efficiency.value > 1)
    throw InputError(fmt::format("link technology '{}': duplex_efficiency must be in (0, 1]", t.id),
                     location_of(n, file));
  if (nccl_bw && t.nccl_bw_GBps.value <= 0)
    throw InputError(
        fmt::format("link technology '{}': nccl_bw_GBps must be more than 0 GB/s, not {}", t.id,
                    (*nccl_bw)[0].Scalar()),
        location_of((*nccl_bw)[0], file));
  if (!nccl_bw && t.family != LinkFamily::kNetwork)
    throw InputError(
        fmt::format("link technology '{}' ({}) needs nccl_bw_GBps: NCCL's bandwidth figure for it, "
                    "[GB/s, \"source\"] (docs/catalog.md)",
                    t.id, to_string(t.family)),
        location_of(n, file));
  return t;
}

Part parse_part(const YAML::Node& n, const std::string& file) {
  Part p;
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string key = it->first.as<std::string>();
    const YAML::Node v = it->second;  // a copy: the iterator's pair is a temporary
    if (key == "id")
      p.id = v.as<std::string>();
    else if (key == "name")
      p.name = v.as<std::string>();
    else if (key == "vendor")
      p.vendor = v.as<std::string>();
    else if (key == "kind") {
      auto k = part_kind_from_string(v.as<std::string>());
      if (!k)
        throw InputError(fmt::format("unknown part kind '{}'", v.as<std::string>()),
                         location_of(v, file));
      p.kind = *k;
    } else if (v.IsSequence())
      p.figures[key] = parse_figure(v, file, key);
    else if (v.IsScalar())
      p.attributes[key] = v.as<std::string>();
    else
      throw InputError(fmt::format("unexpected value for '{}' in part '{}'", key, p.id),
                       location_of(v, file));
  }
  if (p.id.empty()) throw InputError("part without an id", location_of(n, file));
  return p;
}

BoardMaterial parse_material(const YAML::Node& n, const std::string& file) {
  BoardMaterial m;
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string key = it->first.as<std::string>();
    const YAML::Node v = it->second;  // a copy: the iterator's pair is a temporary
    if (key == "id")
      m.id = v.as<std::string>();
    else if (key == "name")
      m.name = v.as<std::string>();
    else if (auto field = gen::figure_field(gen::kMaterialFigures, key))
      m.*field = parse_figure(v, file, key);
    else
      throw InputError(fmt::format("unknown key '{}' in board material '{}'", key, m.id),
                       location_of(it->first, file));
  }
  if (m.id.empty()) throw InputError("board material without an id", location_of(n, file));
  if (m.loss_db_per_mm_8GHz.value <= 0 ||
      m.loss_db_per_mm_16GHz.value < m.loss_db_per_mm_8GHz.value)
    throw InputError(
        fmt::format(
            "board material '{}' needs loss_db_per_mm_8GHz > 0 and a 16 GHz loss at least as large",
            m.id),
        location_of(n, file));
  return m;
}

ChannelBudget parse_channel(const YAML::Node& n, const std::string& file) {
  ChannelBudget c;
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string key = it->first.as<std::string>();
    const YAML::Node v = it->second;  // a copy: the iterator's pair is a temporary
    if (key == "tech")
      c.tech = v.as<std::string>();
    else if (auto field = gen::figure_field(gen::kChannelFigures, key))
      c.*field = parse_figure(v, file, key);
    else
      throw InputError(fmt::format("unknown key '{}' in PCIe channel '{}'", key, c.tech),
                       location_of(it->first, file));
  }
  if (c.tech.empty() || c.nyquist_GHz.value <= 0 || c.loss_budget_db.value <= 0)
    throw InputError("a PCIe channel needs tech, nyquist_GHz and loss_budget_db",
                     location_of(n, file));
  return c;
}

}  // namespace

double BoardMaterial::loss_db_per_mm_at(double ghz) const {
  // alpha(f) = c·sqrt(f) + d·f through (8, a8) and (16, a16), with s = sqrt(8):
  //   a8 = c·s + 8d,  a16 = 4c + 16d  ->  2·a8 - a16 = c·(2s - 4)  ->  c = (2·a8 - a16) / (2s - 4),
  //   d = (a8 - c·s) / 8. Both clamp at 0 (a material measured as purely dielectric-loss-limited).
  double a8 = loss_db_per_mm_8GHz.value, a16 = loss_db_per_mm_16GHz.value, s = std::sqrt(8.0);
  double c = std::max(0.0, (2 * a8 - a16) / (2 * s - 4));
  double d = std::max(0.0, (a8 - c * s) / 8);
  return c * std::sqrt(std::max(0.0, ghz)) + d * std::max(0.0, ghz);
}

const BoardMaterial* Catalog::find_material(const std::string& id) const {
  for (const auto& m : materials_)
    if (m.id == id) return &m;
  return nullptr;
}

const ChannelBudget* Catalog::channel_budget(const std::string& tech) const {
  for (const auto& c : channels_)
    if (c.tech == tech) return &c;
  return nullptr;
}

Catalog Catalog::parse(const std::string& yaml_text, const std::string& filename) {
  YAML::Node root = detail::load_yaml(yaml_text, filename);
  Catalog cat;
  std::set<std::string> seen;
  for (const auto& n : root["link_technologies"]) {
    cat.techs_.push_back(parse_tech(n, filename));
    if (!seen.insert(cat.techs_.back().id).second)
      throw InputError(fmt::format("duplicate catalog id '{}'", cat.techs_.back().id),
                       location_of(n, filename));
  }
  for (const auto& n : root["parts"]) {
    cat.parts_.push_back(parse_part(n, filename));
    if (!seen.insert(cat.parts_.back().id).second)
      throw InputError(fmt::format("duplicate catalog id '{}'", cat.parts_.back().id),
                       location_of(n, filename));
  }
  for (const auto& n : root["board_materials"]) {
    cat.materials_.push_back(parse_material(n, filename));
    if (!seen.insert(cat.materials_.back().id).second)
      throw InputError(fmt::format("duplicate catalog id '{}'", cat.materials_.back().id),
                       location_of(n, filename));
  }
  // Extra figures for parts listed above (kept in their own section of the file).
  for (const auto& n : root["part_figures"]) {
    if (!n["part"]) throw InputError("a part_figures entry needs 'part'", location_of(n, filename));
    std::string id = n["part"].as<std::string>();
    Part* target = nullptr;
    for (auto& p : cat.parts_)
      if (p.id == id) target = &p;
    if (!target)
      throw InputError(fmt::format("part_figures names unknown part '{}'", id),
                       location_of(n["part"], filename));
    for (auto it = n.begin(); it != n.end(); ++it) {
      std::string key = it->first.as<std::string>();
      if (key == "part") continue;
      if (target->has(key))
        throw InputError(fmt::format("part '{}' already has figure '{}'", id, key),
                         location_of(it->first, filename));
      target->figures[key] = parse_figure(it->second, filename, key);
    }
  }
  for (const auto& n : root["pcie_channels"]) {
    cat.channels_.push_back(parse_channel(n, filename));
    if (!cat.find_link_tech(cat.channels_.back().tech))
      throw InputError(
          fmt::format("PCIe channel names unknown link technology '{}'", cat.channels_.back().tech),
          location_of(n, filename));
  }
  // Every attribute naming a link technology must name a known one.
  for (const auto& p : cat.parts_)
    for (const char* key : {"pcie", "nvlink", "socket", "network"}) {
      std::string id = p.attr(key);
      if (!id.empty() && !cat.find_link_tech(id))
        throw InputError(
            fmt::format("part '{}' names unknown link technology '{}' for '{}'", p.id, id, key),
            {filename, 0, 0});
    }
  return cat;
}

const LinkTech* Catalog::find_link_tech(const std::string& id) const {
  for (const auto& t : techs_)
    if (t.id == id) return &t;
  return nullptr;
}

const LinkTech& Catalog::link_tech(const std::string& id) const {
  if (const auto* t = find_link_tech(id)) return *t;
  std::string hint = did_you_mean(id, link_tech_ids());
  throw InputError(
      fmt::format("unknown link technology '{}'{}", id, hint.empty() ? "" : "; " + hint));
}

const Part* Catalog::find_part(const std::string& id) const {
  for (const auto& p : parts_)
    if (p.id == id) return &p;
  return nullptr;
}

const Part& Catalog::part(const std::string& id, std::optional<PartKind> kind) const {
  const Part* p = find_part(id);
  if (p && (!kind || p->kind == *kind)) return *p;
  std::string hint = did_you_mean(id, part_ids(kind));
  if (p)
    throw InputError(fmt::format("part '{}' is a {}, not a {}{}", id, to_string(p->kind),
                                 to_string(*kind), hint.empty() ? "" : "; " + hint));
  throw InputError(fmt::format("unknown {} part '{}'{}", kind ? to_string(*kind) : "catalog", id,
                               hint.empty() ? "" : "; " + hint));
}

std::vector<std::string> Catalog::part_ids(std::optional<PartKind> kind) const {
  std::vector<std::string> out;
  for (const auto& p : parts_)
    if (!kind || p.kind == *kind) out.push_back(p.id);
  return out;
}

std::vector<std::string> Catalog::link_tech_ids() const {
  std::vector<std::string> out;
  for (const auto& t : techs_) out.push_back(t.id);
  return out;
}

EntryFigures describe(const Catalog& cat, const std::string& id) {
  EntryFigures e;
  e.id = id;
  auto add = [&](const std::string& field, const Figure& f) {
    if (!f.source.empty())
      e.figures.emplace_back(field, f);  // a figure this entry does not carry: left out
  };
  if (const auto* x = cat.find_link_tech(id)) {
    add("transfer_rate_GTps", x->transfer_rate_GTps);
    add("encoding", x->encoding);
    add("unit_bytes_per_s", x->unit_bytes_per_s);
    add("efficiency", x->efficiency);
    add("latency_s", x->latency_s);
    add("duplex_efficiency", x->duplex_efficiency);
    add("nccl_bw_GBps", x->nccl_bw_GBps);
    return e;
  }
  if (!cat.find_part(id)) {
    std::vector<std::string> ids = cat.part_ids();
    for (const auto& t : cat.link_tech_ids()) ids.push_back(t);
    std::string hint = did_you_mean(id, ids);
    throw InputError(fmt::format("'{}' is neither a catalog part nor a link technology{}", id,
                                 hint.empty() ? " (linkwise catalog lists them)" : "; " + hint));
  }
  const auto& p = cat.part(id);
  for (const auto& [field, f] : p.figures) add(field, f);
  for (const auto& [k, v] : p.attributes) e.attributes.emplace_back(k, v);
  return e;
}

}  // namespace linkwise::hw
