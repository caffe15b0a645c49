// Reading nccl-tests logs (NVIDIA/nccl-tests, versions 2.x) as they are printed, so `linkwise
// calibrate` holds real runs (and `linkwise collective`'s own output) against the model.
//
// What is read, and how tolerantly:
//   - the column header ("#  size  count  type  redop  root  time  algbw  busbw  #wrong ...") names
//     the columns; a row is read by those names, so versions without `root` or `redop`, with
//     `error` instead of `#wrong`, with per-iteration columns (-R) or a timestamp (-T) all read;
//   - rows with only the in-place group (trace replay leaves the out-of-place group blank);
//   - "#  Rank  N Group ... device D [bus] NAME" lines give the ranks (multi-process runs print
//     one per rank); without them, "# nThread T nGpus G" gives T × G ranks of one process;
//   - the test from "# Collective test starting: all_reduce_perf", else from the file's name
//     (all_reduce_perf.log, allgather.txt);
//   - mpirun's "[1,0]<stdout>:" prefixes, NCCL INFO and warning lines, blank lines: skipped.
//
//   auto log = measure::parse_nccl_tests_log(read_file("all_reduce_perf.log"),
//   "all_reduce_perf.log"); auto file = measure::nccl_tests_measurements(log);   // one busbw
//   figure per size
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "linkwise/measure/measurement.h"
#include "linkwise/util/error.h"

namespace linkwise::measure {

/// One group of a row (out-of-place or in-place).
struct NcclTestsFigures {
  double time_us = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::optional<double> wrong;  ///< #wrong (or error); nullopt for "N/A" or no column
};

struct NcclTestsRow {
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  std::string type, redop;
  int root = -1;
  std::optional<NcclTestsFigures> out_of_place, in_place;
  int line = 0;  ///< 1-based line in the log

  /// The figures calibrate reads: out-of-place, or in-place where only that was run.
  const NcclTestsFigures& figures() const { return out_of_place ? *out_of_place : *in_place; }
};

struct NcclTestsLog {
  std::string test;  ///< "all_reduce_perf", or "" when the log does not say
  std::string op;    ///< linkwise's name of the collective ("all_reduce"), or "" when not known
  int ranks = 0;     ///< 0 when the log does not say
  std::vector<std::string> devices;  ///< the "Using devices" lines' device names, rank order
  std::vector<NcclTestsRow> rows;
  std::optional<double> avg_busbw_GBps;  ///< "# Avg bus bandwidth"
  std::string file;
};

/// Whether `text` looks like an nccl-tests log: a '#' column header naming size and busbw.
bool looks_like_nccl_tests_log(const std::string& text);

/// Parses a log. Throws InputError with file:line for a row that does not fit the header, a log
/// with no header or no row.
NcclTestsLog parse_nccl_tests_log(const std::string& text, const std::string& filename);

/// One `collective` measurement per row with a busbw above 0 (busbw as nccl-tests prints it; GPUs
/// 0 to ranks-1 of the chassis). Throws InputError when the log names neither its test nor its
/// ranks, or its test is one linkwise does not model.
MeasurementFile nccl_tests_measurements(const NcclTestsLog& log);

}  // namespace linkwise::measure
