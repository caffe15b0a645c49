#include "linkwise/topo/budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/text.h"

namespace linkwise::topo {

const char* to_string(BudgetStatus s) {
  switch (s) {
    case BudgetStatus::kOk:
      return "ok";
    case BudgetStatus::kWarning:
      return "warning";
    case BudgetStatus::kError:
      return "error";
  }
  return "?";
}

int BudgetReport::errors() const {
  return static_cast<int>(std::count_if(
      lines.begin(), lines.end(), [](const auto& l) { return l.status == BudgetStatus::kError; }));
}

int BudgetReport::warnings() const {
  return static_cast<int>(std::count_if(lines.begin(), lines.end(), [](const auto& l) {
    return l.status == BudgetStatus::kWarning;
  }));
}

const BudgetLine* BudgetReport::first_error() const {
  for (const auto& l : lines)
    if (l.status == BudgetStatus::kError) return &l;
  return nullptr;
}

const BudgetLine* BudgetReport::binding() const {
  if (const auto* e = first_error()) return e;
  // A x16 device on a x16 root port or a GPU with every NVLink port wired is the design, not a
  // limit to relax: the binding budget is among the box-wide ones.
  const BudgetLine* best = nullptr;
  for (const auto& l : lines)
    if (l.limit > 0 && l.budget != "root-complex-lanes" && l.budget != "nvlink-ports" &&
        l.budget != "bifurcation" && (!best || l.use() > best->use()))
      best = &l;
  return best;
}

void throw_first_error(const BudgetReport& report) {
  if (const auto* e = report.first_error()) throw InputError(e->message, e->where);
}

namespace {

// Share of the loss budget kept in reserve below which a channel within budget is a warning (Astera
// Labs' loss-budget note: designers keep 10-20% of the budget as margin).
constexpr double kLossMargin = 0.10;

// Loss at the Nyquist frequency, the retimers that would bring every piece within budget.
ChannelLoss compute_channel(const hw::ChannelBudget& cb, const hw::BoardMaterial& m,
                            double trace_mm, int connectors, int vias) {
  ChannelLoss c;
  c.tech = cb.tech;
  c.trace_mm = trace_mm;
  c.material = m.id;
  c.nyquist_GHz = cb.nyquist_GHz.value;
  c.trace_db = trace_mm * m.loss_db_per_mm_at(c.nyquist_GHz);
  c.fixed_db =
      2 * cb.package_db.value + connectors * cb.connector_db.value + vias * cb.via_db.value;
  c.loss_db = c.trace_db + c.fixed_db;
  c.budget_db = cb.loss_budget_db.value;
  if (c.loss_db > c.budget_db) {
    // k retimers cut the trace into k+1 pieces, each with two packages; the connectors and vias are
    // charged to one piece (the worst case): trace_db / (k+1) <= budget - fixed.
    double room = c.budget_db - c.fixed_db;
    c.retimers_needed = room <= 0 ? -1 : static_cast<int>(std::ceil(c.trace_db / room)) - 1;
  }
  return c;
}

struct Checker {
  const Chassis& c;
  const hw::Catalog& cat;
  BudgetReport r;

  std::string link_name(const Link& l) const { return c.node(l.a).name + " - " + c.node(l.b).name; }

  void add(BudgetLine line) { r.lines.push_back(std::move(line)); }

  void limit_line(const std::string& budget, const std::string& subject, double used, double limit,
                  const std::string& unit, const std::string& over, const SourceLocation& where) {
    BudgetLine l{budget, subject, used, limit, unit, BudgetStatus::kOk, "", where};
    if (limit > 0 && used > limit + 1e-9) {
      l.status = BudgetStatus::kError;
      l.message = over;
    }
    add(std::move(l));
  }

