// Turns a parsed catalog into C++ source defining gen::kBuiltinCatalog (catalog_data.h): how
// data/catalog.yaml is compiled into the library (catalog_gen_main.cc runs it at build time).
#pragma once

#include <string>

#include "linkwise/hw/catalog.h"

namespace linkwise::hw::gen {

/// The source of a .cc file holding `catalog` as tables; `origin` names the file it came from (a
/// comment). Throws InputError for a figure that is not a finite number.
std::string catalog_to_cpp(const Catalog& catalog, const std::string& origin);

/// `s` as a C++ string literal: printable ASCII as is, everything else (and `"`, `\`) escaped.
std::string cpp_string_literal(const std::string& s);

}  // namespace linkwise::hw::gen
