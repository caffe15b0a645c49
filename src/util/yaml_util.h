// yaml-cpp helpers shared by the catalog and chassis parsers: locations and typed reads that throw
// InputError naming file:line:column and the offending text.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "linkwise/util/error.h"

namespace linkwise::detail {

/// Parses YAML text; syntax errors become InputError with file:line:column.
YAML::Node load_yaml(const std::string& text, const std::string& filename);

/// The 1-based location of a node in `file`.
SourceLocation location_of(const YAML::Node& n, const std::string& file);

double as_double(const YAML::Node& n, const std::string& file, const std::string& what);
int as_int(const YAML::Node& n, const std::string& file, const std::string& what);
std::string as_string(const YAML::Node& n, const std::string& file, const std::string& what);

/// Throws InputError for the first key of map `n` not in `allowed`, with the closest allowed key.
void check_keys(const YAML::Node& n, const std::vector<std::string>& allowed,
                const std::string& file, const std::string& context);

}  // namespace linkwise::detail
