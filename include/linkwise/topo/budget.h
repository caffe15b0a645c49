// The budgets a sealed box must fit: lanes, ports, power, heat, price and signal reach.
//
// check_budgets() measures one chassis (box 0; every box is a copy) against:
//   root-complex lanes   lanes of the links that share a host bridge (`root_complex`) vs the CPU's
//                        `root_complex_lanes`
//   bifurcation          the same links rounded up to the CPU's `bifurcation_min_width` (a x1 NIC
//   still
//                        takes a x4 piece of a x16 port on a CPU that splits no finer) vs the same
//                        lanes
//   socket lanes         a CPU's PCIe lanes vs `pcie_lanes` less `socket_link_pcie_lanes` per
//   socket link
//                        in use (AMD xGMI runs over PCIe-capable lanes; Intel UPI does not)
//   switch lanes         a PCIe switch's or retimer's links vs its lanes (build_chassis also
//   rejects these) NVLink ports         a GPU's or NVSwitch's NVLink links vs its ports (likewise)
//   power                every part's `power_w` (rated sustained: GPU/CPU TDP, switch typical,
//   drive
//                        maximum active) vs (supplies - redundant) x supply_w
//   heat                 the power of the parts in each cooling zone vs the zone's capacity
//   slots                nodes that name a `slot` (distinct; two cards in one slot is an error) vs
//                        `budgets.slots`
//   cost                 parts x `budgets.prices_usd` vs `max_cost_usd`
//   channel loss         per PCIe link with `trace_mm`, at the generation's Nyquist frequency f:
//                          loss = trace_mm x alpha_material(f) + 2 x package_db + connectors x
//                          connector_db
//                                 + vias x via_db
//                        vs loss_budget_db (catalog `pcie_channels`, `board_materials`); a retimer
//                        ends one channel and starts the next. Within budget but with less than 10%
//                        of it to spare is a warning (a margin for temperature and etch variation,
//                        Astera Labs' loss-budget note); without `material`, FR-4 is assumed with a
//                        warning.
//   retimer generation   a retimer slower than a link through it (a Gen4 retimer on a Gen5 link)
// Anything over its limit is an error naming the part or link; build_chassis() throws the first.
//
//   auto report =
//   linkwise::topo::check_budgets(linkwise::topo::load_chassis("training-appliance")); for (const
//   auto& l : report.lines) fmt::print("{} {} {}/{}\n", l.budget, l.subject, l.used, l.limit);
#pragma once

#include <string>
#include <vector>

#include "linkwise/hw/catalog.h"
#include "linkwise/util/error.h"

namespace linkwise::topo {

class Chassis;

enum class BudgetStatus { kOk, kWarning, kError };
const char* to_string(BudgetStatus s);

/// One budget on one subject: how much is used of how much there is.
struct BudgetLine {
  std::string
      budget;  ///< "root-complex-lanes", "bifurcation", "socket-lanes", "switch-lanes",
               ///< "nvlink-ports", "power", "heat", "cost", "channel-loss", "retimer-generation"
  std::string subject;  ///< "cpu0 root complex 1", "gpu0 - pxs0", "zone gpu-tray", "box"
  double used = 0;
  double limit = 0;  ///< 0: nothing to hold it against (reported only)
  std::string unit;  ///< "lanes", "ports", "W", "USD", "dB"
  BudgetStatus status = BudgetStatus::kOk;
  std::string message;  ///< why, for warnings and errors
  SourceLocation where;
  /// used / limit, or 0 without a limit.
  double use() const { return limit > 0 ? used / limit : 0; }
};

/// The channel of one PCIe link with a trace length.
struct ChannelLoss {
  int link = -1;
  std::string subject;  ///< "gpu0 - pxs0"
  std::string tech;     ///< "pcie5"
  double trace_mm = 0;
  std::string material;  ///< as used (fr4 when not given)
  double nyquist_GHz = 0;
  double trace_db = 0;  ///< trace_mm x loss per mm at the Nyquist frequency
  double fixed_db = 0;  ///< packages, connectors, vias
  double loss_db = 0;   ///< trace_db + fixed_db
  double budget_db = 0;
  int retimers_needed = 0;  ///< retimers that would bring every piece within budget (0: none
                            ///< needed; -1: the fixed losses alone exceed it)
};

struct BudgetReport {
  std::vector<BudgetLine> lines;
  std::vector<ChannelLoss> channels;
  double power_w = 0;      ///< box 0, every part at its rated sustained power
  double supply_w = 0;     ///< usable supply output; 0 = not given
  double cost_usd = 0;     ///< priced parts only
  int unpriced_parts = 0;  ///< parts with no price in budgets.prices_usd
  int retimers = 0;
  int errors() const;
  int warnings() const;
  bool ok() const { return errors() == 0; }
  const BudgetLine* first_error() const;
  /// What binds the design: the first error, else the box-wide budget (socket or switch lanes,
  /// power, heat, cost, channel loss) with the highest use; null when none has a limit.
  const BudgetLine* binding() const;
};

/// Measures box 0 of `chassis` against every budget above. Never throws for an exceeded budget.
BudgetReport check_budgets(const Chassis& chassis,
                           const hw::Catalog& catalog = hw::Catalog::builtin());

/// Throws InputError with the first error's message and location, if any.
void throw_first_error(const BudgetReport& report);

/// Loss per channel: the formula above for `trace_mm` of `material` on `tech`, with the retimers
/// the trace needs. Throws InputError for an unknown material or a technology without a channel
/// budget.
ChannelLoss channel_loss(const std::string& tech, double trace_mm, const std::string& material,
                         int connectors = 0, int vias = 0,
                         const hw::Catalog& catalog = hw::Catalog::builtin());

}  // namespace linkwise::topo
