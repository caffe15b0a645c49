// Collective names and nccl-tests' counts and bandwidth definitions.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "linkwise/measure/nccl_api.h"
#include "linkwise/measure/nccl_bench.h"
#include "linkwise/util/error.h"
#include "linkwise/util/text.h"

namespace linkwise::measure {

const char* to_string(Collective op) {
  switch (op) {
    case Collective::kAllReduce: return "all_reduce";
    case Collective::kAllGather: return "all_gather";
    case Collective::kReduceScatter: return "reduce_scatter";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kReduce: return "reduce";
    case Collective::kAllToAll: return "alltoall";
    case Collective::kSendRecv: return "sendrecv";
  }
  return "?";
}

std::vector<Collective> all_collectives() {
  return {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter, Collective::kBroadcast,
          Collective::kReduce,    Collective::kAllToAll,  Collective::kSendRecv};
}

Collective parse_collective(const std::string& name) {
  std::string k;
  for (char c : name)
    if (c != '_' && c != '-') k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (auto op : all_collectives()) {
    std::string n;
    for (const char* p = to_string(op); *p; ++p)
      if (*p != '_') n += *p;
    if (k == n) return op;
  }
  std::vector<std::string> names;
  for (auto op : all_collectives()) names.push_back(to_string(op));
  throw InputError(fmt::format("unknown collective '{}'; valid: {}", name, join(names, ", ")));
}

double bus_factor(Collective op, int n) {
  if (n < 2) return op == Collective::kAllReduce || op == Collective::kAllGather ||
                            op == Collective::kReduceScatter || op == Collective::kAllToAll
                        ? 0.0
                        : 1.0;
  switch (op) {
    case Collective::kAllReduce: return 2.0 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll: return static_cast<double>(n - 1) / n;
    default: return 1.0;
  }
}

bool reduces(Collective op) {
  return op == Collective::kAllReduce || op == Collective::kReduce || op == Collective::kReduceScatter;
}
bool rooted(Collective op) { return op == Collective::kBroadcast || op == Collective::kReduce; }

CollectiveCounts collective_counts(Collective op, std::uint64_t bytes, int nranks) {
  const std::uint64_t n = std::max(nranks, 1), count = bytes / 4;
  CollectiveCounts c;
  switch (op) {
    case Collective::kAllGather:
      c.send_count = c.count = count / n;
      c.recv_count = c.send_count * n;
      c.send_inplace = c.send_count;
      break;
    case Collective::kReduceScatter:
      c.recv_count = c.count = count / n;
      c.send_count = c.recv_count * n;
      c.recv_inplace = c.recv_count;
      break;
    case Collective::kAllToAll:
      c.count = count / n;
      c.send_count = c.recv_count = c.count * n;
      break;
    default:
      c.send_count = c.recv_count = c.count = count;
  }
  c.size_bytes = std::max(c.send_count, c.recv_count) * 4;
  return c;
}

double alg_bandwidth_GBps(Collective op, const CollectiveCounts& c, int nranks, double seconds) {
  // nccl-tests' <Op>GetBw: count × typesize (× nranks for the ops whose count is per rank) / seconds.
  double bytes = static_cast<double>(c.count) * 4;
  if (op == Collective::kAllGather || op == Collective::kReduceScatter || op == Collective::kAllToAll)
    bytes *= nranks;
  return seconds > 0 ? bytes / 1e9 / seconds : 0.0;
}

std::vector<std::uint64_t> sweep_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes, int factor) {
  if (min_bytes == 0 || max_bytes < min_bytes)
    throw InputError(fmt::format("size sweep: need 0 < min <= max, not min {} and max {} bytes", min_bytes, max_bytes));
  if (factor < 1) throw InputError(fmt::format("size sweep: the factor must be at least 1, not {}", factor));
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = min_bytes; s <= max_bytes; s *= factor) {
    out.push_back(s);
    if (factor == 1) break;
  }
  return out;
}

std::string nccl_time_str(double us) {
  if (us >= 10000.0) return fmt::format("{:7.0f}", us);
  if (us >= 100.0) return fmt::format("{:7.1f}", us);
  return fmt::format("{:7.2f}", us);
}

std::string format_nccl_tests(const NcclSweep& s) {
  std::string o;
  o += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       in-place          \n",
                   "", "", "", "", "");
  o += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6} {:>6}  {:>7}  {:>6}  {:>6} {:>6}\n",
                   "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
                   "busbw", "#wrong");
  o += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>5}  {:>7}  {:>6}  {:>6}  {:>5}\n",
                   "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  for (const auto& r : s.rows) {
    o += fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", r.size_bytes, r.count, r.type, r.redop, r.root);
    for (int k = 0; k < 2; ++k) {
      std::string wrong = r.wrong[k] < 0 ? "N/A" : std::to_string(r.wrong[k]);
      o += fmt::format("  {:>7}  {:6.2f}  {:6.2f}  {:>5}", nccl_time_str(r.time_us[k]), r.algbw[k], r.busbw[k], wrong);
    }
    o += "\n";
  }
  o += fmt::format("# Out of bounds values : {} {}\n", s.wrong_total, s.wrong_total == 0 ? "OK" : "FAILED");
  o += fmt::format("# Avg bus bandwidth    : {:g} \n#\n", s.avg_busbw);
  return o;
}

}  // namespace linkwise::measure
