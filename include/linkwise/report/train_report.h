// Renders `linkwise train`: the job, the plan search or scaling curve, the step's breakdown, memory and
// busiest links, the run's wall-clock time; and the validation against published measurements.
// Rendering only: every number comes from work::run_train() and work::run_validation().
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "linkwise/work/train.h"
#include "linkwise/work/validation.h"

namespace linkwise::report {

std::string train_text(const work::TrainResult& r);
nlohmann::json train_json(const work::TrainResult& r);
/// One step's report: breakdown, throughput, memory and up to `max_links` busiest links.
std::string step_text(const work::StepResult& r, int max_links);
nlohmann::json step_json(const work::StepResult& r);
/// The validation cases (`linkwise train --validation`): a Markdown table as docs/VALIDATION.md holds it, and JSON.
std::string validation_markdown(const std::vector<work::ValidationRow>& rows);
nlohmann::json validation_json(const std::vector<work::ValidationRow>& rows);
/// The error printed when a plan given explicitly does not fit ("; FILE not written" when `output` is set).
std::string does_not_fit_message(const work::StepResult& best, const std::string& output);

}  // namespace linkwise::report
