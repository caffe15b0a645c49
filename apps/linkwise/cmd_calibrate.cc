// linkwise calibrate: hold measured figures against the model's predictions; fit link efficiencies.
// Flags (measure::calibrate_options) -> measure::CalibrateRequest -> measure::run_calibrate ->
// report::calibrate_*.
#include "commands.h"
#include "linkwise/measure/calibrate_run.h"
#include "linkwise/report/calibrate_report.h"
#include "linkwise/util/text.h"

namespace linkwise::cli {

Handler setup_calibrate(CLI::App& sub) {
  struct Opts {
    measure::CalibrateRequest req;
    bool json = false, strict = false;
  };
  auto opts = std::make_shared<Opts>();
  add_options(sub, measure::calibrate_options(), opts->req);
  sub.add_flag("--strict", opts->strict, "Exit 1 when a figure is flagged");
  sub.add_flag("--json", opts->json, "Print as JSON");
  return [opts] {
    auto run = measure::run_calibrate(opts->req);
    if (run.fit) write_file_atomic(opts->req.fit_out, run.fit_yaml);
    const measure::Fit* f = run.fit ? &*run.fit : nullptr;
    const auto& cal = run.calibration;
    emit(opts->json ? report::calibrate_json(cal, f, opts->req.fit_out).dump(2) + "\n"
                    : report::calibrate_text(cal, f, opts->req.fit_out),
         "");
    return opts->strict && cal.flagged > 0 ? 1 : 0;
  };
}

}  // namespace linkwise::cli
