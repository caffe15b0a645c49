#include "linkwise/report/design_report.h"

#include <fmt/format.h>

#include <map>

#include "linkwise/report/budget_report.h"
#include "linkwise/report/json.h"
#include "linkwise/report/table.h"

namespace linkwise::report {

namespace {

// "8x h200-sxm, 2x xeon-6960p, 4x nvswitch-gen3, ..." in the order the parts first appear.
std::string parts_line(const topo::ChassisSpec& spec) {
  std::vector<std::string> order;
  std::map<std::string, int> count;
  for (const auto& n : spec.nodes) {
    if (!count.count(n.part)) order.push_back(n.part);
    count[n.part]++;
  }
  std::string out;
  for (const auto& p : order) out += fmt::format("{}{}x {}", out.empty() ? "" : ", ", count[p], p);
  return out;
}

// The highest use of each budget kind that has a limit: "power 86%, heat 87%, ...".
std::vector<std::pair<std::string, const topo::BudgetLine*>> budget_peaks(
    const topo::BudgetReport& b) {
  std::vector<std::pair<std::string, const topo::BudgetLine*>> out;
  for (const auto& l : b.lines) {
    if (l.limit <= 0) continue;
    auto it =
        std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == l.budget; });
    if (it == out.end())
      out.push_back({l.budget, &l});
    else if (l.use() > it->second->use())
      it->second = &l;
  }
  return out;
}

std::string short_budget_peaks(const topo::BudgetReport& b) {
  std::string out;
  for (const auto& [k, l] : budget_peaks(b))
    out += fmt::format("{}{} {:.0f}% ({})", out.empty() ? "" : ", ", k, 100 * l->use(), l->subject);
  return out;
}

std::string money(double usd) { return usd > 0 ? fmt::format("{:.0f}", usd) : "-"; }

std::string design_block(const design::Design& d) {
  std::string o = fmt::format("\nDesign #{} ({}{}): {}\n", d.rank, d.spec.name,
                              d.on_front ? ", on the front" : "", d.candidate.name);
  o += fmt::format("  parts: {}\n", parts_line(d.spec));
  for (const auto& s : d.scores) {
    if (!s.fits) {
      o += fmt::format("  {}: does not run: {}\n", s.workload, s.bottleneck);
      continue;
    }
    o += fmt::format("  {}: {:.0f} tokens/s ({}), plan {}\n", s.workload, s.tokens_per_s,
                     s.simulated ? "simulated" : "estimated", s.plan);
    o += fmt::format("    limited by: {}\n", s.bottleneck);
    if (!s.limiting_link.empty()) o += fmt::format("    fullest link: {}\n", s.limiting_link);
  }
  const auto& b = d.budgets;
  o += fmt::format("  power {:.0f} W{}; cost {} USD{}; retimers {}\n", b.power_w,
                   b.supply_w > 0 ? fmt::format(" of {:.0f} W", b.supply_w) : "", money(b.cost_usd),
                   b.unpriced_parts ? fmt::format(" ({} parts unpriced)", b.unpriced_parts) : "",
                   b.retimers);
  std::string heat;
  for (const auto& l : b.lines)
    if (l.budget == "heat")
      heat += fmt::format("{}{} {:.0f} of {:.0f} W", heat.empty() ? "" : ", ", l.subject, l.used,
                          l.limit);
  if (!heat.empty()) o += "  heat: " + heat + "\n";
  o += "  budget use: " + short_budget_peaks(b) + "\n";
  if (const auto* bind = b.binding())
    o += fmt::format("  binding budget: {} on {} ({:.0f}% used)\n", bind->budget, bind->subject,
                     100 * bind->use());
  return o;
}

nlohmann::json design_to_json(const design::Design& d) {
  nlohmann::json j;
  j["rank"] = d.rank;
  j["id"] = d.spec.name;
  j["candidate"] = d.candidate.index;
  j["name"] = d.candidate.name;
  j["on_front"] = d.on_front;
  j["objective"] = d.objective;
  j["parts"] = parts_line(d.spec);
  j["power_w"] = d.budgets.power_w;
  j["cost_usd"] = d.budgets.cost_usd;
  j["retimers"] = d.budgets.retimers;
  j["workloads"] = nlohmann::json::array();
  for (const auto& s : d.scores)
    j["workloads"].push_back({{"workload", s.workload},
                              {"fits", s.fits},
                              {"tokens_per_s", s.tokens_per_s},
                              {"simulated", s.simulated},
                              {"plan", s.plan},
                              {"bottleneck", s.bottleneck},
                              {"busiest_link", s.limiting_link}});
  j["budgets"] = budget_json(d.budgets);
  return j;
}

}  // namespace

