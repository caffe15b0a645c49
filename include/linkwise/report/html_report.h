// `linkwise draw` and `linkwise report`: what they are asked, what they gather, what they write.
//
// The HTML report is one self-contained file (no script, no fetch: it opens without a network):
// the chassis drawing (coloured by use when a training job is given); all-reduce busbw against
// size for each algorithm with the cut bound; for a training job, the step breakdown as a stacked
// bar, the fullest links (bytes moved / (capacity x step time)) and the scaling curve; for a design
// space, the Pareto front; for a measurement file, measured against predicted. Charts are inline
// SVG written here (report/charts.h).
//
//   linkwise::report::ReportRequest r;  r.chassis = "dgx-h100";  r.output = "dgx.html";
//   linkwise::report::write_report(r, true);
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "linkwise/comm/sweep.h"
#include "linkwise/design/search.h"
#include "linkwise/measure/calibrate.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/util/option_spec.h"
#include "linkwise/work/train_run.h"

namespace linkwise::report {

struct ReportRequest {
  std::string chassis;  ///< a preset name or a chassis YAML file
  int nodes = 0;        ///< copies of the chassis (0: as the file says)
  bool as_designed = false;
  std::string output;                       ///< .svg/.png (draw) or .html (report)
  std::optional<work::TrainOptions> train;  ///< a training job: step, links, scaling
  /// The job as train's flags, as given (--job); the executable reads it into `train`.
  std::string job;
  std::string design_space;  ///< a design space YAML file, or ""
  std::string measured;      ///< a measurement file (bench -o), or ""
};

/// The options of `linkwise draw` (`html` false) and `linkwise report` (`html` true)
/// (util/option_spec.h).
const std::vector<OptionSpec<ReportRequest>>& report_options(bool html);

/// What the report shows, gathered from the same library calls the commands make.
struct ReportInputs {
  std::shared_ptr<const topo::Chassis> chassis;
  std::vector<comm::SweepResult> sweeps;  ///< all-reduce over every GPU, one per algorithm
  std::optional<work::TrainResult> step, scaling;
  std::vector<double> utilisation;  ///< per link, of the step (empty without a job)
  std::optional<design::DesignResult> design;
  std::optional<measure::Calibration> calibration;
  std::vector<std::string> notes;  ///< why a section asked for is missing
};

/// Per link index of `chassis`, the larger of its two directions' bytes / (capacity x step time)
/// in `step` (capacity: the link's effective rate, as the engine shares it); -1 where the step
/// moved nothing.
std::vector<double> link_utilisation(const topo::Chassis& chassis, const work::StepResult& step);

/// Runs what `request` asks for. Throws InputError for bad input, as the commands do.
ReportInputs gather_report(const ReportRequest& request);

/// The HTML document.
std::string html_report(const ReportInputs& inputs);

/// Checks the output's extension (InputError before any work), gathers and writes the drawing
/// (`html` false: .svg or .png) or the HTML report (`html` true: .html), atomically.
void write_report(const ReportRequest& request, bool html);

}  // namespace linkwise::report
