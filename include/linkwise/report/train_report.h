// Renders training results that are new to `linkwise train`: the scaling verdict.
// Rendering only: every number comes from work::scaling_verdict().
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "linkwise/work/checkpoint.h"
#include "linkwise/work/search.h"

namespace linkwise::report {

/// "per-GPU throughput falls most from 4 to 8 GPUs (-9.6 %): data-parallel gradient sync grows from 2 %
/// to 12 % of the step; busiest link pxs1->cpu0 (PCIe Gen4 x16) busy 54 %", and where adding GPUs stops
/// paying; or that per-GPU throughput holds.
std::string scaling_verdict_text(const work::ScalingVerdict& v, int largest_gpus);
nlohmann::json scaling_verdict_json(const work::ScalingVerdict& v);

/// "checkpoint every 1000 steps: 94.3 GB (11.8 GB per box) ...": the checkpoint's host traffic.
std::string checkpoint_text(const work::CheckpointCost& c, int every);
nlohmann::json checkpoint_json(const work::CheckpointCost& c, int every);

/// "fsdp, recompute selective, overlap on[, offload]": the job choices a searched plan was scored with.
std::string job_choices(const work::Job& job);
/// Lines under the ranking: why #1 beats #2, and a communication-bound plan passed over.
std::string search_notes_text(const work::SearchResult& r);

}  // namespace linkwise::report
