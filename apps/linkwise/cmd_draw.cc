// linkwise draw | report: the chassis as SVG/PNG; everything in one self-contained HTML file.
#include "commands.h"
#include "linkwise/report/html_report.h"

namespace linkwise::cli {

Handler setup_draw(CLI::App& sub) {
  auto o = std::make_shared<report::ReportRequest>();
  const bool html = sub.get_name() == "report";
  add_options(sub, report::report_options(html), *o);
  return [o, html] {
    check_nccl_settings(o->chassis);
    if (!o->job.empty()) o->train = train_job_options(o->job, o->chassis, o->nodes);
    report::write_report(*o, html);
    return 0;
  };
}

}  // namespace linkwise::cli
