// linkwise design: the best chassis designs of a design space for its workloads (docs/design-format.md).
#include <fmt/format.h>

#include <filesystem>

#include "commands.h"
#include "linkwise/design/search.h"
#include "linkwise/report/design_report.h"
#include "linkwise/topo/spec.h"
#include "linkwise/util/error.h"
#include "linkwise/util/text.h"

namespace linkwise::cli {

Handler setup_design(CLI::App& sub) {
  struct Opts {
    std::string space, out, output;
    bool json = false;
    design::SearchOptions search;
  };
  auto o = std::make_shared<Opts>();
  sub.add_option("SPACE", o->space, "A design space YAML file (docs/design-format.md)")->required();
  sub.add_flag("--json", o->json, "Print the result as JSON");
  sub.add_option("--top", o->search.top, "Designs ranked and scored in full")->check(CLI::Range(1, 100));
  sub.add_option("--threads", o->search.threads, "Worker threads (0: every core)")->check(CLI::Range(0, 1024));
  sub.add_option("--out", o->out, "Write each ranked and front design as a chassis YAML into this folder");
  sub.add_option("-o,--output", o->output, "Write the report to this file (atomically) instead of standard output");
  return [o] {
    auto space = design::load_space(o->space);
    auto result = design::run_design(space, o->search);
    if (!o->out.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(o->out, ec);
      if (ec) throw RuntimeError(fmt::format("cannot create folder '{}': {}", o->out, ec.message()));
      for (const auto* list : {&result.ranked, &result.front})
        for (const auto& d : *list) write_file_atomic(o->out + "/" + d.spec.name + ".yaml", topo::chassis_spec_to_yaml(d.spec));
    }
    emit(o->json ? report::design_json(result).dump(2) + "\n" : report::design_text(result), o->output);
    return 0;
  };
}

}  // namespace linkwise::cli
