// Renders a topology analysis: the `nvidia-smi topo -m` style matrix and tables, JSON, Graphviz
// DOT. Rendering only: every number comes from topo::analyse().
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "linkwise/topo/analysis.h"

namespace linkwise::report {

/// The readable report `linkwise topo` prints.
std::string topo_text(const topo::Chassis& chassis, const topo::TopoAnalysis& a);
/// The same as JSON: gpus, matrix (object of objects), pairs, bisection_GBps, lanes, warnings.
nlohmann::json topo_json(const topo::Chassis& chassis, const topo::TopoAnalysis& a);
/// The chassis as a Graphviz DOT graph, links labelled with technology and width.
std::string topo_dot(const topo::Chassis& chassis);

}  // namespace linkwise::report
