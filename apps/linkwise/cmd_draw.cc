// linkwise draw | report: the chassis as SVG/PNG; everything in one self-contained HTML file.
#include "commands.h"
#include "linkwise/report/html_report.h"

namespace linkwise::cli {

Handler setup_draw(CLI::App& sub) {
  using R = report::ReportRequest;
  auto o = std::make_shared<R>();
  auto job = std::make_shared<std::string>();
  add_option(sub, topo::chassis_option(at<&R::chassis>), *o)->required();
  add_option(sub, topo::nodes_option(at<&R::nodes>), *o);
  add_option(sub, topo::as_designed_option(at<&R::as_designed>), *o);
  sub.add_option("--job", *job,
                 "A training job as train's flags (\"--model llama3-70b --mode lora\"): links "
                 "coloured by use; report: its step and scaling too");
  if (sub.get_name() == "report") {
    sub.add_option("--design", o->design_space, "A design space YAML file: its Pareto front");
    sub.add_option("--measured", o->measured,
                   "A measurement file (bench -o): held against the model");
  }
  sub.add_option("-o,--output", o->output,
                 sub.get_name() == "report" ? "The HTML file" : "FILE.svg or FILE.png")
      ->required();
  return [o, job, &sub] {
    if (!job->empty()) o->train = train_job_options(*job, o->chassis, o->nodes);
    report::write_report(*o, sub.get_name() == "report");
    return 0;
  };
}

}  // namespace linkwise::cli
