// Renders `linkwise bench`: the host-device table, peer matrices as p2pBandwidthLatencyTest prints
// them (diagonal: local copy), latency matrices, nccl-tests tables, the sustained run. Rendering
// only: every figure comes from measure::run_bench(); the measurement file (JSON) is
// measure::bench_measurements().
#pragma once

#include <string>

#include "linkwise/measure/bench.h"

namespace linkwise::report {

std::string bench_text(const measure::BenchReport& r);

/// The line `bench` prints on stderr when `signal` ("SIGINT") stopped it, or "" when `signal` is
/// empty: "linkwise: stopped by SIGINT: 14 measurements finished, kept in out.json (\"complete\":
/// false)\n".
std::string bench_stopped_line(const measure::BenchReport& r, const std::string& signal,
                               const std::string& path);

}  // namespace linkwise::report
