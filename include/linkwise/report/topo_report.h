// Renders a topology analysis: the `nvidia-smi topo -m` style matrix and tables, JSON, Graphviz
// DOT. Rendering only: every number comes from topo::analyse().
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "linkwise/topo/analysis.h"

namespace linkwise::report {

/// The GPU and NIC matrix of box 0 as `nvidia-smi topo -m` prints it, byte for byte: tabs, " X ",
/// CPU Affinity, NUMA Affinity and GPU NUMA ID columns, the Legend and the NIC Legend.
std::string nvidia_smi_matrix(const topo::Chassis& chassis, const topo::TopoAnalysis& a);
/// The readable report `linkwise topo` prints: the nvidia-smi matrix, then linkwise's sections.
std::string topo_text(const topo::Chassis& chassis, const topo::TopoAnalysis& a);
/// The same as JSON: gpus, matrix (object of objects), pairs, bisection_GBps, lanes, warnings.
nlohmann::json topo_json(const topo::Chassis& chassis, const topo::TopoAnalysis& a);
/// The chassis as a Graphviz DOT graph, links labelled with technology and width.
std::string topo_dot(const topo::Chassis& chassis);

}  // namespace linkwise::report
