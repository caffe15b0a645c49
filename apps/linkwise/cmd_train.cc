// linkwise train: step time, breakdown, memory, busiest links and time to train of a training job.
// Flags (work::train_options) -> work::TrainOptions -> work::run_train -> report::train_output.
#include <fmt/format.h>

#include <cstdio>

#include "commands.h"
#include "linkwise/report/train_report.h"
#include "linkwise/util/error.h"
#include "linkwise/work/train_run.h"

namespace linkwise::cli {

namespace {

struct TrainFlags {
  work::TrainOptions opts;
  bool json = false;
  std::string output;
  CLI::App* app = nullptr;
};

work::TrainOptions options_of(const TrainFlags& f) {
  work::TrainOptions o = f.opts;
  o.given = given_options(*f.app);
  return o;
}

int run(TrainFlags& f) {
  auto r = work::run_train(options_of(f));
  if (!r.fits()) {  // an explicit plan that does not fit: the report on stdout, no output file
    if (f.output.empty()) emit(report::train_output(r, f.json), "");
    std::fflush(stdout);
    fmt::print(stderr, "linkwise: error: {}\n", report::train_does_not_fit(r, f.output));
    return 2;
  }
  emit(report::train_output(r, f.json), f.output);
  return 0;
}

void add_train_flags(CLI::App& sub, TrainFlags* f) {
  add_options(sub, work::train_options(), f->opts);
  add_json_output_flags(sub, f->json, f->output);
  f->app = &sub;
}

}  // namespace

Handler setup_train(CLI::App& sub) {
  auto f = std::make_shared<TrainFlags>();
  add_train_flags(sub, f.get());
  return [f] { return run(*f); };
}

work::TrainOptions train_job_options(std::string job, const std::string& chassis, int nodes) {
  const std::string given = job;
  if (job.rfind("train", 0) == 0) job.erase(0, 5);
  CLI::App app{"--job"};
  TrainFlags f;
  add_train_flags(app, &f);
  try {
    app.parse(job, false);
  } catch (const CLI::ParseError& e) {
    throw InputError(fmt::format("--job '{}': {}", given, e.what()));
  }
  auto o = options_of(f);
  if (o.chassis.empty()) o.chassis = chassis, o.nodes = nodes, o.given.push_back("CHASSIS");
  return o;
}

}  // namespace linkwise::cli