  void lanes() {
    for (const auto& n : c.nodes()) {
      if (n.box > 0) break;
      if (n.kind != NodeKind::kCpu) continue;
      std::map<int, std::pair<int, int>>
          rc;  // root complex -> (lanes, lanes rounded to bifurcation pieces)
      std::map<int, SourceLocation> rc_where;
      int own = -1000, lanes = 0, sock = 0;
      int min_w = static_cast<int>(n.fig("bifurcation_min_width", 1));
      for (int li : c.incident(n.index)) {
        const auto& l = c.link(li);
        if (l.family() == hw::LinkFamily::kSocket) sock += l.width;
        if (l.family() != hw::LinkFamily::kPcie) continue;
        lanes += l.width;
        int key = l.root_complex >= 0 ? l.root_complex : own--;
        rc[key].first += l.width;
        rc[key].second += std::max(l.width, min_w);
        rc_where[key] = l.where;
      }
      double rc_lanes = n.fig("root_complex_lanes");
      for (const auto& [key, use] : rc) {
        std::string subject = key >= 0 ? fmt::format("{} root complex {}", n.name, key)
                                       : fmt::format("{} own root port", n.name);
        limit_line(
            "root-complex-lanes", subject, use.first, rc_lanes, "lanes",
            fmt::format(
                "'{}' ({}): the links on root complex {} use {} lanes, but one root complex has {}",
                n.name, n.part->id, key, use.first, rc_lanes),
            rc_where[key]);
        if (min_w > 1 && use.second != use.first)
          limit_line("bifurcation", subject, use.second, rc_lanes, "lanes",
                     fmt::format("'{}' ({}): root complex {} splits into pieces of at least x{}, "
                                 "so its links take {} "
                                 "lanes of {}",
                                 n.name, n.part->id, key, min_w, use.second, rc_lanes),
                     rc_where[key]);
      }
      double total = n.fig("pcie_lanes") - sock * n.fig("socket_link_pcie_lanes");
      limit_line("socket-lanes", n.name, lanes, total, "lanes",
                 fmt::format("'{}' ({}): its PCIe links use {} lanes, but it has {} once its {} "
                             "socket links take theirs",
                             n.name, n.part->id, lanes, total, sock),
                 n.where);
    }
  }

  void ports() {
    for (const auto& n : c.nodes()) {
      if (n.box > 0) break;
      int pcie = 0, nvl = 0;
      for (int li : c.incident(n.index)) {
        const auto& l = c.link(li);
        if (l.family() == hw::LinkFamily::kPcie) pcie += l.width;
        if (l.family() == hw::LinkFamily::kNvlink) nvl += l.width;
      }
      if (n.kind == NodeKind::kPcieSwitch)
        limit_line("switch-lanes", n.name, pcie, n.fig("lanes"), "lanes",
                   fmt::format("'{}' is over its lanes", n.name), n.where);
      if (n.kind == NodeKind::kNvSwitch ||
          (n.kind == NodeKind::kGpu && n.fig("nvlink_links") > 0 && nvl > 0)) {
        double ports = n.kind == NodeKind::kGpu ? n.fig("nvlink_links") : n.fig("ports");
        limit_line("nvlink-ports", n.name, nvl, ports, "ports",
                   fmt::format("'{}' is over its NVLink ports", n.name), n.where);
      }
    }
  }

  void power_heat_cost() {
    const auto& b = c.spec().budgets;
    std::map<std::string, double> zone_w;
    std::map<std::string, std::string> slot_holder;  // slot -> node
    int cards = 0;
    std::set<std::string> zones;
    for (const auto& z : b.cooling_zones) zones.insert(z.id);
    for (const auto& n : c.nodes()) {
      if (n.box > 0) break;
      if (n.kind == NodeKind::kNetSwitch) continue;  // outside the box
      double w = n.fig("power_w");
      r.power_w += w;
      if (n.kind == NodeKind::kRetimer) ++r.retimers;
      if (!n.zone.empty()) {
        if (!zones.count(n.zone)) {
          std::vector<std::string> ids(zones.begin(), zones.end());
          std::string hint = did_you_mean(n.zone, ids);
          add({"heat", n.name, 0, 0, "W", BudgetStatus::kError,
               fmt::format(
                   "node '{}' is in cooling zone '{}', which budgets.cooling_zones does not list{}",
                   n.name, n.zone, hint.empty() ? "" : "; " + hint),
               n.where});
        }
        zone_w[n.zone] += w;
      }
      if (!n.slot.empty()) {
        auto [it, fresh] = slot_holder.emplace(n.slot, n.name);
        if (fresh)
          ++cards;
        else
          add({"slots", n.slot, 2, 1, "cards", BudgetStatus::kError,
               fmt::format("slot '{}' holds both '{}' and '{}'", n.slot, it->second, n.name),
               n.where});
      }
      auto price = b.prices_usd.find(n.part->id);
      if (price != b.prices_usd.end())
        r.cost_usd += price->second;
      else
        ++r.unpriced_parts;
    }
    if (b.supplies > 0) {
      r.supply_w = (b.supplies - b.redundant) * b.supply_w;
      limit_line(
          "power", "box", r.power_w, r.supply_w, "W",
          fmt::format("the parts draw {:.0f} W at sustained load, but {} of {} supplies of {:.0f} "
                      "W give {:.0f} W",
                      r.power_w, b.supplies - b.redundant, b.supplies, b.supply_w, r.supply_w),
          b.where);
    } else {
      add({"power", "box", r.power_w, 0, "W", BudgetStatus::kOk, "", {}});
    }
    if (b.slots > 0 || cards > 0)
      limit_line("slots", "box", cards, b.slots, "cards",
                 fmt::format("{} cards name a slot, but the box has {}", cards, b.slots), b.where);
    for (const auto& z : b.cooling_zones)
      limit_line("heat", "zone " + z.id, zone_w[z.id], z.capacity_w, "W",
                 fmt::format("cooling zone '{}' must remove {:.0f} W but holds {:.0f} W", z.id,
                             zone_w[z.id], z.capacity_w),
                 z.where);
    if (b.max_cost_usd || !b.prices_usd.empty())
      limit_line("cost", "box", r.cost_usd, b.max_cost_usd.value_or(0), "USD",
                 fmt::format("the parts cost {:.0f} USD, over the {:.0f} USD ceiling", r.cost_usd,
                             b.max_cost_usd.value_or(0)),
                 b.where);
  }

