// linkwise serve: latency, throughput, memory, links and cold start of a model served on a chassis.
// Flags (work::serve_options) -> work::ServeRunOptions -> work::run_serve -> report::serve_output.
#include "commands.h"
#include "linkwise/report/serve_report.h"
#include "linkwise/work/serve_run.h"

namespace linkwise::cli {

Handler setup_serve(CLI::App& sub) {
  struct Flags {
    work::ServeRunOptions opts;
    bool json = false;
    std::string output;
  };
  auto f = std::make_shared<Flags>();
  add_options(sub, work::serve_options(), f->opts);
  add_json_output_flags(sub, f->json, f->output, "-o,--output-file");
  return [f] {
    emit(report::serve_output(work::run_serve(f->opts), f->json), f->output);
    return 0;
  };
}

}  // namespace linkwise::cli
