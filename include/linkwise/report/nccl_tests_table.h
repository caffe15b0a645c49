// nccl-tests' results table, the one layout both a prediction (`linkwise collective`) and a
// measurement (`linkwise bench`) are printed in, so either reads as an nccl-tests log.
//
// Layout of nccl-tests 2.x (NVIDIA/nccl-tests src/common.cu and src/util.cu): three '#' header
// lines ("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s ..."), one line per size
// ("%12li  %12li  %8s  %6s  %6s", then per group "  %7s  %6s  %6s  %6g", or "    N/A" in place of
// the error count when results were not checked), and the closing lines
// ("# %-20s : %d %s" out of bounds values, "# %-20s : %g " average bus bandwidth, "#").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace linkwise::report {

/// One size: the out-of-place ([0]) and in-place ([1]) groups.
struct NcclTestsRow {
  std::uint64_t bytes = 0, count = 0;  ///< the size and count columns
  std::string type = "float", redop;   ///< redop: "sum", ..., or "none"
  int root = -1;                       ///< -1 for collectives without a root
  struct Group {
    double time_us = 0, algbw_GBps = 0, busbw_GBps = 0;
    long wrong = -1;  ///< elements found wrong; -1 when not checked (printed N/A)
  } groups[2];
};

/// The table: header, rows, the out-of-bounds count (the checked groups' wrong elements summed;
/// OK when 0) and `avg_busbw_GBps` as the average bus bandwidth line.
std::string nccl_tests_table(const std::vector<NcclTestsRow>& rows, double avg_busbw_GBps);
/// `value` as nccl-tests prints a figure in `width` columns (src/util.cu, getFloatStr): "%.2f"
/// while it fits, then fewer decimals, then exponent form ("1.2e+04").
std::string nccl_tests_number(double value, int width);

}  // namespace linkwise::report
