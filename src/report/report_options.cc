// draw's and report's options, described once (util/option_spec.h).
#include "linkwise/report/html_report.h"
#include "linkwise/topo/chassis_options.h"

namespace linkwise::report {

namespace {
using R = ReportRequest;
using Spec = OptionSpec<R>;

std::vector<Spec> described(bool html) {
  std::vector<Spec> specs = {
      topo::chassis_option(at<&R::chassis>).with(Spec::kRequired),
      topo::nodes_option(at<&R::nodes>),
      topo::as_designed_option(at<&R::as_designed>),
      {"--job", at<&R::job>,
       "A training job as train's flags (\"--model llama3-70b --mode lora\"): links coloured by "
       "use; report: its step and scaling too"},
  };
  if (html) {
    specs.push_back(
        {"--design", at<&R::design_space>, "A design space YAML file: its Pareto front"});
    specs.push_back(
        {"--measured", at<&R::measured>, "A measurement file (bench -o): held against the model"});
  }
  specs.push_back(
      Spec{"-o,--output", at<&R::output>, html ? "The HTML file" : "FILE.svg or FILE.png"}.with(
          Spec::kRequired));
  return specs;
}
}  // namespace

const std::vector<OptionSpec<ReportRequest>>& report_options(bool html) {
  static const std::vector<Spec> draw = described(false), report = described(true);
  return html ? report : draw;
}

}  // namespace linkwise::report
