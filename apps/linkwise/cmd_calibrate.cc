// linkwise calibrate: hold measured figures against the model's predictions; fit link efficiencies.
#include "commands.h"
#include "linkwise/measure/calibrate.h"
#include "linkwise/report/calibrate_report.h"
#include "linkwise/util/text.h"

namespace linkwise::cli {

Handler setup_calibrate(CLI::App& sub) {
  struct Opts {
    std::string chassis, measured, output;
    double threshold = 10;
    bool json = false, fit = false, strict = false;
    int nodes = 0;
  };
  auto o = std::make_shared<Opts>();
  sub.add_option("CHASSIS", o->chassis, "A preset name (linkwise presets) or a chassis YAML file")
      ->required();
  sub.add_option(
         "MEASURED", o->measured,
         "Measurements: JSON as linkwise bench writes, or an nccl-tests log (docs/measure.md)")
      ->required();
  sub.add_option("--threshold", o->threshold,
                 "Flag figures off by more than this many percent (default 10)")
      ->check(CLI::Range(0.0, 1000.0));
  sub.add_flag("--fit", o->fit,
               "Fit link efficiencies to the copy-engine figures; write the chassis with -o");
  sub.add_option("-o,--output", o->output,
                 "With --fit: the fitted chassis YAML file (written atomically)");
  sub.add_flag("--strict", o->strict, "Exit 1 when a figure is flagged");
  sub.add_flag("--json", o->json, "Print as JSON");
  add_nodes_flag(sub, o->nodes);
  return [o] {
    if (o->fit && o->output.empty()) throw InputError("--fit needs -o FILE for the fitted chassis");
    if (!o->fit && !o->output.empty()) throw InputError("-o is the fitted chassis: give --fit too");
    auto chassis = topo::load_chassis(o->chassis, o->nodes);
    auto file = measure::load_measurements(o->measured);
    measure::CalibrateOptions opts;
    opts.threshold_pct = o->threshold;
    auto cal = measure::calibrate(chassis, file, opts);
    std::optional<measure::Fit> fit;
    if (o->fit) {
      fit = measure::fit_efficiencies(chassis, cal);
      write_file_atomic(o->output, topo::chassis_spec_to_yaml(fit->spec));
    }
    const measure::Fit* f = fit ? &*fit : nullptr;
    emit(o->json ? report::calibrate_json(cal, f, o->output).dump(2) + "\n"
                 : report::calibrate_text(cal, f, o->output),
         "");
    return o->strict && cal.flagged > 0 ? 1 : 0;
  };
}

}  // namespace linkwise::cli