std::string design_text(const design::DesignResult& r) {
  std::string o = fmt::format(
      "design space {}: {} candidates, {} built, {} fit every budget and target; {} distinct "
      "chassis scored in "
      "closed form; {} thread{}{}, {:.2f} s\n",
      r.space, r.candidates, r.generated, r.feasible, r.distinct_models, r.threads,
      r.threads == 1 ? "" : "s", r.processes > 1 ? fmt::format(" x {} processes", r.processes) : "",
      r.seconds);
  if (!r.excluded.empty()) {
    o += "excluded by:";
    for (const auto& [k, v] : r.excluded) o += fmt::format(" {} {},", k, v);
    o.back() = '\n';
  }
  if (!r.not_generated.empty()) {
    o += "not built:";
    for (const auto& [k, v] : r.not_generated) o += fmt::format(" {} ({}),", v, k);
    o.back() = '\n';
  }
  o += "\nRanked designs (objective: sum of weight x tokens/s / best tokens/s per workload; closed "
       "form)\n";
  Table t;
  std::vector<std::string> head = {"rank", "id", "objective"};
  for (const auto& s : r.ranked.front().scores) head.push_back(s.workload + " tok/s");
  for (const char* h : {"power W", "cost USD", "retimers", "binding", "front"}) head.push_back(h);
  t.header(head);
  for (const auto& d : r.ranked) {
    std::vector<std::string> row = {std::to_string(d.rank), d.spec.name,
                                    fmt::format("{:.3f}", d.objective)};
    for (const auto& s : d.scores)
      row.push_back(s.fits ? fmt::format("{:.0f}", s.tokens_per_s) : "no fit");
    const auto* bind = d.budgets.binding();
    row.push_back(fmt::format("{:.0f}", d.power_w));
    row.push_back(money(d.cost_usd));
    row.push_back(std::to_string(d.retimers));
    row.push_back(bind ? fmt::format("{} {:.0f}%", bind->budget, 100 * bind->use()) : "-");
    row.push_back(d.on_front ? "yes" : "");
    t.row(row);
  }
  o += t.render();
  for (const auto& d : r.ranked) o += design_block(d);
  o += "\nPareto front (objective up, power down, cost down)\n";
  Table f;
  f.header({"rank", "id", "objective", "power W", "cost USD", "design"});
  for (const auto& d : r.front)
    f.row({std::to_string(d.rank), d.spec.name, fmt::format("{:.3f}", d.objective),
           fmt::format("{:.0f}", d.power_w), money(d.cost_usd), d.candidate.name});
  o += f.render();
  if (!r.relaxations.empty()) {
    o += "\nWhat relaxing a budget would buy (the best candidate that budget alone excluded)\n";
    for (const auto& x : r.relaxations)
      o += fmt::format(
          "  {}: {} candidates excluded; the best, {}, reaches objective {:.3f} and needs {:.1f} "
          "{} of {:.1f}\n",
          x.budget, x.excluded, x.best_candidate, x.objective, x.needed, x.unit, x.limit);
  } else {
    o += "\nNo budget alone keeps out a better candidate.\n";
  }
  return fit_width(o);
}

nlohmann::json design_json(const design::DesignResult& r) {
  nlohmann::json j;
  j["space"] = r.space;
  j["candidates"] = r.candidates;
  j["generated"] = r.generated;
  j["feasible"] = r.feasible;
  j["distinct_models"] = r.distinct_models;
  j["excluded"] = r.excluded;
  j["not_generated"] = r.not_generated;
  j["seconds"] = r.seconds;
  j["threads"] = r.threads;
  j["processes"] = r.processes;
  j["ranked"] = nlohmann::json::array();
  for (const auto& d : r.ranked) j["ranked"].push_back(design_to_json(d));
  j["front"] = nlohmann::json::array();
  for (const auto& d : r.front) j["front"].push_back(design_to_json(d));
  j["relaxations"] = nlohmann::json::array();
  for (const auto& x : r.relaxations)
    j["relaxations"].push_back({{"budget", x.budget},
                                {"excluded", x.excluded},
                                {"best_candidate", x.best_candidate},
                                {"objective", x.objective},
                                {"needed", x.needed},
                                {"limit", x.limit},
                                {"unit", x.unit}});
  return with_schema(std::move(j));
}

}  // namespace linkwise::report
