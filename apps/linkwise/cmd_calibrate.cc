// linkwise calibrate: hold measured figures against the model's predictions; fit link efficiencies.
// Flags -> measure::CalibrateRequest -> measure::run_calibrate -> report::calibrate_*.
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
  auto* o = &opts->req;
  add_chassis_arg(sub, o->chassis)->required();
  sub.add_option("MEASURED", o->measured,
                 "Measurement file (JSON, as linkwise bench -o writes; docs/measure.md)")
      ->required();
  sub.add_option("--threshold", o->threshold_pct,
                 "Flag figures off by more than this many percent (default 10)")
      ->check(CLI::Range(0.0, 1000.0));
  sub.add_flag("--fit", o->fit,
               "Fit link efficiencies to the copy-engine figures; write the chassis with -o");
  sub.add_option("-o,--output", o->fit_out,
                 "With --fit: the fitted chassis YAML file (written atomically)");
  sub.add_flag("--strict", opts->strict, "Exit 1 when a figure is flagged");
  sub.add_flag("--json", opts->json, "Print as JSON");
  add_nodes_flag(sub, o->nodes);
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
