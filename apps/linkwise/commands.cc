#include "commands.h"

#include <fmt/format.h>

#include "linkwise/comm/predict.h"
#include "linkwise/comm/transport.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/util/text.h"

namespace linkwise::cli {

// Each command's setup, defined in its cmd_*.cc.
Handler setup_presets(CLI::App& sub);
Handler setup_topo(CLI::App& sub);
Handler setup_catalog(CLI::App& sub);
Handler setup_probe(CLI::App& sub);
Handler setup_collective(CLI::App& sub);
Handler setup_train(CLI::App& sub);
Handler setup_bench(CLI::App& sub);
Handler setup_calibrate(CLI::App& sub);
Handler setup_serve(CLI::App& sub);
Handler setup_design(CLI::App& sub);
Handler setup_draw(CLI::App& sub);

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"presets", "List the built-in machine presets", setup_presets},
      {"catalog", "List catalog parts and link technologies with their sources", setup_catalog},
      {"topo", "Analyse a chassis: path classes, bandwidths, bisection, lanes, warnings",
       setup_topo},
      {"probe", "Discover this machine's topology; --check its links, ACS, IOMMU and NVLinks",
       setup_probe},
      {"collective",
       "Predict a collective (nccl-tests style): time, algbw, busbw, algorithm, cut bound",
       setup_collective},
      {"train",
       "Training step time, breakdown, memory, busiest links and time to train of a job and plan",
       setup_train},
      {"serve",
       "Serving latency, throughput, KV cache, links and cold start of a model on a chassis",
       setup_serve},
      {"bench", "Measure host-device, peer and collective bandwidth on this machine's GPUs",
       setup_bench},
      {"calibrate", "Hold measured figures against the model; fit link efficiencies",
       setup_calibrate},
      {"design",
       "Search a design space for the best chassis that fits its budgets, for its workloads",
       setup_design},
      {"draw", "Draw a chassis as SVG or PNG, links by technology or by use in a job", setup_draw},
      {"report", "One self-contained HTML file: drawing, collectives, step, scaling, designs",
       setup_draw},
  };
  return table;
}

void emit(const std::string& text, const std::string& path) {
  if (path.empty()) {
    fmt::print("{}", text);
    std::fflush(stdout);
  } else {
    write_file_atomic(path, text);
  }
}

void add_json_output_flags(CLI::App& sub, bool& json, std::string& output,
                           const std::string& names) {
  sub.add_flag("--json", json, "Print as JSON");
  sub.add_option(names, output, "Write to this file (atomically) instead of standard output");
}

void check_nccl_settings(const std::string& chassis) {
  if (!chassis.empty()) comm::nccl_options(topo::load_chassis(chassis));
}

std::vector<std::string> given_options(const CLI::App& sub) {
  std::vector<std::string> given;
  for (const CLI::Option* opt : sub.get_options())
    if (opt->count() > 0) given.push_back(opt->get_positional() ? "CHASSIS" : opt->get_name());
  return given;
}

}  // namespace linkwise::cli
