// The best parallelism plans of a job on a chassis, and how throughput scales with GPUs.
//
// Search: every plan that uses exactly the GPUs asked for is a candidate: tp a divisor of the heads
// up to the GPUs of one box, pp a divisor of the layers, dp the rest; ZeRO 0-3; micro-batch 1, 2,
// 4, 8; vpp 1 or 2 when pp > 1; for MoE models ep a divisor of both dp and the experts. Candidates
// that cannot run (plan_problem) or do not fit in memory are dropped; the rest are ranked by
// StepModel::estimate (each collective timed for one group alone, no engine run), and the best
// `simulate_top` are run on the engine (StepModel::simulate) and ranked again by their simulated
// step time.
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
  /// What users can choose besides the plan, each tried with every plan; empty = the job's own
  /// value.
  std::vector<Recompute> recompute;
  std::vector<bool> offload;
  std::vector<Framework> frameworks;
  std::vector<Switch> grad_overlap;
  std::vector<Switch> elementwise;  ///< fused (kOn) or eager (kOff): torch.compile or not
  std::vector<Switch> tp_overlap;   ///< TP communication overlap off (kOff) or on (kOn)
  /// Wider plans: sequence parallelism on and off, placement order tp,dp,pp and dp,tp,pp,
  /// micro-batches 1-32, interleaving 1, 2 or 4 chunks.
  bool wide = false;
  /// The whole space `linkwise train --plan auto` searches when the job leaves a choice open.
  static SearchOptions everything();
};

/// Why the first plan beats the second: the step terms that differ most, e.g. "2.1 s faster: 3.0 s
/// less exposed data-parallel gradient sync, 0.9 s more pipeline bubble".
std::string why_first_beats_second(const StepResult& first, const StepResult& second);

/// A plan is communication-bound when the communication compute does not hide, plus the compute the
/// NCCL kernels slow beside it, exceeds half of its compute.
bool communication_bound(const StepResult& r);

struct SearchResult {
  std::vector<StepResult> best;  ///< best first; the first min(simulate_top, n) simulated
  long long candidates = 0;      ///< plans x job variants enumerated
  long long runnable = 0;        ///< passed plan_problem
  long long fitting = 0;         ///< and fit in memory
  /// A plan the estimate ranked first but the model flags (communication-bound, or under
  /// kAllocatorMarginShare of the GPU's memory free), passed over for a comparable one (within 5 %
  /// of its step time) that is not: "" when none; passed_over_why says which flag.
  std::string passed_over;
  std::string passed_over_why;
  std::map<std::string, int> rejected;  ///< reason -> count (first reason of each kind)
  double least_memory_bytes = 0;        ///< smallest memory need among runnable plans
  std::string least_memory_plan;
};

/// Searches; throws InputError saying why when no plan can run or none fits.
SearchResult search_plans(StepModel& model, const SearchOptions& options = {});

/// Every candidate plan of `gpus` GPUs (before any check).
std::vector<Plan> candidate_plans(const Model& model, const Job& job, int gpus, int gpus_per_box,
                                  bool wide = false);

struct ScalingPoint {
  int gpus = 0;
  bool fits = false;
  StepResult best;        ///< valid when fits
  double efficiency = 0;  ///< tokens/s per GPU relative to the smallest GPU count that fits
};

/// Where adding GPUs stops paying: the doubling at which tokens/s per GPU falls most, the step term
/// that grew there, the link that carries that term's traffic in the larger plan (the fullest link
/// whose traffic is mostly of the term's kind; none when the term is not link traffic: the pipeline
/// bubble, NCCL kernels beside compute), and what each GPU added at that doubling yields.
struct ScalingVerdict {
  int from = 0,
      to = 0;  ///< the doubling (GPU counts); 0 when per-GPU throughput never falls by 2 %
  double per_gpu_change = 0;  ///< (tokens/s per GPU at `to`) / (at `from`) - 1
  std::string term;  ///< the step term whose share grew most: "data-parallel gradient sync", ...
  double term_share_from = 0, term_share_to = 0;  ///< its share of the step time at both counts
  std::string link, tech;  ///< the link carrying `term` at `to` and its technology
  std::string traffic;     ///< the traffic kind it carries most of ("zero", "tp", "dp", ...)
  bool link_carries_term = false;  ///< false: `term`'s traffic is not the most on any link, and
                                   ///< `link` is the fullest link; empty `link`: not link traffic
  double link_utilisation = 0;     ///< its bytes / (capacity x step time)
  double link_busy = 0;            ///< its busy fraction of the step
  /// Tokens/s each GPU added from `from` to `to` yields, as a fraction of a GPU's at `from`:
  /// (T_to - T_from) / (to - from) / (T_from / from). 1 is linear scaling, <= 0 adds nothing.
  double added_gpu_yield = 0;
  int stops_paying =
      0;  ///< first GPU count whose total tokens/s is no higher than the count before
  int counts_that_fit = 0;  ///< GPU counts at which some plan fits (0 or 1: nothing to compare)
  int largest_fit = 0;      ///< the largest of them; 0 when none fits
  /// The doubling at which tokens/s per GPU rises most, by more than 2 % (0 when it never does):
  /// a smaller count that fits only with more model parallelism, or a plan the larger count opens.
  int rise_from = 0, rise_to = 0;
  double per_gpu_rise = 0;  ///< (tokens/s per GPU at `rise_to`) / (at `rise_from`) - 1
};
ScalingVerdict scaling_verdict(const std::vector<ScalingPoint>& points);

/// Best plan at 1, 2, 4, ... GPUs up to the chassis (all boxes). Points where nothing fits are kept
/// with fits = false.
std::vector<ScalingPoint> scaling(StepModel& model, int simulate_top = 1);

}  // namespace linkwise::work
