// Renders `linkwise calibrate`: each measured figure against the model's prediction, and the fitted
// link efficiencies. Rendering only: every number comes from measure::calibrate() and
// measure::fit_efficiencies().
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "linkwise/measure/calibrate.h"

namespace linkwise::report {

/// Each figure against its prediction; with `fit` (--fit), the fitted efficiencies, written to
/// `output`.
std::string calibrate_text(const measure::Calibration& cal, const measure::Fit* fit = nullptr,
                           const std::string& output = "");
nlohmann::json calibrate_json(const measure::Calibration& cal, const measure::Fit* fit = nullptr,
                              const std::string& output = "");

}  // namespace linkwise::report
