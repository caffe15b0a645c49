// nccl-tests' counts and bandwidth definitions.
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

}  // namespace linkwise::measure
