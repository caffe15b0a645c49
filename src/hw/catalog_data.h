// The built-in catalog as plain tables, written at build time by linkwise_catalog_gen from
// data/catalog.yaml (catalog_codegen.h) and read by Catalog::builtin() (catalog_builtin.cc).
// Parts carry their part_figures already merged; every figure of a fixed-shape entry is listed by
// its key in catalog_fields.h, given or not (an absent one has an empty source).
#pragma once

#include "linkwise/hw/catalog.h"

namespace linkwise::hw::gen {

struct FigureRow {
  const char* key;
  double value;
  const char* source;
};

struct AttributeRow {
  const char* key;
  const char* value;
};

struct LinkTechRow {
  const char* id;
  const char* name;
  LinkFamily family;
  int generation;
  const char* unit;
  int first_width, width_count;    ///< into CatalogTables::widths
  int first_figure, figure_count;  ///< into CatalogTables::figures
};

struct PartRow {
  const char* id;
  const char* name;
  PartKind kind;
  const char* vendor;
  int first_figure, figure_count;  ///< sorted by key
  int first_attribute, attribute_count;
};

struct MaterialRow {
  const char* id;
  const char* name;
  int first_figure, figure_count;
};

struct ChannelRow {
  const char* tech;
  int first_figure, figure_count;
};

struct CatalogTables {
  const LinkTechRow* techs;
  int tech_count;
  const PartRow* parts;
  int part_count;
  const MaterialRow* materials;
  int material_count;
  const ChannelRow* channels;
  int channel_count;
  const FigureRow* figures;
  const AttributeRow* attributes;
  const int* widths;
};

/// Defined in the generated catalog_data.cc.
extern const CatalogTables kBuiltinCatalog;

}  // namespace linkwise::hw::gen