  void signal() {
    for (const auto& l : c.links()) {
      if (c.node(l.a).box > 0) break;
      if (l.family() != hw::LinkFamily::kPcie) continue;
      // A retimer must run at least as fast as every link through it.
      for (int end : {l.a, l.b}) {
        const auto& n = c.node(end);
        if (n.kind != NodeKind::kRetimer) continue;
        const auto* rt = cat.find_link_tech(n.part->attr("pcie"));
        int gen = rt ? rt->generation : 0;
        if (gen > 0 && gen < l.tech->generation)
          add({"retimer-generation", link_name(l), static_cast<double>(l.tech->generation),
               static_cast<double>(gen), "gen", BudgetStatus::kError,
               fmt::format("retimer '{}' ({}) is a PCIe Gen{} part on the Gen{} link {}: it cannot "
                           "retime it",
                           n.name, n.part->id, gen, l.tech->generation, link_name(l)),
               l.where});
      }
      if (!l.trace_mm) continue;
      const auto* cb = cat.channel_budget(l.tech->id);
      if (!cb) continue;
      std::string mat = l.material.empty() ? "fr4" : l.material;
      const auto* m = cat.find_material(mat);
      if (!m) {
        std::vector<std::string> ids;
        for (const auto& x : cat.materials()) ids.push_back(x.id);
        std::string hint = did_you_mean(mat, ids);
        add({"channel-loss", link_name(l), 0, 0, "dB", BudgetStatus::kError,
             fmt::format("unknown board material '{}' on link {}{}", mat, link_name(l),
                         hint.empty() ? "" : "; " + hint),
             l.where});
        continue;
      }
      ChannelLoss ch = compute_channel(*cb, *m, *l.trace_mm, l.connectors, l.vias);
      ch.link = l.index;
      ch.subject = link_name(l);
      BudgetLine line{"channel-loss", ch.subject,        ch.loss_db, ch.budget_db,
                      "dB",           BudgetStatus::kOk, "",         l.where};
      std::string what =
          fmt::format("{} ({} mm of {} at {}): channel loss {:.1f} dB at {:.0f} GHz", ch.subject,
                      ch.trace_mm, ch.material, l.tech->id, ch.loss_db, ch.nyquist_GHz);
      if (ch.loss_db > ch.budget_db) {
        line.status = BudgetStatus::kError;
        line.message =
            ch.retimers_needed < 0
                ? fmt::format("{} exceeds the {:.0f} dB budget even without trace", what,
                              ch.budget_db)
                : fmt::format(
                      "{} exceeds the {:.0f} dB budget; it needs {} retimer{} (or a lower-loss "
                      "material)",
                      what, ch.budget_db, ch.retimers_needed, ch.retimers_needed == 1 ? "" : "s");
      } else if (ch.loss_db > (1 - kLossMargin) * ch.budget_db) {
        line.status = BudgetStatus::kWarning;
        line.message = fmt::format("{} leaves less than {:.0f}% of the {:.0f} dB budget as margin",
                                   what, 100 * kLossMargin, ch.budget_db);
      } else if (l.material.empty()) {
        line.status = BudgetStatus::kWarning;
        line.message = fmt::format("{}: no material given, FR-4 assumed", what);
      }
      add(std::move(line));
      r.channels.push_back(ch);
    }
  }
};

}  // namespace

ChannelLoss channel_loss(const std::string& tech, double trace_mm, const std::string& material,
                         int connectors, int vias, const hw::Catalog& catalog) {
  const auto* cb = catalog.channel_budget(tech);
  if (!cb) throw InputError(fmt::format("no PCIe channel budget for '{}' in the catalog", tech));
  const auto* m = catalog.find_material(material);
  if (!m) throw InputError(fmt::format("unknown board material '{}'", material));
  return compute_channel(*cb, *m, trace_mm, connectors, vias);
}

BudgetReport check_budgets(const Chassis& chassis, const hw::Catalog& catalog) {
  Checker ch{chassis, catalog, {}};
  ch.lanes();
  ch.ports();
  ch.power_heat_cost();
  ch.signal();
  return std::move(ch.r);
}

}  // namespace linkwise::topo
