// linkwise design: the best chassis designs of a design space for its workloads
// (docs/design-format.md).
#include "commands.h"
#include "linkwise/design/search.h"
#include "linkwise/report/design_report.h"

namespace linkwise::cli {

Handler setup_design(CLI::App& sub) {
  struct Opts {
    design::DesignRequest req;
    std::string output;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  add_options(sub, design::design_options(), o->req);
  add_json_output_flags(sub, o->json, o->output);
  return [o] {
    auto space = design::load_space(o->req.space);
    auto result = design::run_design(space, o->req.search);
    if (!result.root) return 0;  // another MPI rank: rank 0 prints
    if (!o->req.out.empty()) design::write_designs(result, o->req.out);
    emit(o->json ? report::design_json(result).dump(2) + "\n" : report::design_text(result),
         o->output);
    return 0;
  };
}

}  // namespace linkwise::cli
