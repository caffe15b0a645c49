// linkwise calibrate: hold measured figures against the model's predictions; fit link efficiencies.
#include <fmt/format.h>

#include <cmath>

#include "commands.h"
#include "linkwise/measure/calibrate.h"
#include "linkwise/report/table.h"
#include "linkwise/util/text.h"

namespace linkwise::cli {

namespace {

std::string what(const measure::Measurement& m) {
  if (m.kind == "collective") return m.op + (m.algo.empty() ? "" : " " + m.algo);
  if (m.kind == "link") return fmt::format("{} x{}", m.tech, m.width);
  std::string s = m.engine;
  if (m.kind == "p2p" || m.kind == "p2p_bidir") s += m.peer_access ? " peer on" : " peer off";
  return s;
}

std::string gpus_text(const std::vector<int>& g) {
  if (g.empty()) return "-";
  bool run = g.size() > 2;
  for (std::size_t i = 1; i < g.size(); ++i) run = run && g[i] == g[i - 1] + 1;
  if (run) return fmt::format("{}-{}", g.front(), g.back());
  std::vector<std::string> s;
  for (int x : g) s.push_back(std::to_string(x));
  return join(s, ",");
}

std::string text(const measure::Calibration& cal) {
  report::Table t;
  t.header({"#", "kind", "chassis", "GPUs", "what", "size", "measured GB/s", "predicted GB/s", "error", "flag", "source"});
  std::string missing;
  for (std::size_t i = 0; i < cal.entries.size(); ++i) {
    const auto& e = cal.entries[i];
    const auto& m = e.measured;
    t.row({std::to_string(i + 1), m.kind, e.chassis, gpus_text(m.gpus), what(m),
           m.bytes ? format_size_bytes(m.bytes) : "-", fmt::format("{:.2f}", m.measured_GBps),
           e.predicted_GBps ? fmt::format("{:.2f}", *e.predicted_GBps) : "-",
           e.predicted_GBps ? fmt::format("{:+.1f}%", std::abs(e.error_pct) < 0.05 ? 0.0 : e.error_pct) : "-", e.flagged ? "OFF" : e.bound ? "bound" : "", m.source});
    if (!e.predicted_GBps) missing += fmt::format("  #{}: {}\n", i + 1, e.method);
  }
  std::string o = fmt::format("Measurements against the model of {} (error = (predicted - measured) / measured)\n{}",
                              cal.chassis, t.render());
  o += fmt::format("{} of {} figures predicted; {} off by more than {:g}%\n", cal.predicted, cal.entries.size(),
                   cal.flagged, cal.threshold_pct);
  if (cal.bounds > 0)
    o += fmt::format("bound: {} copy-kernel figure(s) held against the copy-engine link rate only (not modelled: a "
                     "kernel's rate depends on its SMs and loads in flight); off only when above it\n",
                     cal.bounds);
  if (!missing.empty()) o += "no prediction:\n" + missing;
  return o;
}

nlohmann::json to_json(const measure::Calibration& cal) {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : cal.entries) {
    nlohmann::json j = measure::to_json(e.measured);
    j["chassis"] = e.chassis;
    j["predicted_GBps"] = e.predicted_GBps ? nlohmann::json(*e.predicted_GBps) : nlohmann::json();
    j["error_pct"] = e.predicted_GBps ? nlohmann::json(e.error_pct) : nlohmann::json();
    j["flagged"] = e.flagged;
    j["bound"] = e.bound;
    j["method"] = e.method;
    entries.push_back(j);
  }
  return {{"chassis", cal.chassis}, {"threshold_pct", cal.threshold_pct}, {"predicted", cal.predicted},
          {"flagged", cal.flagged}, {"bounds", cal.bounds}, {"entries", entries}};
}

std::string fit_text(const measure::Fit& fit, const std::string& output) {
  report::Table t;
  t.header({"technology", "catalog efficiency", "fitted efficiency", "figures", "spread", "links written"});
  for (const auto& x : fit.techs)
    t.row({x.tech, fmt::format("{:.4f}", x.catalog_efficiency), fmt::format("{:.4f}", x.fitted_efficiency),
           std::to_string(x.figures), fmt::format("{:.1f}%", x.spread_pct), fmt::format("{} of {}", x.links, x.tech_links)});
  std::string o = fmt::format("\nFitted link efficiencies (written to {} on the links the fitted figures crossed; "
                              "other links keep theirs)\n{}",
                              output, t.render());
  for (const auto& w : fit.warnings) o += "warning: " + w + "\n";
  return o;
}

nlohmann::json fit_json(const measure::Fit& fit, const std::string& output) {
  nlohmann::json techs = nlohmann::json::array();
  for (const auto& x : fit.techs)
    techs.push_back({{"tech", x.tech}, {"catalog_efficiency", x.catalog_efficiency},
                     {"fitted_efficiency", x.fitted_efficiency}, {"figures", x.figures}, {"implied", x.implied},
                     {"spread_pct", x.spread_pct}, {"links", x.links}, {"tech_links", x.tech_links}});
  return {{"techs", techs}, {"warnings", fit.warnings}, {"output", output}};
}

}  // namespace

Handler setup_calibrate(CLI::App& sub) {
  struct Opts {
    std::string chassis, measured, output;
    double threshold = 10;
    bool json = false, fit = false, strict = false;
    int nodes = 0;
  };
  auto o = std::make_shared<Opts>();
  sub.add_option("CHASSIS", o->chassis, "A preset name (linkwise presets) or a chassis YAML file")->required();
  sub.add_option("MEASURED", o->measured, "Measurement file (JSON, as linkwise bench -o writes; docs/measure.md)")->required();
  sub.add_option("--threshold", o->threshold, "Flag figures off by more than this many percent (default 10)")
      ->check(CLI::Range(0.0, 1000.0));
  sub.add_flag("--fit", o->fit, "Fit link efficiencies to the copy-engine figures; write the chassis with -o");
  sub.add_option("-o,--output", o->output, "With --fit: the fitted chassis YAML file (written atomically)");
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
    nlohmann::json j = to_json(cal);
    std::string out = o->json ? "" : text(cal);
    if (o->fit) {
      auto fit = measure::fit_efficiencies(chassis, cal);
      write_file_atomic(o->output, topo::chassis_spec_to_yaml(fit.spec));
      out += fit_text(fit, o->output);
      j["fit"] = fit_json(fit, o->output);
    }
    emit(o->json ? j.dump(2) + "\n" : out, "");
    return o->strict && cal.flagged > 0 ? 1 : 0;
  };
}

}  // namespace linkwise::cli
