#include "linkwise/report/html_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "charts.h"
#include "linkwise/report/drawing.h"
#include "svg.h"

namespace linkwise::report {

namespace {

constexpr const char* kStyle = R"(<style>
body { font-family: "DejaVu Sans", sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ccc; }
.drawing { border: 1px solid #ddd; } .drawing svg { width: 100%; height: auto; } p.note { color: #555; font-size: 13px; }
table { border-collapse: collapse; font-size: 13px; } td, th { padding: 2px 10px; text-align: right; }
th { border-bottom: 1px solid #999; } td:first-child, th:first-child { text-align: left; }
</style>
)";

std::string section(const std::string& title, const std::string& body, const std::string& id) {
  return fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n{}</section>\n", id, svg::escape(title),
                     body);
}

std::string note(const std::string& text) {
  return "<p class=\"note\">" + svg::escape(text) + "</p>\n";
}

std::string drawing_section(const ReportInputs& in) {
  DrawOptions d;
  d.utilisation = in.utilisation;
  if (!in.utilisation.empty())
    d.subtitle = fmt::format("links coloured by use in one step of {} ({})",
                             in.step->setup.model_name, in.step->step.plan.str());
  std::string svg = chassis_svg(*in.chassis, d);
  std::string body = "<div class=\"drawing\">\n" + svg.substr(svg.find("<svg")) + "</div>\n";
  body +=
      note(in.utilisation.empty()
               ? "Colour: link technology; stroke width: bandwidth per direction (log scale). "
                 "Hover a box or link for its figures."
               : "Colour: share of each link's capacity the step used (bytes moved / (capacity x "
                 "step time)); grey: unused. Hover a link for its figures.");
  return section("Chassis", body, "drawing");
}

std::string collective_section(const ReportInputs& in) {
  charts::LineChart c;
  c.title = fmt::format("all_reduce over {} GPUs: busbw by size", in.sweeps.front().ranks);
  c.x_label = "size (bytes per rank)";
  c.y_label = "busbw GB/s";
  c.log2_x = true;
  for (const auto& s : in.sweeps) {
    charts::Series series{comm::to_string(s.rows.front().prediction.algorithm), {}, false};
    for (const auto& row : s.rows)
      series.points.push_back({static_cast<double>(row.bytes), row.prediction.busbw_Bps / 1e9});
    c.series.push_back(std::move(series));
  }
  const auto& b = in.sweeps.front().bound;
  std::string body;
  if (b.busbw_Bps > 0) {
    charts::Series bound{"cut bound", {}, true};
    for (const auto& row : in.sweeps.front().rows)
      bound.points.push_back({static_cast<double>(row.bytes), b.busbw_Bps / 1e9});
    c.series.push_back(std::move(bound));
  }
  body += charts::line_chart(c);
  if (b.busbw_Bps > 0)
    body +=
        note(fmt::format("Cut bound {:.1f} GB/s busbw: no algorithm can exceed it (worst cut {}).",
                         b.busbw_Bps / 1e9, b.cut));
  return section("Collectives (linkwise collective --algo ...)", body, "collectives");
}

std::string step_section(const ReportInputs& in) {
  const auto& r = in.step->step;
  const auto& b = r.breakdown;
  std::vector<std::pair<std::string, double>> parts = {
      {"compute", b.compute_s},          {"tensor-parallel", b.tp_s},
      {"context-parallel ring", b.cp_s}, {"expert all-to-all", b.ep_s},
      {"pipeline sends", b.pp_s},        {"data-parallel sync", b.dp_s},
      {"ZeRO gathers", b.zero_s},        {"kernel contention", b.contention_s},
      {"pipeline bubble", b.bubble_s},   {"host I/O", b.io_s}};
  std::erase_if(parts, [](const auto& p) { return p.second <= 0; });
  std::string body =
      note(fmt::format("{} on {} GPUs, plan {}: step {:.3f} s, {:.0f} tokens/s, MFU {:.1f}%. {}",
                       in.step->setup.model_name, r.gpus, r.plan.str(), r.step_time_s,
                       r.tokens_per_s, 100 * r.mfu, r.bottleneck));
  body += charts::stacked_bar("Step time by kind (linkwise train)", parts, "s");
  // The fullest links: utilisation per link, largest first.
  std::vector<std::pair<std::string, double>> full;
  const auto& c = *in.chassis;
  for (const auto& l : c.links())
    if (static_cast<std::size_t>(l.index) < in.utilisation.size() && in.utilisation[l.index] > 0)
      full.push_back({fmt::format("{} - {} ({})", c.node(l.a).name, c.node(l.b).name, l.tech->name),
                      in.utilisation[l.index]});
  std::stable_sort(full.begin(), full.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  if (full.size() > 12) full.resize(12);
  if (!full.empty())
    body +=
        charts::bar_chart("Fullest links: bytes moved / (capacity x step time), busier direction",
                          full, std::max(full.front().second, 1e-9), 100, "%");
  return section("Training step", body, "step");
}

std::string scaling_section(const ReportInputs& in) {
  charts::LineChart c;
  c.title = "Scaling: best plan's tokens/s by GPU count (linkwise train --scaling)";
  c.x_label = "GPUs";
  c.y_label = "tokens/s";
  c.markers = true;
  charts::Series got{"tokens/s", {}, false}, ideal{"linear from the first", {}, true};
  double first = 0;
  int first_gpus = 0;
  for (const auto& p : in.scaling->scaling) {
    if (!p.fits) continue;
    got.points.push_back({static_cast<double>(p.gpus), p.best.tokens_per_s});
    if (first_gpus == 0) first = p.best.tokens_per_s, first_gpus = p.gpus;
    ideal.points.push_back({static_cast<double>(p.gpus), first * p.gpus / first_gpus});
  }
  if (got.points.empty()) return section("Scaling", note("No GPU count fits the job."), "scaling");
  c.series = {got, ideal};
  return section("Scaling", charts::line_chart(c), "scaling");
}

std::string design_section(const ReportInputs& in) {
  const auto& d = *in.design;
  std::vector<charts::Point> points;
  auto on_front = [&](const design::Design& x) {
    return std::any_of(d.front.begin(), d.front.end(),
                       [&](const auto& y) { return y.spec.name == x.spec.name; });
  };
  auto add = [&](const design::Design& x) {
    points.push_back({x.power_w, x.objective,
                      fmt::format("{}: objective {:.3f}, {:.0f} W, ${:.0f}", x.spec.name,
                                  x.objective, x.power_w, x.cost_usd),
                      on_front(x)});
  };
  for (const auto& x : d.ranked) add(x);
  for (const auto& x : d.front)
    if (std::none_of(d.ranked.begin(), d.ranked.end(),
                     [&](const auto& y) { return y.spec.name == x.spec.name; }))
      add(x);
  std::string body = charts::scatter("Designs: objective against power (linkwise design)",
                                     "power W", "objective (higher is better)", points, false);
  body += note(fmt::format(
      "{} candidates, {} feasible; {} on the Pareto front (objective up, power and cost down).",
      d.candidates, d.feasible, d.front.size()));
  return section("Design space", body, "design");
}

std::string calibration_section(const ReportInputs& in) {
  std::vector<charts::Point> points;
  for (const auto& e : in.calibration->entries)
    if (e.predicted_GBps)
      points.push_back(
          {e.measured.measured_GBps, *e.predicted_GBps,
           fmt::format("{} {}: measured {:.1f}, predicted {:.1f} GB/s ({:+.0f}%)", e.measured.kind,
                       e.measured.op, e.measured.measured_GBps, *e.predicted_GBps, e.error_pct),
           e.flagged});
  std::string body = charts::scatter("Measured against predicted (linkwise calibrate)",
                                     "measured GB/s", "predicted GB/s", points, true);
  body += note(fmt::format("{} figures predicted, {} off by more than {:.0f}% (red).",
                           in.calibration->predicted, in.calibration->flagged,
                           in.calibration->threshold_pct));
  return section("Measured against predicted", body, "calibration");
}

}  // namespace

std::string html_report(const ReportInputs& in) {
  const auto& c = *in.chassis;
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>linkwise: " +
      svg::escape(c.name()) + "</title>\n" + kStyle + "</head>\n<body>\n";
  out += "<h1>linkwise report: " + svg::escape(c.name()) + "</h1>\n";
  if (!c.description().empty()) out += note(c.description());
  for (const auto& n : in.notes) out += note(n);
  out += drawing_section(in);
  if (!in.sweeps.empty()) out += collective_section(in);
  if (in.step && in.step->kind == work::TrainResult::Kind::kStep) out += step_section(in);
  if (in.scaling) out += scaling_section(in);
  if (in.design) out += design_section(in);
  if (in.calibration) out += calibration_section(in);
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace linkwise::report
