// linkwise presets | catalog | topo
#include <fmt/format.h>

#include "commands.h"
#include "linkwise/hw/catalog.h"
#include "linkwise/report/table.h"
#include "linkwise/report/topo_report.h"
#include "linkwise/topo/analysis.h"
#include "linkwise/util/error.h"
#include "linkwise/util/text.h"

namespace linkwise::cli {

Handler setup_presets(CLI::App& sub) {
  auto json = std::make_shared<bool>(false);
  sub.add_flag("--json", *json, "Print as JSON");
  return [json] {
    if (*json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& p : topo::presets()) j.push_back({{"id", p.id}, {"description", p.description}});
      emit(j.dump(2) + "\n", "");
    } else {
      emit(report::presets_text(), "");
    }
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
    nlohmann::json j;
    report::Table t;
    if (o->id.empty()) {
      t.header({"id", "kind", "name"});
      for (const auto& x : cat.link_techs()) {
        t.row({x.id, std::string("link/") + hw::to_string(x.family), x.name});
        j.push_back({{"id", x.id}, {"kind", "link"}, {"name", x.name}});
      }
      for (const auto& p : cat.parts()) {
        t.row({p.id, hw::to_string(p.kind), p.name});
        j.push_back({{"id", p.id}, {"kind", hw::to_string(p.kind)}, {"name", p.name}});
      }
    } else {
      t.header({"field", "value", "source"});
      auto add = [&](const std::string& field, const hw::Figure& f) {
        if (f.source.empty()) return;  // a figure this entry does not carry
        t.row({field, fmt::format("{:g}", f.value), f.source});
        j[field] = {{"value", f.value}, {"source", f.source}};
      };
      if (const auto* x = cat.find_link_tech(o->id)) {
        add("transfer_rate_GTps", x->transfer_rate_GTps);
        add("encoding", x->encoding);
        add("unit_bytes_per_s", x->unit_bytes_per_s);
        add("efficiency", x->efficiency);
        add("latency_s", x->latency_s);
        add("duplex_efficiency", x->duplex_efficiency);
      } else {
        if (!cat.find_part(o->id)) {
          std::vector<std::string> ids = cat.part_ids();
          for (const auto& id : cat.link_tech_ids()) ids.push_back(id);
          std::string hint = did_you_mean(o->id, ids);
          throw InputError(fmt::format("'{}' is neither a catalog part nor a link technology{}", o->id,
                                       hint.empty() ? " (linkwise catalog lists them)" : "; " + hint));
        }
        const auto& p = cat.part(o->id);
        for (const auto& [field, f] : p.figures) add(field, f);
        for (const auto& [k, v] : p.attributes) {
          t.row({k, v, ""});
          j[k] = v;
        }
      }
    }
    emit(o->json ? j.dump(2) + "\n" : t.render(), "");
    return 0;
  };
}

Handler setup_topo(CLI::App& sub) {
  struct Opts {
    std::string chassis;
    bool json = false, dot = false;
    int nodes = 0;
    bool as_designed = false;
    std::string output;
  };
  auto o = std::make_shared<Opts>();
  sub.add_option("CHASSIS", o->chassis, "A preset name (linkwise presets) or a chassis YAML file")->required();
  auto* json = sub.add_flag("--json", o->json, "Print the analysis as JSON");
  sub.add_flag("--dot", o->dot, "Print the chassis as a Graphviz DOT graph")->excludes(json);
  add_nodes_flag(sub, o->nodes);
  add_as_designed_flag(sub, o->as_designed);
  sub.add_option("-o,--output", o->output, "Write to this file (atomically) instead of standard output");
  return [o] {
    auto chassis = topo::load_chassis(o->chassis, o->nodes,
                                      o->as_designed ? topo::LinkRates::kAsDesigned : topo::LinkRates::kAsBuilt);
    if (o->dot) {
      emit(report::topo_dot(chassis), o->output);
      return 0;
    }
    auto analysis = topo::analyse(chassis);
    emit(o->json ? report::topo_json(chassis, analysis).dump(2) + "\n" : report::topo_text(chassis, analysis),
         o->output);
    return 0;
  };
}

}  // namespace linkwise::cli
