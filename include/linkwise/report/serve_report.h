// Renders a serving prediction (work::ServeResult): the readable report `linkwise serve` prints,
// the concurrency sweep and JSON. Rendering only: every number comes from work::serve().
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "linkwise/work/serve.h"

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

}  // namespace linkwise::report
