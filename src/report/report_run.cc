// Gathering what `linkwise draw` and `linkwise report` show: the same library calls `topo`,
// `collective`, `train`, `design` and `calibrate` make, one after the other.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "linkwise/report/drawing.h"
#include "linkwise/report/html_report.h"
#include "linkwise/util/error.h"
#include "linkwise/util/text.h"

namespace linkwise::report {

namespace {

std::string extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return ext;
}

}  // namespace

std::vector<double> link_utilisation(const topo::Chassis& c, const work::StepResult& step) {
  std::vector<double> out(c.links().size(), -1);
  if (step.step_time_s <= 0) return out;
  for (const auto& busy : step.links) {
    auto arrow = busy.link.find("->");
    if (arrow == std::string::npos) continue;  // host memory
    int from = c.find(busy.link.substr(0, arrow)), to = c.find(busy.link.substr(arrow + 2));
    if (from < 0 || to < 0) continue;
    for (int li : c.incident(from)) {
      const auto& l = c.link(li);
      if (l.other(from) != to) continue;
      double u = busy.bytes / (l.effective_bytes_per_s() * step.step_time_s);
      out[li] = std::max(out[li], u);
    }
  }
  return out;
}

ReportInputs gather_report(const ReportRequest& r) {
  ReportInputs in;
  auto rates = r.as_designed ? topo::LinkRates::kAsDesigned : topo::LinkRates::kAsBuilt;
  in.chassis = std::make_shared<const topo::Chassis>(topo::load_chassis(r.chassis, r.nodes, rates));
  if (r.train) {
    work::TrainOptions o = *r.train;
    o.as_designed = r.as_designed;
    in.step = work::run_train(o);
    if (in.step->kind == work::TrainResult::Kind::kStep)
      in.utilisation = link_utilisation(*in.chassis, in.step->step);
  }
  return in;
}

void write_report(const ReportRequest& r, bool html) {
  std::string ext = extension(r.output);
  if (html ? ext != ".html" && ext != ".htm" : ext != ".svg" && ext != ".png")
    throw InputError(fmt::format("-o '{}': {} is written as {}, not '{}'", r.output,
                                 html ? "the report" : "a drawing", html ? ".html" : ".svg or .png",
                                 ext.empty() ? "(no extension)" : ext));
  if (!html) {
    auto in = gather_report(r);
    DrawOptions d;
    d.utilisation = in.utilisation;
    if (r.train)
      d.subtitle = fmt::format("links coloured by use in one step of {} ({})",
                               in.step->setup.model_name, in.step->step.plan.str());
    write_drawing(chassis_svg(*in.chassis, d), r.output);
    return;
  }
  write_file_atomic(r.output, html_report(gather_report(r)));
}

}  // namespace linkwise::report
