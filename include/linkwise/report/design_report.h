// Renders a design search (design/search.h): ranked designs, the Pareto front, each design's parts,
// limiting links, power, heat, cost, retimers, budget use, and what relaxing a budget would buy.
// Rendering only: every number comes from design::run_design().
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "linkwise/design/search.h"

namespace linkwise::report {

/// The readable report `linkwise design` prints.
std::string design_text(const design::DesignResult& r);
/// The same as JSON: counts, excluded, ranked[], front[], relaxations[].
nlohmann::json design_json(const design::DesignResult& r);

}  // namespace linkwise::report
