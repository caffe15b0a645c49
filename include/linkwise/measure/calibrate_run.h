// One call behind `linkwise calibrate`: a chassis and a measurement file in, the comparison (and
// with fit, the fitted chassis) out. report::calibrate_text / calibrate_json render it.
#pragma once

#include <optional>
#include <string>

#include "linkwise/measure/calibrate.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/util/option_spec.h"

namespace linkwise::measure {

struct CalibrateRequest {
  std::string chassis;   ///< preset name or chassis file
  std::string measured;  ///< measurement file
  int nodes = 0;         ///< copies of the chassis (topo::load_chassis); 0: as the file says
  double threshold_pct = 10;
  bool fit = false;
  std::string fit_out;  ///< with fit: where the fitted chassis goes (required)
};

struct CalibrateRun {
  Calibration calibration;
  std::optional<Fit> fit;
  std::string fit_yaml;  ///< the fitted chassis as YAML, for `fit_out`
};

/// Throws InputError when fit and fit_out disagree, and for bad files.
CalibrateRun run_calibrate(const CalibrateRequest& r);
/// `linkwise calibrate`'s options: flags, help, ranges and Python keywords (util/option_spec.h).
const std::vector<OptionSpec<CalibrateRequest>>& calibrate_options();
/// The same on a chassis already built (r.chassis, r.nodes and r.fit_out are not read; with r.fit
/// the fitted chassis is returned, not written).
CalibrateRun run_calibrate(const CalibrateRequest& r, const topo::Chassis& chassis);

}  // namespace linkwise::measure
