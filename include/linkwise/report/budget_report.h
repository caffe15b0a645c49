// Renders a chassis's budget report (topo/budget.h): each budget's use, channel losses, errors and
// warnings. Rendering only: every number comes from topo::check_budgets().
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "linkwise/topo/budget.h"

namespace linkwise::report {

/// The "Budgets" section `linkwise topo` prints.
std::string budget_text(const topo::BudgetReport& r);
/// The same as JSON: power_w, supply_w, cost_usd, retimers, lines[], channels[], binding.
nlohmann::json budget_json(const topo::BudgetReport& r);

}  // namespace linkwise::report
