// measure::run_calibrate: the calibrate command's loading, comparison and fit (no rendering).
#include "linkwise/measure/calibrate_run.h"

#include "linkwise/measure/measurement.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/topo/chassis_options.h"
#include "linkwise/util/error.h"

namespace linkwise::measure {

CalibrateRun run_calibrate(const CalibrateRequest& r) {
  if (r.fit && r.fit_out.empty()) throw InputError("--fit needs -o FILE for the fitted chassis");
  if (!r.fit && !r.fit_out.empty()) throw InputError("-o is the fitted chassis: give --fit too");
  auto chassis = topo::load_chassis(r.chassis, r.nodes);
  return run_calibrate(r, chassis);
}

CalibrateRun run_calibrate(const CalibrateRequest& r, const topo::Chassis& chassis) {
  auto file = load_measurements(r.measured);
  CalibrateOptions opts;
  opts.threshold_pct = r.threshold_pct;
  CalibrateRun run;
  run.calibration = calibrate(chassis, file, opts);
  if (r.fit) {
    run.fit = fit_efficiencies(chassis, run.calibration);
    run.fit_yaml = topo::chassis_spec_to_yaml(run.fit->spec);
  }
  return run;
}

const std::vector<OptionSpec<CalibrateRequest>>& calibrate_options() {
  using C = CalibrateRequest;
  using Spec = OptionSpec<C>;
  static const std::vector<Spec> specs = {
      topo::chassis_option(at<&C::chassis>).with(Spec::kRequired),
      Spec{"MEASURED", at<&C::measured>,
           "Measurements: JSON as linkwise bench writes, or an nccl-tests log (docs/measure.md)"}
          .with(Spec::kRequired),
      Spec{"--threshold", at<&C::threshold_pct>,
           "Flag figures off by more than this many percent (default 10)"}
          .range(0.0, 1000.0),
      {"--fit", at<&C::fit>,
       "Fit link efficiencies to the copy-engine figures; write the chassis with -o"},
      {"-o,--output", at<&C::fit_out>,
       "With --fit: the fitted chassis YAML file (written atomically)"},
      topo::nodes_option(at<&C::nodes>),
  };
  return specs;
}

}  // namespace linkwise::measure
