// comm::Op sweeps measured and printed as nccl-tests does, so the two outputs can be diffed.
//
// Counts (nccl-tests src/<op>.cu, *GetCollByteCount): for a size S bytes of float and n ranks,
//   all_reduce, broadcast, reduce, sendrecv   send = recv = count = S/4
//   all_gather      send = count = S/4/n per rank, recv = n × that; size column = the gathered
//   buffer reduce_scatter  send = n × (S/4/n), recv = count = S/4/n; size column = the whole input
//   alltoall        send = recv = n × (S/4/n), count column = S/4/n
// In place, all_gather's input sits at rank × send count in the output and reduce_scatter's output
// at rank × recv count in the input. Time is per iteration: `iters` calls after one untimed call,
// timed by events on each rank's stream and averaged over ranks (nccl-tests' default -a 1 averages
// its host timer the same way). algbw = S / t; busbw = algbw × bus_factor(op, n) (nccl-tests
// doc/PERFORMANCE.md). #wrong counts elements that differ from the expected result after one more
// call with rank r's input set to r + 1 (exact in float for any realistic rank count).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "linkwise/comm/sweep.h"
#include "linkwise/measure/hooks.h"
#include "linkwise/measure/nccl_api.h"

namespace linkwise::measure {

struct CollectiveCounts {
  std::uint64_t size_bytes = 0;  ///< what the size column shows: max(send, recv) bytes
  std::uint64_t count = 0;       ///< what the count column shows and NCCL's call takes
  std::uint64_t send_count = 0, recv_count = 0;      ///< elements per rank
  std::uint64_t send_inplace = 0, recv_inplace = 0;  ///< in-place offsets per rank, elements
};
/// Counts for `bytes` (rounded down to whole float elements and whole per-rank chunks, as
/// nccl-tests).
CollectiveCounts collective_counts(comm::Op op, std::uint64_t bytes, int nranks);
/// Algorithm bandwidth, GB/s, as nccl-tests' <Op>GetBw computes it from the counts and seconds.
double alg_bandwidth_GBps(comm::Op op, const CollectiveCounts& c, int nranks, double seconds);

struct NcclRow {
  std::uint64_t size_bytes = 0, count = 0;
  std::string type = "float", redop;  ///< redop: "sum" or "none"
  int root = -1;
  double time_us[2] = {0, 0};  ///< [0] out of place, [1] in place
  double algbw[2] = {0, 0};
  double busbw[2] = {0, 0};
  long wrong[2] = {-1, -1};  ///< -1 when not checked (nccl-tests prints N/A then)
};

/// A measured sweep; report::bench_text prints it as nccl-tests does (report/nccl_tests_table.h).
struct NcclSweep {
  comm::Op op = comm::Op::kAllReduce;
  int nranks = 1;
  std::string nccl_version;
  std::vector<NcclRow> rows;
  double avg_busbw = 0;  ///< mean of every row's out-of-place and in-place busbw (nccl-tests' line)
  long wrong_total = 0;
};

struct NcclOptions {
  comm::Op op = comm::Op::kAllReduce;
  std::uint64_t min_bytes = 8, max_bytes = 128ull << 20;
  int factor = 2;
  /// The sizes run; empty: comm::sweep_sizes(min_bytes, max_bytes, factor). Buffers are sized for
  /// max_bytes, and the warm-up runs at max_bytes and min_bytes, as nccl-tests does.
  std::vector<std::uint64_t> sizes;
  int warmup = 5;  ///< nccl-tests -w default
  int iters = 20;  ///< nccl-tests -n default
  bool check = true;
  int root = 0;
};

/// The sizes a sweep with `o` runs, in order: o.sizes, or comm::sweep_sizes(min, max, factor).
std::vector<std::uint64_t> nccl_sizes(const NcclOptions& o);

/// Ranks this process drives: its GPUs and their global rank numbers.
struct RankSet {
  int nranks = 1;            ///< over every process
  std::vector<int> devices;  ///< CUDA devices of this process's ranks
  std::vector<int> ranks;    ///< their global ranks
  std::vector<NcclApi::Comm> comms;
  /// Combines a per-process value over processes (sum); identity in one process.
  std::function<double(double)> sum_over_processes = [](double v) { return v; };
};

/// Runs one sweep. Buffers sized for max_bytes are allocated once. After each size, `hooks` sees
/// the sweep so far (its rows and their average); a stop request, polled before each size, ends the
/// sweep with the sizes finished. Under mpirun every process must poll the same answer (a stop
/// function that combines the processes' flags).
NcclSweep run_nccl_sweep(CudaApi& cuda, NcclApi& nccl, const RankSet& ranks, const NcclOptions& o,
                         const Hooks<NcclSweep>& hooks = {});

}  // namespace linkwise::measure
