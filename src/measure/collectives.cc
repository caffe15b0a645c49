// nccl-tests' counts and bandwidth definitions.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "linkwise/measure/nccl_api.h"
#include "linkwise/measure/nccl_bench.h"
#include "linkwise/util/error.h"
#include "linkwise/util/text.h"

namespace linkwise::measure {

CollectiveCounts collective_counts(comm::Op op, std::uint64_t bytes, int nranks) {
  const std::uint64_t n = std::max(nranks, 1), count = bytes / 4;
  CollectiveCounts c;
  switch (op) {
    case comm::Op::kAllGather:
      c.send_count = c.count = count / n;
      c.recv_count = c.send_count * n;
      c.send_inplace = c.send_count;
      break;
    case comm::Op::kReduceScatter:
      c.recv_count = c.count = count / n;
      c.send_count = c.recv_count * n;
      c.recv_inplace = c.recv_count;
      break;
    case comm::Op::kAllToAll:
      c.count = count / n;
      c.send_count = c.recv_count = c.count * n;
      break;
    default:
      c.send_count = c.recv_count = c.count = count;
  }
  c.size_bytes = std::max(c.send_count, c.recv_count) * 4;
  return c;
}

double alg_bandwidth_GBps(comm::Op op, const CollectiveCounts& c, int nranks, double seconds) {
  // nccl-tests' <Op>GetBw: count × typesize (× nranks for the ops whose count is per rank) /
  // seconds.
  double bytes = static_cast<double>(c.count) * 4;
  if (op == comm::Op::kAllGather || op == comm::Op::kReduceScatter || op == comm::Op::kAllToAll)
    bytes *= nranks;
  return seconds > 0 ? bytes / 1e9 / seconds : 0.0;
}

std::string nccl_time_str(double us) {
  if (us >= 10000.0) return fmt::format("{:7.0f}", us);
  if (us >= 100.0) return fmt::format("{:7.1f}", us);
  return fmt::format("{:7.2f}", us);
}

std::string format_nccl_tests(const NcclSweep& s) {
  std::string o;
  o += fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       in-place "
      "         \n",
      "", "", "", "", "");
  o += fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6} {:>6}  {:>7}  {:>6}  {:>6} "
      "{:>6}\n",
      "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
      "busbw", "#wrong");
  o += fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>5}  {:>7}  {:>6}  {:>6}  "
      "{:>5}\n",
      "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
      "");
  for (const auto& r : s.rows) {
    o += fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", r.size_bytes, r.count, r.type, r.redop,
                     r.root);
    for (int k = 0; k < 2; ++k) {
      std::string wrong = r.wrong[k] < 0 ? "N/A" : std::to_string(r.wrong[k]);
      o += fmt::format("  {:>7}  {:6.2f}  {:6.2f}  {:>5}", nccl_time_str(r.time_us[k]), r.algbw[k],
                       r.busbw[k], wrong);
    }
    o += "\n";
  }
  o += fmt::format("# Out of bounds values : {} {}\n", s.wrong_total,
                   s.wrong_total == 0 ? "OK" : "FAILED");
  o += fmt::format("# Avg bus bandwidth    : {:g} \n#\n", s.avg_busbw);
  return o;
}

}  // namespace linkwise::measure
