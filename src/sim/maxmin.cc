// Progressive filling; the model and its equations are in include/linkwise/sim/maxmin.h.
#include "linkwise/sim/maxmin.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "linkwise/util/error.h"

namespace linkwise::sim {

namespace {
// A resource counts as full when what is left is below this fraction of its capacity.
constexpr double kFullFraction = 1e-9;
}  // namespace

MaxMinSolver::MaxMinSolver(std::vector<double> capacity) { set_capacity(std::move(capacity)); }

void MaxMinSolver::set_capacity(std::vector<double> capacity) {
  own_ = std::move(capacity);
  view_capacity(own_);
}

void MaxMinSolver::view_capacity(std::span<const double> capacity) {
  // Between solves load_ is 0 except at used_, and slot_ is -1 everywhere: clear only what the
  // last solve wrote, and size the arrays anew only when the number of resources changes (a large
  // machine has far more resources than one solve's flows touch).
  for (int r : used_) load_[r] = 0.0;
  used_.clear();
  capacity_ = capacity;
  if (load_.size() != capacity_.size()) load_.assign(capacity_.size(), 0.0);
  if (slot_.size() != capacity_.size()) slot_.clear();  // sized on the first solve
}

void MaxMinSolver::clear() {
  start_.assign(1, 0);
  route_.clear();
  coeff_.clear();
  cap_.clear();
  rate_.clear();
}

void MaxMinSolver::reserve(std::size_t flows, std::size_t entries) {
  start_.reserve(flows + 1);
  cap_.reserve(flows);
  route_.reserve(entries);
  coeff_.reserve(entries);
}

int MaxMinSolver::add_flow(std::span<const int> route, double cap) {
  for (int r : route)
    if (r < 0 || r >= static_cast<int>(capacity_.size()))
      throw InputError("flow route names resource " + std::to_string(r) + ", which does not exist");
  route_.insert(route_.end(), route.begin(), route.end());
  coeff_.resize(route_.size(), 1.0);
  start_.push_back(static_cast<int>(route_.size()));
  cap_.push_back(cap);
  return static_cast<int>(cap_.size()) - 1;
}

int MaxMinSolver::add_flow(std::span<const int> route, std::span<const double> coeff, double cap) {
  if (coeff.size() != route.size())
    throw InputError("flow route and coefficients differ in length");
  int id = add_flow(route, cap);
  std::copy(coeff.begin(), coeff.end(), coeff_.end() - static_cast<long>(coeff.size()));
  return id;
}

bool MaxMinSolver::saturated(int r) const {
  return load_.at(r) >= capacity_[static_cast<std::size_t>(r)] * (1 - 1e-9);
}

void MaxMinSolver::build_index() {
  const int F = flows();
  // The resources the routes name, ascending, and resource -> flows (CSR) over them alone: a solve
  // costs what its flows touch, not the size of the chassis.
  for (int r : used_) load_[r] = 0.0;  // the previous solve's loads
  used_.clear();
  if (slot_.size() != capacity_.size()) slot_.assign(capacity_.size(), -1);
  for (int r : route_)
    if (slot_[r] < 0) slot_[r] = 0, used_.push_back(r);
  // Ascending: sorted when few resources are used, else read off the marks in one pass over them
  // all (a schedule on a large machine names tens of thousands, where sorting cost more).
  const std::size_t R = slot_.size();
  if (used_.size() * 16 < R) {
    std::sort(used_.begin(), used_.end());
  } else {
    used_.clear();
    for (std::size_t r = 0; r < R; ++r)
      if (slot_[r] == 0) used_.push_back(static_cast<int>(r));
  }
  const int U = static_cast<int>(used_.size());
  for (int u = 0; u < U; ++u) slot_[used_[u]] = u;
  res_start_.assign(U + 1, 0);
  for (int r : route_) ++res_start_[slot_[r] + 1];
  for (int u = 0; u < U; ++u) res_start_[u + 1] += res_start_[u];
  res_flows_.resize(route_.size());  // every entry is written below
  {
    auto& fill = fill_;
    fill.assign(res_start_.begin(), res_start_.end() - 1);
    for (int f = 0; f < F; ++f)
      for (int i = start_[f]; i < start_[f + 1]; ++i) res_flows_[fill[slot_[route_[i]]]++] = f;
  }
}

const std::vector<double>& MaxMinSolver::solve() {
  const int F = flows();
  rate_.assign(F, 0.0);
  frozen_.assign(F, 0);
  build_index();
  // Per used resource (index u into used_): the weight of its unfrozen flows and what is left.
  const int U = static_cast<int>(used_.size());
  weight_.assign(U, 0.0);
  remaining_.resize(U);
  auto& active = active_;  // used resources (u, ascending) with unfrozen weight
  active.clear();
  active.reserve(used_.size());
  to_freeze_.reserve(route_.size() +
                     F);  // at most every route entry of a full resource, then every cap
  int unfrozen = 0;
  for (int f = 0; f < F; ++f) {
    if (start_[f] == start_[f + 1]) {  // no route: only its cap limits it
      rate_[f] = cap_[f];
      frozen_[f] = 1;
      continue;
    }
    ++unfrozen;
    for (int i = start_[f]; i < start_[f + 1]; ++i) weight_[slot_[route_[i]]] += coeff_[i];
  }
  for (int u = 0; u < U; ++u) {
    if (weight_[u] > 0) active.push_back(u);
    remaining_[u] = capacity_[used_[u]];
  }
  double level = 0;
  auto& to_freeze = to_freeze_;
  while (unfrozen > 0) {
    double delta = kUnlimited;
    for (int u : active) delta = std::min(delta, std::max(0.0, remaining_[u]) / weight_[u]);
    for (int f = 0; f < F; ++f)
      if (!frozen_[f]) delta = std::min(delta, cap_[f] - level);
    if (!std::isfinite(delta)) delta = 0;  // cannot happen with routes over finite resources
    level += delta;
    to_freeze.clear();
    for (int u : active) {
      remaining_[u] -= delta * weight_[u];
      if (remaining_[u] <= capacity_[used_[u]] * kFullFraction)
        for (int i = res_start_[u]; i < res_start_[u + 1]; ++i)
          if (!frozen_[res_flows_[i]]) to_freeze.push_back(res_flows_[i]);
    }
    for (int f = 0; f < F; ++f)
      if (!frozen_[f] && cap_[f] <= level * (1 + 1e-12)) to_freeze.push_back(f);
    if (to_freeze.empty() && delta == 0) break;  // guard against a stall
    for (int f : to_freeze) {
      if (frozen_[f]) continue;
      frozen_[f] = 1;
      rate_[f] = level;
      --unfrozen;
      for (int i = start_[f]; i < start_[f + 1]; ++i) weight_[slot_[route_[i]]] -= coeff_[i];
    }
    active.erase(
        std::remove_if(active.begin(), active.end(),
                       [&](int u) { return weight_[u] <= 1e-12 * (1 + std::abs(weight_[u])); }),
        active.end());
  }
  for (int f = 0; f < F; ++f) {
    if (!frozen_[f]) rate_[f] = level;
    if (!std::isfinite(rate_[f])) continue;
    for (int i = start_[f]; i < start_[f + 1]; ++i) load_[route_[i]] += coeff_[i] * rate_[f];
  }
  for (int r : used_) slot_[r] = -1;
  return rate_;
}

std::vector<double> max_min_rates(const std::vector<double>& capacity,
                                  const std::vector<RateFlow>& flows) {
  MaxMinSolver s(capacity);
  for (const auto& f : flows) {
    if (f.coeff.empty())
      s.add_flow(f.route, f.cap);
    else
      s.add_flow(f.route, f.coeff, f.cap);
  }
  return s.solve();
}

}  // namespace linkwise::sim
