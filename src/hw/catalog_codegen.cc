#include "hw/catalog_codegen.h"

#include <fmt/format.h>

#include <cmath>

#include "hw/catalog_fields.h"
#include "linkwise/util/error.h"

namespace linkwise::hw::gen {

std::string cpp_string_literal(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += {'\\', static_cast<char>(c)};
    else if (c >= 0x20 && c < 0x7f)
      out += static_cast<char>(c);
    else
      out += fmt::format("\\{:03o}", c);  // octal takes at most 3 digits: no run-on
  }
  return out + "\"";
}

namespace {

const char* enum_name(LinkFamily f) {
  switch (f) {
    case LinkFamily::kPcie:
      return "LinkFamily::kPcie";
    case LinkFamily::kNvlink:
      return "LinkFamily::kNvlink";
    case LinkFamily::kSocket:
      return "LinkFamily::kSocket";
    case LinkFamily::kNetwork:
      return "LinkFamily::kNetwork";
  }
  return "";
}

const char* enum_name(PartKind k) {
  switch (k) {
    case PartKind::kGpu:
      return "PartKind::kGpu";
    case PartKind::kCpu:
      return "PartKind::kCpu";
    case PartKind::kPcieSwitch:
      return "PartKind::kPcieSwitch";
    case PartKind::kNvSwitch:
      return "PartKind::kNvSwitch";
    case PartKind::kNic:
      return "PartKind::kNic";
    case PartKind::kNvme:
      return "PartKind::kNvme";
    case PartKind::kRetimer:
      return "PartKind::kRetimer";
    case PartKind::kNetSwitch:
      return "PartKind::kNetSwitch";
  }
  return "";
}

// A double literal that reads back as exactly `v` (fmt writes the shortest such decimal).
std::string double_literal(double v, const std::string& what) {
  if (!std::isfinite(v)) throw InputError(fmt::format("figure '{}' is not a finite number", what));
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

class Writer {
 public:
  // Appends one figure row; returns its index.
  int figure(const std::string& key, const Figure& f, const std::string& owner) {
    figures_ +=
        fmt::format("    {{{}, {}, {}}},\n", cpp_string_literal(key),
                    double_literal(f.value, owner + "." + key), cpp_string_literal(f.source));
    return figure_count_++;
  }
  template <class T, std::size_t N>
  std::pair<int, int> fixed_figures(const FigureField<T> (&table)[N], const T& entry,
                                    const std::string& owner) {
    const int first = figure_count_;
    for (const auto& [key, member] : table) figure(std::string(key), entry.*member, owner);
    return {first, static_cast<int>(N)};
  }
  int attribute(const std::string& key, const std::string& value) {
    attributes_ +=
        fmt::format("    {{{}, {}}},\n", cpp_string_literal(key), cpp_string_literal(value));
    return attribute_count_++;
  }
  int width(int w) {
    widths_ += fmt::format("{}, ", w);
    return width_count_++;
  }
  int figure_count() const { return figure_count_; }
  int attribute_count() const { return attribute_count_; }
  int width_count() const { return width_count_; }
  std::string tables() const {
    // Empty arrays are not allowed: each table ends with an unused row.
    return fmt::format(
        "const FigureRow kFigures[] = {{\n{}    {{\"\", 0.0, \"\"}}}};\n\n"
        "const AttributeRow kAttributes[] = {{\n{}    {{\"\", \"\"}}}};\n\n"
        "const int kWidths[] = {{{}0}};\n\n",
        figures_, attributes_, widths_);
  }

 private:
  std::string figures_, attributes_, widths_;
  int figure_count_ = 0, attribute_count_ = 0, width_count_ = 0;
};

}  // namespace

std::string catalog_to_cpp(const Catalog& catalog, const std::string& origin) {
  Writer w;
  std::string techs, parts, materials, channels;
  for (const auto& t : catalog.link_techs()) {
    const int first_width = w.width_count();
    for (int x : t.widths) w.width(x);
    const auto [first, count] = w.fixed_figures(kLinkTechFigures, t, t.id);
    techs += fmt::format("    {{{}, {}, {}, {}, {}, {}, {}, {}, {}}},\n", cpp_string_literal(t.id),
                         cpp_string_literal(t.name), enum_name(t.family), t.generation,
                         cpp_string_literal(t.unit), first_width, t.widths.size(), first, count);
  }
  for (const auto& p : catalog.parts()) {
    const int first = w.figure_count();
    for (const auto& [key, f] : p.figures) w.figure(key, f, p.id);
    const int first_attribute = w.attribute_count();
    for (const auto& [key, value] : p.attributes) w.attribute(key, value);
    parts +=
        fmt::format("    {{{}, {}, {}, {}, {}, {}, {}, {}}},\n", cpp_string_literal(p.id),
                    cpp_string_literal(p.name), enum_name(p.kind), cpp_string_literal(p.vendor),
                    first, p.figures.size(), first_attribute, p.attributes.size());
  }
  for (const auto& m : catalog.materials()) {
    const auto [first, count] = w.fixed_figures(kMaterialFigures, m, m.id);
    materials += fmt::format("    {{{}, {}, {}, {}}},\n", cpp_string_literal(m.id),
                             cpp_string_literal(m.name), first, count);
  }
  for (const auto& c : catalog.channels()) {
    const auto [first, count] = w.fixed_figures(kChannelFigures, c, c.tech);
    channels += fmt::format("    {{{}, {}, {}}},\n", cpp_string_literal(c.tech), first, count);
  }
  return fmt::format(
      "// Generated at build time by linkwise_catalog_gen from {}: do not edit.\n"
      "#include \"hw/catalog_data.h\"\n\n"
      "namespace linkwise::hw::gen {{\n"
      "namespace {{\n\n"
      "{}"
      "const LinkTechRow kTechs[] = {{\n{}    {{}}}};\n\n"
      "const PartRow kParts[] = {{\n{}    {{}}}};\n\n"
      "const MaterialRow kMaterials[] = {{\n{}    {{}}}};\n\n"
      "const ChannelRow kChannels[] = {{\n{}    {{}}}};\n\n"
      "}}  // namespace\n\n"
      "const CatalogTables kBuiltinCatalog = {{kTechs, {}, kParts, {}, kMaterials, {}, kChannels, "
      "{}, kFigures, kAttributes, kWidths}};\n\n"
      "}}  // namespace linkwise::hw::gen\n",
      origin, w.tables(), techs, parts, materials, channels, catalog.link_techs().size(),
      catalog.parts().size(), catalog.materials().size(), catalog.channels().size());
}

}  // namespace linkwise::hw::gen
