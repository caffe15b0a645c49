// Renders a collective predicted over a size sweep (`linkwise collective`): nccl-tests-like table
// and JSON. Rendering only: every number comes from comm::predict_sweep().
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "linkwise/comm/sweep.h"

namespace linkwise::report {

/// The readable report, laid out as nccl-tests prints its results (so nccl-tests log readers read
/// it): '#' header lines, one row per size, the average bus bandwidth; linkwise's own figures
/// (rings, the cut bound, notes, the algorithm per size, the largest size's bottlenecks) as '#'
/// comment lines.
std::string collective_text(const comm::SweepResult& r);
/// The same as JSON (docs/json.md).
nlohmann::json collective_json(const comm::SweepResult& r);

}  // namespace linkwise::report
