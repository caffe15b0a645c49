// linkwise design: the best chassis designs of a design space for its workloads
// (docs/design-format.md).
#include "commands.h"
#include "linkwise/design/search.h"
#include "linkwise/report/design_report.h"

namespace linkwise::cli {

Handler setup_design(CLI::App& sub) {
  struct Opts {
    std::string space, out, output;
    bool json = false;
    design::SearchOptions search;
  };
  auto o = std::make_shared<Opts>();
  sub.add_option("SPACE", o->space, "A design space YAML file (docs/design-format.md)")->required();
  sub.add_option("--top", o->search.top, "Designs ranked and scored in full")
      ->check(CLI::Range(1, 100));
  sub.add_option("--threads", o->search.threads, "Worker threads (0: every core)")
      ->check(CLI::Range(0, 1024));
  sub.add_option("--out", o->out,
                 "Write each ranked and front design as a chassis YAML into this folder");
  add_json_output_flags(sub, o->json, o->output);
  return [o] {
    auto space = design::load_space(o->space);
    auto result = design::run_design(space, o->search);
    if (!result.root) return 0;  // another MPI rank: rank 0 prints
    if (!o->out.empty()) design::write_designs(result, o->out);
    emit(o->json ? report::design_json(result).dump(2) + "\n" : report::design_text(result),
         o->output);
    return 0;
  };
}

}  // namespace linkwise::cli
