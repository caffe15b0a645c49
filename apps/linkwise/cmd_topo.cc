// linkwise presets | catalog | topo
#include "commands.h"
#include "linkwise/comm/predict.h"
#include "linkwise/comm/transport.h"
#include "linkwise/hw/catalog.h"
#include "linkwise/report/catalog_report.h"
#include "linkwise/report/topo_report.h"
#include "linkwise/topo/analysis.h"

namespace linkwise::cli {

Handler setup_presets(CLI::App& sub) {
  auto json = std::make_shared<bool>(false);
  sub.add_flag("--json", *json, "Print as JSON");
  return [json] {
    emit(*json ? report::presets_json().dump(2) + "\n" : report::presets_text(), "");
    return 0;
  };
}

Handler setup_catalog(CLI::App& sub) {
  struct Opts {
    std::string id;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  sub.add_option("ID", o->id, "A part or link technology id: show its figures and sources");
  sub.add_flag("--json", o->json, "Print as JSON");
  return [o] {
    const auto& cat = hw::Catalog::builtin();
    if (o->id.empty()) {
      emit(o->json ? report::catalog_json(cat).dump(2) + "\n" : report::catalog_text(cat), "");
    } else {
      auto e = hw::describe(cat, o->id);
      emit(o->json ? report::entry_json(e).dump(2) + "\n" : report::entry_text(e), "");
    }
    return 0;
  };
}

namespace {
struct TopoFlags {
  std::string chassis, output;
  bool json = false, dot = false, as_designed = false;
  int nodes = 0;
};
}  // namespace

Handler setup_topo(CLI::App& sub) {
  using F = TopoFlags;
  auto o = std::make_shared<F>();
  add_option(sub, topo::chassis_option(at<&F::chassis>), *o)->required();
  add_json_output_flags(sub, o->json, o->output);
  sub.add_flag("--dot", o->dot, "Print the chassis as a Graphviz DOT graph")
      ->excludes(sub.get_option("--json"));
  add_option(sub, topo::nodes_option(at<&F::nodes>), *o);
  add_option(sub, topo::as_designed_option(at<&F::as_designed>), *o);
  return [o] {
    auto chassis = topo::load_chassis(o->chassis, o->nodes, topo::link_rates(o->as_designed));
    comm::nccl_options(chassis);  // the file's nccl: settings checked (exit 2 on a bad one)
    if (o->dot) {
      emit(report::topo_dot(chassis), o->output);
      return 0;
    }
    auto analysis = topo::analyse(chassis);
    emit(o->json ? report::topo_json(chassis, analysis).dump(2) + "\n"
                 : report::topo_text(chassis, analysis),
         o->output);
    return 0;
  };
}

}  // namespace linkwise::cli
