// The best parallelism plans of a job on a chassis, and how throughput scales with GPUs.
//
// Search: every plan that uses exactly the GPUs asked for is a candidate: tp a divisor of the heads up to
// the GPUs of one box, pp a divisor of the layers, dp the rest; ZeRO 0-3; micro-batch 1, 2, 4, 8; vpp 1 or 2
// when pp > 1; for MoE models ep a divisor of both dp and the experts. Candidates that cannot run
// (plan_problem) or do not fit in memory are dropped; the rest are ranked by StepModel::estimate (each
// collective timed for one group alone, no engine run), and the best `simulate_top` are run on the engine
// (StepModel::simulate) and ranked again by their simulated step time.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "linkwise/work/step.h"

namespace linkwise::work {

struct SearchOptions {
  int gpus = 0;          ///< plan size; 0 = every GPU of the chassis
  int top = 5;           ///< plans returned
  int simulate_top = 4;  ///< best estimates re-run on the engine
};

struct SearchResult {
  std::vector<StepResult> best;   ///< best first; the first min(simulate_top, n) simulated
  int candidates = 0;             ///< plans enumerated
  int runnable = 0;               ///< passed plan_problem
  int fitting = 0;                ///< and fit in memory
  std::map<std::string, int> rejected;  ///< reason -> count (first reason of each kind)
  double least_memory_bytes = 0;  ///< smallest memory need among runnable plans
  std::string least_memory_plan;
};

/// Searches; throws InputError saying why when no plan can run or none fits.
SearchResult search_plans(StepModel& model, const SearchOptions& options = {});

/// Every candidate plan of `gpus` GPUs (before any check).
std::vector<Plan> candidate_plans(const Model& model, const Job& job, int gpus, int gpus_per_box);

struct ScalingPoint {
  int gpus = 0;
  bool fits = false;
  StepResult best;         ///< valid when fits
  double efficiency = 0;   ///< tokens/s per GPU relative to the smallest GPU count that fits
};

/// Where adding GPUs stops paying: the doubling at which tokens/s per GPU falls most, the step term that
/// grew there, and the busiest link of the larger plan.
struct ScalingVerdict {
  int from = 0, to = 0;          ///< the doubling (GPU counts); 0 when per-GPU throughput never falls by 2 %
  double per_gpu_change = 0;     ///< (tokens/s per GPU at `to`) / (at `from`) - 1
  std::string term;              ///< the step term whose share grew most: "data-parallel gradient sync", ...
  double term_share_from = 0, term_share_to = 0;  ///< its share of the step time at both counts
  std::string link, tech;        ///< the busiest link at `to` and its technology
  double link_busy = 0;          ///< its busy fraction of the step
  int stops_paying = 0;          ///< first GPU count whose total tokens/s is no higher than the count before
};
ScalingVerdict scaling_verdict(const std::vector<ScalingPoint>& points);

/// Best plan at 1, 2, 4, ... GPUs up to the chassis (all boxes). Points where nothing fits are kept with
/// fits = false.
std::vector<ScalingPoint> scaling(StepModel& model, int simulate_top = 1);

}  // namespace linkwise::work
