// Renders the catalog (`linkwise catalog`, `linkwise catalog ID`) and the preset list (`linkwise
// presets`). Rendering only: the figures come from hw::Catalog and hw::describe().
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "linkwise/hw/catalog.h"

namespace linkwise::report {

/// Every link technology and part: id, kind, name.
std::string catalog_text(const hw::Catalog& catalog);
nlohmann::json catalog_json(const hw::Catalog& catalog);
/// One entry: each figure with its value and source, then its attributes.
std::string entry_text(const hw::EntryFigures& entry);
nlohmann::json entry_json(const hw::EntryFigures& entry);
/// The built-in presets: id and description.
std::string presets_text();
nlohmann::json presets_json();

}  // namespace linkwise::report
