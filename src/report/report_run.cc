// Gathering what `linkwise draw` and `linkwise report` show: the same library calls `topo`,
// `collective`, `train`, `design` and `calibrate` make, one after the other.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "linkwise/report/drawing.h"
#include "linkwise/report/html_report.h"
#include "linkwise/report/train_report.h"
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

namespace {

/// The chassis and, with a job, its step and link use: all a drawing needs.
ReportInputs gather_drawing(const ReportRequest& r) {
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

}  // namespace

ReportInputs gather_report(const ReportRequest& r) {
  ReportInputs in = gather_drawing(r);
  if (in.chassis->gpus().size() >= 2)
    for (const char* algo : {"ring", "tree", "nvls", "direct", "hierarchical"}) {
      comm::SweepRequest q;
      q.chassis = r.chassis, q.nodes = r.nodes, q.as_designed = r.as_designed, q.algo = algo;
      q.sweep.min = "1K";
      q.sweep.factor = "4";
      try {
        auto s = comm::predict_sweep(q);
        if (!s.rows.empty() &&
            comm::to_string(s.rows.front().prediction.algorithm) == std::string(algo))
          in.sweeps.push_back(std::move(s));
      } catch (const InputError&) {  // the algorithm does not apply to this chassis
      }
    }
  if (in.step && in.step->kind == work::TrainResult::Kind::kScaling) in.scaling = in.step;
  if (in.step && !in.step->fits()) in.notes.push_back(train_does_not_fit(*in.step, ""));
  if (r.train && in.step && in.step->kind == work::TrainResult::Kind::kStep) {
    work::TrainOptions o = *r.train;
    o.as_designed = r.as_designed, o.scaling = true, o.plan = "auto", o.tokens = 0;
    o.checkpoint_every = 0;
    std::erase_if(o.given, [](const std::string& g) {
      return g == "--plan" || g == "--top" || g == "--tokens" || g.rfind("--checkpoint", 0) == 0;
    });
    try {
      in.scaling = work::run_train(o);
    } catch (const InputError& e) {
      in.notes.push_back(fmt::format("no scaling curve: {}", e.what()));
    }
  }
  if (!r.design_space.empty()) in.design = design::run_design(design::load_space(r.design_space));
  if (!r.measured.empty())
    in.calibration = measure::calibrate(*in.chassis, measure::load_measurements(r.measured));
  return in;
}

void write_report(const ReportRequest& r, bool html) {
  std::string ext = extension(r.output);
  if (html ? ext != ".html" && ext != ".htm" : ext != ".svg" && ext != ".png")
    throw InputError(fmt::format("-o '{}': {} is written as {}, not '{}'", r.output,
                                 html ? "the report" : "a drawing", html ? ".html" : ".svg or .png",
                                 ext.empty() ? "(no extension)" : ext));
  // A folder that is missing or not writable is bad input, found before any work.
  auto folder = std::filesystem::path(r.output).parent_path();
  if (folder.empty()) folder = ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    throw InputError(fmt::format("-o '{}': folder '{}' does not exist", r.output, folder.string()));
  if (::access(folder.c_str(), W_OK) != 0)
    throw InputError(
        fmt::format("-o '{}': folder '{}' is not writable", r.output, folder.string()));
  if (!html) {
    auto in = gather_drawing(r);
    DrawOptions d;
    d.utilisation = in.utilisation;
    if (!in.utilisation.empty())
      d.subtitle = fmt::format("links coloured by use in one step of {} ({})",
                               in.step->setup.model_name, in.step->step.plan.str());
    write_drawing(chassis_svg(*in.chassis, d), r.output);
    return;
  }
  write_file_atomic(r.output, html_report(gather_report(r)));
}

}  // namespace linkwise::report
