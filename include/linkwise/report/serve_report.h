// Renders a serving prediction (work::ServeResult): the readable report `linkwise serve` prints,
// the concurrency sweep and JSON. Rendering only: every number comes from work::serve().
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "linkwise/work/serve.h"
#include "linkwise/work/serve_run.h"
#include "linkwise/work/serve_validation.h"

namespace linkwise::report {

/// The readable report: deployment, latency and throughput, memory per GPU, decode step, cold
/// start.
std::string serve_text(const work::ServeResult& r);
/// The concurrency sweep as a table and the bends of the curve.
std::string serve_sweep_text(const work::ServeResult& r);
/// JSON: ttft_s, itl_s, e2e_s, output_tokens_per_s, requests_per_s, concurrency, kv_cache_GiB,
/// max_concurrency_fit, comm_fraction, load_time_s, bottleneck, and the rest (sweep when there is
/// one).
nlohmann::json serve_json(const work::ServeResult& r);

/// The serving validation cases (`linkwise serve --validation`): the table and the median |error|
/// of each metric, as docs/VALIDATION.md holds it; and JSON, one object per case.
std::string serve_validation_markdown(const std::vector<work::ServeValidationRow>& rows);
nlohmann::json serve_validation_json(const std::vector<work::ServeValidationRow>& rows);

/// The whole `linkwise serve` output: validation, sweep or single prediction, as text or JSON.
std::string serve_output(const work::ServeRun& run, bool json);

}  // namespace linkwise::report
