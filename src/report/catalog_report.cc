#include "linkwise/report/catalog_report.h"

#include <fmt/format.h>

#include "linkwise/report/json.h"
#include "linkwise/report/table.h"
#include "linkwise/topo/chassis.h"

namespace linkwise::report {

std::string catalog_text(const hw::Catalog& cat) {
  Table t;
  t.header({"id", "kind", "name"});
  for (const auto& x : cat.link_techs())
    t.row({x.id, std::string("link/") + hw::to_string(x.family), x.name});
  for (const auto& p : cat.parts()) t.row({p.id, hw::to_string(p.kind), p.name});
  return fit_width(t.render());
}

nlohmann::json catalog_json(const hw::Catalog& cat) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& x : cat.link_techs())
    j.push_back({{"id", x.id}, {"kind", "link"}, {"name", x.name}});
  for (const auto& p : cat.parts())
    j.push_back({{"id", p.id}, {"kind", hw::to_string(p.kind)}, {"name", p.name}});
  return with_schema({{"entries", j}});
}

std::string entry_text(const hw::EntryFigures& e) {
  Table t;
  t.header({"field", "value", "source"});
  for (const auto& [field, f] : e.figures) t.row({field, fmt::format("{:g}", f.value), f.source});
  for (const auto& [k, v] : e.attributes) t.row({k, v, ""});
  return fit_width(t.render());
}

nlohmann::json entry_json(const hw::EntryFigures& e) {
  nlohmann::json figures = nlohmann::json::object(), attributes = nlohmann::json::object();
  for (const auto& [field, f] : e.figures)
    figures[field] = {{"value", f.value}, {"source", f.source}};
  for (const auto& [k, v] : e.attributes) attributes[k] = v;
  return with_schema({{"id", e.id}, {"figures", figures}, {"attributes", attributes}});
}

std::string presets_text() {
  Table t;
  t.header({"preset", "description"});
  for (const auto& p : topo::presets()) t.row({p.id, p.description});
  return fit_width(t.render());
}

nlohmann::json presets_json() {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& p : topo::presets()) j.push_back({{"id", p.id}, {"description", p.description}});
  return with_schema({{"presets", j}});
}

}  // namespace linkwise::report
