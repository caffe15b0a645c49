// Max-min fair rate allocation (progressive filling), the one model of link sharing in linkwise.
//
// Model (as SimGrid's LMM network model, without weights):
//   resources r = 1..R with capacity C_r (bytes/s); flows f = 1..F, each with a route: a list of
//   resources, each entry with a coefficient (1 unless given; a resource listed k times counts k
//   times, a_{f,r} = the sum of its entries' coefficients), and an optional cap c_f (bytes/s).
//   A fractional coefficient splits a flow over parallel paths: a GPU-to-GPU transfer striped over
//   four NVSwitches lists each switch's links with that path's share of the bytes.
//   Find rates x_f >= 0 with   sum_f a_{f,r} x_f <= C_r  for every r,   x_f <= c_f,
//   that are max-min fair: no x_f can grow without shrinking some x_g <= x_f.
// Progressive filling: all unfrozen flows grow at one common rate t; the first resource to fill
// (least (C_r - used_r) / sum_unfrozen a_{f,r}) or the first cap reached freezes the flows on it;
// repeat until every flow is frozen. A flow with an empty route and no cap gets rate +infinity.
//
// Resource numbering used across linkwise for a chassis (sim/resources.h): link l carried from its
// node `a` to node `b` is resource 2l, from b to a 2l+1; per-CPU extras (host memory) follow.
//
// A "coupled" flow (a pipelined ring channel: every hop moves at the same rate) is one flow whose
// route lists every hop's resources; its rate is the rate of each hop.
//
//   linkwise::sim::MaxMinSolver s({10e9, 10e9});     // two resources of 10 GB/s
//   s.add_flow({0});                                  // flow 0 on resource 0
//   s.add_flow({0, 1});                               // flow 1 on both
//   const auto& x = s.solve();                        // x = {5e9, 5e9}
#pragma once

#include <limits>
#include <span>
#include <vector>

namespace linkwise::sim {

inline constexpr double kUnlimited = std::numeric_limits<double>::infinity();

/// Reusable progressive-filling solver. Storage is kept between solves (clear() keeps capacity).
class MaxMinSolver {
 public:
  MaxMinSolver() = default;
  /// Capacities in bytes/s per resource.
  explicit MaxMinSolver(std::vector<double> capacity);

  void set_capacity(std::vector<double> capacity);
  /// Reads capacities from `capacity`, which the caller keeps alive and unchanged while the solver
  /// uses it (no copy: the engine's runs share one table).
  void view_capacity(std::span<const double> capacity);
  std::span<const double> capacity() const { return capacity_; }

  /// Removes every flow; keeps capacities.
  void clear();
  /// Room for `flows` flows naming `entries` route entries in all (no reallocation while they are
  /// added).
  void reserve(std::size_t flows, std::size_t entries);
  /// Adds a flow over `route` (resource ids, repeats count), capped at `cap` bytes/s. Returns its
  /// id.
  int add_flow(std::span<const int> route, double cap = kUnlimited);
  int add_flow(std::initializer_list<int> route, double cap = kUnlimited) {
    return add_flow(std::span<const int>(route.begin(), route.size()), cap);
  }
  /// As above, with a coefficient per route entry (`coeff.size() == route.size()`, each > 0).
  int add_flow(std::span<const int> route, std::span<const double> coeff, double cap = kUnlimited);
  int flows() const { return static_cast<int>(cap_.size()); }

  /// Solves; returns the rate of every flow, bytes/s, indexed by flow id.
  const std::vector<double>& solve();
  /// After solve(): bytes/s each resource carries (sum of a_{f,r} x_f).
  const std::vector<double>& load() const { return load_; }
  /// After solve(): whether each resource is saturated (load within 1e-9 relative of capacity).
  bool saturated(int resource) const;
  /// After solve(): the resources some flow's route names, ascending (every other one's load is 0).
  const std::vector<int>& used() const { return used_; }

 private:
  void build_index();                  // resource -> flows (CSR)
  std::vector<double> own_;            // set_capacity()'s copy
  std::span<const double> capacity_;   // own_ or the caller's table (view_capacity())
  std::vector<int> start_{0}, route_;  // CSR: flow f's route is route_[start_[f] .. start_[f+1])
  std::vector<double> coeff_;          // parallel to route_
  std::vector<double> cap_, rate_, load_;
  // scratch
  std::vector<double> remaining_, weight_;
  std::vector<char> frozen_;
  std::vector<int> res_start_, res_flows_, fill_, active_, to_freeze_;
  // Per-solve work touches only the resources the routes name: used_ (ascending), slot_ (by
  // resource: its index in used_ during a solve, else -1); weight_, remaining_ and the CSR
  // res_start_ are indexed by that position.
  std::vector<int> used_, slot_;
};

/// One flow for the free function: its route and cap.
struct RateFlow {
  std::vector<int> route;
  double cap = kUnlimited;
  std::vector<double> coeff;  ///< per route entry; empty = 1 each
};

/// Convenience: rates of `flows` over resources of capacity `capacity` (bytes/s).
std::vector<double> max_min_rates(const std::vector<double>& capacity,
                                  const std::vector<RateFlow>& flows);

}  // namespace linkwise::sim
