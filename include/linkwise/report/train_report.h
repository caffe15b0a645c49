// Renders `linkwise train`: the setup, plan search, step breakdown, memory, links, scaling and
// checkpoint. Rendering only: every number comes from work::scaling_verdict().
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "linkwise/work/checkpoint.h"
#include "linkwise/work/search.h"
#include "linkwise/work/train_run.h"
#include "linkwise/work/validation.h"

namespace linkwise::report {

/// "per-GPU throughput falls most from 4 to 8 GPUs (-9.6 %): data-parallel gradient sync grows from
/// 2 % to 12 % of the step; busiest link pxs1->cpu0 (PCIe Gen4 x16) busy 54 %", and where adding
/// GPUs stops paying; or that per-GPU throughput holds.
std::string scaling_verdict_text(const work::ScalingVerdict& v, int largest_gpus);
nlohmann::json scaling_verdict_json(const work::ScalingVerdict& v);

/// "checkpoint every 1000 steps: 94.3 GB (11.8 GB per box) ...": the checkpoint's host traffic.
std::string checkpoint_text(const work::CheckpointCost& c, int every);
nlohmann::json checkpoint_json(const work::CheckpointCost& c, int every);

/// "fsdp, recompute selective, overlap on[, offload]": the job choices a searched plan was scored
/// with.
std::string job_choices(const work::Job& job);
/// Lines under the ranking: why #1 beats #2, and a communication-bound plan passed over.
std::string search_notes_text(const work::SearchResult& r);

/// The validation cases (`linkwise train --validation`): a Markdown table as docs/VALIDATION.md
/// holds it, and JSON ({schema_version, cases: [...]}).
std::string validation_markdown(const std::vector<work::ValidationRow>& rows);
nlohmann::json validation_json(const std::vector<work::ValidationRow>& rows);

/// One step: time breakdown, memory per GPU, the `max_links` busiest links and the bottleneck.
std::string step_text(const work::StepResult& r, int max_links);
nlohmann::json step_json(const work::StepResult& r);

/// The whole `linkwise train` report: text (tables) or JSON (with schema_version).
std::string train_text(const work::TrainResult& r);
nlohmann::json train_json(const work::TrainResult& r);
/// train_json(r).dump(2) + "\n" when `json`, else train_text(r).
std::string train_output(const work::TrainResult& r, bool json);
/// "plan ... does not fit: it needs X GiB per GPU of Y GiB[; FILE not written]" (no prefix, no
/// newline).
std::string train_does_not_fit(const work::TrainResult& r, const std::string& output);

}  // namespace linkwise::report
