#include "linkwise/report/nccl_tests_table.h"

#include <fmt/format.h>

namespace linkwise::report {

std::string nccl_tests_number(double value, int width) {
  int digits = 0;
  for (double v = 1; value >= v && digits < 400; v *= 10) ++digits;
  if (digits < width - 2) return fmt::format("{:>{}.2f}", value, width);
  if (digits < width - 1) return fmt::format("{:>{}.1f}", value, width);
  if (digits < width + 1) return fmt::format("{:>{}.0f}", value, width);
  if (width >= 7) return fmt::format("{:>{}.1e}", value, width);
  return fmt::format("{:>{}.0e}", value, width);
}

std::string nccl_tests_table(const std::vector<NcclTestsRow>& rows, double avg_busbw_GBps) {
  std::string text = fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place          "
      "             in-place          \n",
      "", "", "", "", "");
  text += fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  "
      "{:>6} \n",
      "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
      "busbw", "#wrong");
  text += fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  "
      "{:>6} \n",
      "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
      "");
  long wrong_total = 0;
  for (const auto& row : rows) {
    text += fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", row.bytes, row.count, row.type,
                        row.redop, row.root);
    for (const auto& g : row.groups) {
      text += fmt::format("  {}  {}  {}", nccl_tests_number(g.time_us, 7),
                          nccl_tests_number(g.algbw_GBps, 6), nccl_tests_number(g.busbw_GBps, 6));
      text += g.wrong < 0 ? std::string("    N/A") : fmt::format("  {:>6g}", double(g.wrong));
      if (g.wrong > 0) wrong_total += g.wrong;
    }
    text += "\n";
  }
  text += fmt::format("# {:<20} : {} {}\n", "Out of bounds values", wrong_total,
                      wrong_total == 0 ? "OK" : "FAILED");
  text += fmt::format("# {:<20} : {:g} \n#\n", "Avg bus bandwidth", avg_busbw_GBps);
  return text;
}

}  // namespace linkwise::report
