// Renders `linkwise calibrate`: each measured figure against the model's prediction, and the fitted link
// efficiencies. Rendering only: every number comes from measure::calibrate() and measure::fit_efficiencies().
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "linkwise/measure/calibrate.h"

namespace linkwise::report {

std::string calibrate_text(const measure::Calibration& cal);
nlohmann::json calibrate_json(const measure::Calibration& cal);
/// The fit, saying it was written to `output`.
std::string fit_text(const measure::Fit& fit, const std::string& output);
nlohmann::json fit_json(const measure::Fit& fit, const std::string& output);

}  // namespace linkwise::report
