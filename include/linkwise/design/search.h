// The search over a design space: every candidate built, checked against the budgets and scored.
//
//   1. every candidate becomes a chassis (topo::build_chassis) and is checked
//   (topo::check_budgets);
//      a candidate over a budget is excluded and counted under that budget
//   2. each remaining candidate is scored in closed form: per workload, the best plan by
//      work::StepModel::estimate (work::search_plans with no engine run). Candidates whose model
//      inputs are the same (they differ only in board material, trace lengths or prices) share one
//      score
//   3. objective = sum over workloads of weight x tokens/s / (the best tokens/s any candidate
//   reaches on
//      that workload); a candidate under a workload's target is excluded ("target")
//   4. the Pareto front over (objective up, power down, cost down; objectives compared to 0.001,
//   designs
//      that run no workload left out) and the best `top` by objective (ties: cheaper, then lower
//      power) are scored in full: work::search_plans with the best plans run on the engine
//      (work::StepModel::simulate)
//   5. for the best design, each budget that excluded candidates: the best excluded candidate it
//   alone
//      kept out, i.e. what relaxing that budget would buy
// Candidates are split over `threads` workers (std::thread) and, under mpirun, over processes
// (candidate i goes to process i mod N; each sends its closed-form results to rank 0, which merges
// them and does steps 3-5 alone); the result depends on neither number.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "linkwise/design/space.h"
#include "linkwise/topo/budget.h"
#include "linkwise/util/option_spec.h"

namespace linkwise::design {

struct SearchOptions {
  int threads = 0;       ///< 0: every core
  int top = 5;           ///< designs ranked and scored in full
  int simulate_top = 2;  ///< plans per workload run on the engine in the full scoring
  /// Several processes: this one's rank, their number, and a gather that hands rank 0 every
  /// process's string in rank order (nothing on the others). Left at one process, run_design joins
  /// the MPI job when started by mpirun (`mpi`) and linkwise was built with MPI.
  int rank = 0, processes = 1;
  std::function<std::vector<std::string>(const std::string&)> gather;
  bool mpi = true;
};

/// What `linkwise design` asks: the space, the search, and where the designs are written.
struct DesignRequest {
  std::string space;  ///< a design space YAML file (docs/design-format.md)
  std::string out;    ///< a folder for each ranked and front design as chassis YAML; "": none
  SearchOptions search;
};

/// design's options (util/option_spec.h): the CLI flags and the Python keywords.
const std::vector<OptionSpec<DesignRequest>>& design_options();

struct WorkloadScore {
  std::string workload;
  bool fits = false;
  double tokens_per_s = 0;  ///< closed form (estimate), or simulated after full scoring
  bool simulated = false;
  std::string plan;
  std::string bottleneck;     ///< what limits it, naming the link
  std::string limiting_link;  ///< busiest link (full scoring), "" otherwise
};

struct Design {
  Candidate candidate;
  topo::ChassisSpec spec;
  double objective = 0;  ///< weighted, normalised throughput (closed form)
  std::vector<WorkloadScore> scores;
  topo::BudgetReport budgets;
  double power_w = 0, cost_usd = 0;
  int retimers = 0;
  bool on_front = false;
  int rank = 0;  ///< 1 = best objective
};

/// What relaxing one budget would buy the best design.
struct Relaxation {
  std::string budget;            ///< "power", "heat", "cost", "channel-loss", ...
  int excluded = 0;              ///< candidates it alone excluded
  std::string best_candidate;    ///< the best of them
  double objective = 0;          ///< its objective (closed form)
  double needed = 0, limit = 0;  ///< what it uses of that budget, and the limit it is over
  std::string unit;
};

struct DesignResult {
  std::string space;
  std::uint64_t candidates = 0;                        ///< combinations in the space
  std::uint64_t generated = 0;                         ///< that exist (the rest: `not_generated`)
  std::map<std::string, std::uint64_t> not_generated;  ///< reason -> count
  std::map<std::string, std::uint64_t> excluded;       ///< budget (or "target", "build") -> count
  std::uint64_t feasible = 0;
  std::uint64_t distinct_models = 0;      ///< distinct chassis scored in closed form
  std::vector<double> best_tokens_per_s;  ///< per workload, over feasible candidates
  std::vector<Design> ranked;             ///< best first, `top` of them, scored in full
  std::vector<Design> front;              ///< Pareto front, by objective, scored in full
  std::vector<Relaxation> relaxations;
  double seconds = 0;  ///< wall time of the search
  int threads = 1;     ///< per process
  int processes = 1;
  bool root = true;  ///< false on MPI ranks other than 0: they hold no result and print nothing
};

/// Runs the search. Throws InputError (exit 2) when no candidate fits, saying which budget excluded
/// how many candidates. Under mpirun without MPI built in, throws RuntimeError.
DesignResult run_design(const DesignSpace& space, const SearchOptions& options = {});

/// Writes each ranked and front design as a chassis YAML (NAME.yaml) into `folder`, creating it;
/// each file atomically. Throws RuntimeError when the folder cannot be created or a file written.
void write_designs(const DesignResult& result, const std::string& folder);

/// Closed-form scoring only (benchmarks): builds, checks and scores every candidate with `threads`
/// workers and returns the number of feasible candidates. `distinct` receives the distinct chassis
/// scored.
std::uint64_t score_all(const DesignSpace& space, int threads, std::uint64_t* distinct = nullptr);

}  // namespace linkwise::design
