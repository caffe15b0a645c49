#include "linkwise/report/calibrate_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "linkwise/report/json.h"
#include "linkwise/report/table.h"
#include "linkwise/util/text.h"

namespace linkwise::report {

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
  return fmt::format("{}", fmt::join(s, ","));
}

std::string calibrate_text_only(const measure::Calibration& cal) {
  Table t;
  t.header({"#", "kind", "chassis", "GPUs", "what", "size", "measured GB/s", "predicted GB/s",
            "error", "flag", "source"});
  std::string missing;
  for (std::size_t i = 0; i < cal.entries.size(); ++i) {
    const auto& e = cal.entries[i];
    const auto& m = e.measured;
    t.row({std::to_string(i + 1), m.kind, e.chassis, gpus_text(m.gpus), what(m),
           m.bytes ? format_size_bytes(m.bytes) : "-", fmt::format("{:.2f}", m.measured_GBps),
           e.predicted_GBps ? fmt::format("{:.2f}", *e.predicted_GBps) : "-",
           e.predicted_GBps
               ? fmt::format("{:+.1f}%", std::abs(e.error_pct) < 0.05 ? 0.0 : e.error_pct)
               : "-",
           e.flagged ? "OFF"
           : e.bound ? "bound"
                     : "",
           m.source});
    if (!e.predicted_GBps) missing += fmt::format("  #{}: {}\n", i + 1, e.method);
  }
  std::string o = fmt::format(
      "Measurements against the model of {} (error = (predicted - measured) / measured)\n{}",
      cal.chassis, t.render());
  o += fmt::format("{} of {} figures predicted; {} off by more than {:g}%\n", cal.predicted,
                   cal.entries.size(), cal.flagged, cal.threshold_pct);
  if (cal.bounds > 0)
    o += fmt::format(
        "bound: {} copy-kernel figure(s) held against the copy-engine link rate only (not "
        "modelled: a "
        "kernel's rate depends on its SMs and loads in flight); off only when above it\n",
        cal.bounds);
  if (!missing.empty()) o += "no prediction:\n" + missing;
  return o;
}

nlohmann::json calibrate_json_only(const measure::Calibration& cal) {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : cal.entries) {
    nlohmann::json j = measure::to_json(e.measured);
    j["chassis"] = e.chassis;
    j["predicted_GBps"] = e.predicted_GBps ? nlohmann::json(*e.predicted_GBps) : nlohmann::json();
    j["error"] =
        e.predicted_GBps ? nlohmann::json(e.error_pct / 100) : nlohmann::json();  // a fraction
    j["flagged"] = e.flagged;
    j["bound"] = e.bound;
    j["method"] = e.method;
    entries.push_back(j);
  }
  // Which entries are predicted, flagged or bounds: each entry says (lists, not counts).
  return {{"chassis", cal.chassis}, {"threshold", cal.threshold_pct / 100}, {"entries", entries}};
}

std::string fit_text(const measure::Fit& fit, const std::string& output) {
  Table t;
  t.header({"technology", "catalog efficiency", "fitted efficiency", "figures", "spread",
            "links written"});
  for (const auto& x : fit.techs)
    t.row({x.tech, fmt::format("{:.4f}", x.catalog_efficiency),
           fmt::format("{:.4f}", x.fitted_efficiency), std::to_string(x.figures),
           fmt::format("{:.1f}%", x.spread_pct), fmt::format("{} of {}", x.links, x.tech_links)});
  std::string o = fmt::format(
      "\nFitted link efficiencies (written to {} on the links the fitted figures crossed; "
      "other links keep theirs)\n{}",
      output, t.render());
  for (const auto& w : fit.warnings) o += "warning: " + w + "\n";
  return o;
}

nlohmann::json fit_json(const measure::Fit& fit, const std::string& output) {
  nlohmann::json techs = nlohmann::json::array();
  for (const auto& x : fit.techs)
    techs.push_back({{"tech", x.tech},
                     {"catalog_efficiency", x.catalog_efficiency},
                     {"fitted_efficiency", x.fitted_efficiency},
                     {"figures", x.figures},
                     {"implied", x.implied},
                     {"spread", x.spread_pct / 100},
                     {"links", x.links},
                     {"tech_links", x.tech_links}});
  return {{"techs", techs}, {"warnings", fit.warnings}, {"output", output}};
}

}  // namespace

std::string calibrate_text(const measure::Calibration& cal, const measure::Fit* fit,
                           const std::string& output) {
  std::string out = calibrate_text_only(cal);
  if (fit) out += fit_text(*fit, output);
  return fit_width(out);
}

nlohmann::json calibrate_json(const measure::Calibration& cal, const measure::Fit* fit,
                              const std::string& output) {
  nlohmann::json j = calibrate_json_only(cal);
  if (fit) j["fit"] = fit_json(*fit, output);
  return with_schema(std::move(j));
}

}  // namespace linkwise::report
