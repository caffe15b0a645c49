#include "linkwise/report/budget_report.h"

#include <fmt/format.h>

#include "linkwise/report/table.h"

namespace linkwise::report {

namespace {

std::string num(double v, const std::string& unit) {
  if (unit == "dB") return fmt::format("{:.1f}", v);
  return fmt::format("{:.0f}", v);
}

}  // namespace

std::string budget_text(const topo::BudgetReport& r) {
  std::string out = "\nBudgets (box 0; power at each part's rated sustained draw)\n";
  Table t;
  t.header({"budget", "subject", "used", "limit", "unit", "use", "status"});
  // Consecutive lines of one budget with the same use collapse into one row ("gpu0 .. gpu7 (8)").
  for (size_t i = 0; i < r.lines.size();) {
    const auto& l = r.lines[i];
    size_t j = i + 1;
    while (j < r.lines.size() && r.lines[j].budget == l.budget && r.lines[j].used == l.used &&
           r.lines[j].limit == l.limit && r.lines[j].status == l.status)
      ++j;
    std::string subject =
        j - i > 1 ? fmt::format("{} .. {} ({})", l.subject, r.lines[j - 1].subject, j - i)
                  : l.subject;
    if (l.budget != "channel-loss")  // in its own table below
      t.row({l.budget, subject, num(l.used, l.unit), l.limit > 0 ? num(l.limit, l.unit) : "-",
             l.unit, l.limit > 0 ? fmt::format("{:.0f}%", 100 * l.use()) : "-",
             topo::to_string(l.status)});
    i = j;
  }
  out += t.render();
  out += fmt::format("power {:.0f} W{}, retimers {}", r.power_w,
                     r.supply_w > 0 ? fmt::format(" of {:.0f} W usable supply", r.supply_w) : "",
                     r.retimers);
  if (r.cost_usd > 0 || r.unpriced_parts == 0)
    out +=
        fmt::format(", cost {:.0f} USD{}", r.cost_usd,
                    r.unpriced_parts ? fmt::format(" ({} parts unpriced)", r.unpriced_parts) : "");
  out += "\n";
  if (!r.channels.empty()) {
    out += "\nPCIe channel loss at the Nyquist frequency (trace + packages, connectors, vias)\n";
    Table c;
    c.header({"link", "tech", "trace mm", "material", "GHz", "trace dB", "fixed dB", "loss dB",
              "budget dB", "retimers needed"});
    for (const auto& ch : r.channels)
      c.row({ch.subject, ch.tech, fmt::format("{:.0f}", ch.trace_mm), ch.material,
             fmt::format("{:.0f}", ch.nyquist_GHz), fmt::format("{:.1f}", ch.trace_db),
             fmt::format("{:.1f}", ch.fixed_db), fmt::format("{:.1f}", ch.loss_db),
             fmt::format("{:.0f}", ch.budget_db),
             ch.retimers_needed < 0 ? "cannot" : std::to_string(ch.retimers_needed)});
    out += c.render();
  }
  if (const auto* b = r.binding())
    out += fmt::format("binding budget: {} on {} ({:.0f}% used)\n", b->budget, b->subject,
                       100 * b->use());
  for (const auto& l : r.lines)
    if (l.status != topo::BudgetStatus::kOk)
      out += fmt::format("  [{}] {}\n", topo::to_string(l.status), l.message);
  return out;
}

nlohmann::json budget_json(const topo::BudgetReport& r) {
  nlohmann::json j;
  j["power_w"] = r.power_w;
  j["supply_w"] = r.supply_w;
  j["cost_usd"] = r.cost_usd;
  j["unpriced_parts"] = r.unpriced_parts;
  j["retimers"] = r.retimers;
  j["errors"] = r.errors();
  j["warnings"] = r.warnings();
  j["lines"] = nlohmann::json::array();
  for (const auto& l : r.lines)
    j["lines"].push_back({{"budget", l.budget},
                          {"subject", l.subject},
                          {"used", l.used},
                          {"limit", l.limit},
                          {"unit", l.unit},
                          {"status", topo::to_string(l.status)},
                          {"message", l.message}});
  j["channels"] = nlohmann::json::array();
  for (const auto& c : r.channels)
    j["channels"].push_back({{"link", c.subject},
                             {"tech", c.tech},
                             {"trace_mm", c.trace_mm},
                             {"material", c.material},
                             {"nyquist_GHz", c.nyquist_GHz},
                             {"trace_db", c.trace_db},
                             {"fixed_db", c.fixed_db},
                             {"loss_db", c.loss_db},
                             {"budget_db", c.budget_db},
                             {"retimers_needed", c.retimers_needed}});
  if (const auto* b = r.binding())
    j["binding"] = {{"budget", b->budget}, {"subject", b->subject}, {"use", b->use()}};
  else
    j["binding"] = nullptr;
  return j;
}

}  // namespace linkwise::report
