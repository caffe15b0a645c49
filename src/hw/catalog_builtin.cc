// Catalog::builtin(): the catalog from the tables generated out of data/catalog.yaml at build time
// (catalog_data.h). The file was parsed and checked by the same Catalog::parse() then, so this only
// copies: no YAML is read when the program runs.
#include <string_view>

#include "hw/catalog_data.h"
#include "hw/catalog_fields.h"
#include "linkwise/hw/catalog.h"

namespace linkwise::hw {

namespace {

template <class T, std::size_t N>
void set_figures(const gen::FigureField<T> (&table)[N], const gen::FigureRow* rows, int count,
                 T& entry) {
  for (int i = 0; i < count; ++i)
    if (auto field = gen::figure_field(table, rows[i].key))
      entry.*field = Figure{rows[i].value, rows[i].source};
}

}  // namespace

const Catalog& Catalog::builtin() {
  static const Catalog cat = [] {
    const gen::CatalogTables& t = gen::kBuiltinCatalog;
    Catalog c;
    c.techs_.reserve(t.tech_count);
    for (int i = 0; i < t.tech_count; ++i) {
      const auto& r = t.techs[i];
      LinkTech& x = c.techs_.emplace_back();
      x.id = r.id;
      x.name = r.name;
      x.family = r.family;
      x.generation = r.generation;
      x.unit = r.unit;
      x.widths.assign(t.widths + r.first_width, t.widths + r.first_width + r.width_count);
      set_figures(gen::kLinkTechFigures, t.figures + r.first_figure, r.figure_count, x);
    }
    c.parts_.reserve(t.part_count);
    for (int i = 0; i < t.part_count; ++i) {
      const auto& r = t.parts[i];
      Part& p = c.parts_.emplace_back();
      p.id = r.id;
      p.name = r.name;
      p.kind = r.kind;
      p.vendor = r.vendor;
      for (int f = r.first_figure; f < r.first_figure + r.figure_count; ++f)  // sorted by key
        p.figures.emplace_hint(p.figures.end(), t.figures[f].key,
                               Figure{t.figures[f].value, t.figures[f].source});
      for (int a = r.first_attribute; a < r.first_attribute + r.attribute_count; ++a)
        p.attributes.emplace_hint(p.attributes.end(), t.attributes[a].key, t.attributes[a].value);
    }
    c.materials_.reserve(t.material_count);
    for (int i = 0; i < t.material_count; ++i) {
      const auto& r = t.materials[i];
      BoardMaterial& m = c.materials_.emplace_back();
      m.id = r.id;
      m.name = r.name;
      set_figures(gen::kMaterialFigures, t.figures + r.first_figure, r.figure_count, m);
    }
    c.channels_.reserve(t.channel_count);
    for (int i = 0; i < t.channel_count; ++i) {
      const auto& r = t.channels[i];
      ChannelBudget& b = c.channels_.emplace_back();
      b.tech = r.tech;
      set_figures(gen::kChannelFigures, t.figures + r.first_figure, r.figure_count, b);
    }
    return c;
  }();
  return cat;
}

}  // namespace linkwise::hw
