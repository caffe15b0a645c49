// Copy benchmarks measured as nvbandwidth and p2pBandwidthLatencyTest measure them.
//
// One sample (nvbandwidth memcpy.cpp, MemcpyOperation::doMemcpyCore): every stream taking part is
// held by a blocking kernel; `warmup` copies are enqueued on each; the first stream records its
// start event, the others wait on it and record theirs; each enqueues `loops` copies of `bytes` and
// records its end event; the first stream then waits on all end events and records a total end; the
// block is released. A copy's bandwidth is bytes × loops / (end − start); the total of concurrent
// copies is their bytes together over (total end − first start). A result is the median of
// `samples` samples.
//
// Kinds and what measured_GBps means:
//   h2d, d2h     one GPU and pinned host memory near it, one direction
//   bidir        h2d and d2h at once on one GPU: the sum of both directions (per-direction values
//   kept) p2p          GPU a to GPU b, one way (copy on a's stream, as p2pBandwidthLatencyTest)
//   p2p_bidir    a to b and b to a at once: the sum of both directions
//   d2d_local    a copy inside one GPU's memory: bytes copied per second (each byte read and
//   written)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "linkwise/measure/cuda_api.h"
#include "linkwise/measure/hooks.h"
#include "linkwise/measure/stats.h"

namespace linkwise::measure {

struct CopyOptions {
  std::vector<std::uint64_t> sizes = {64ull << 20};  ///< nvbandwidth's default buffer: 64 MiB
  int loops = 16;   ///< copies per sample (nvbandwidth defaultLoopCount)
  int samples = 3;  ///< samples per result, median reported (nvbandwidth defaultAverageLoopCount)
  int warmup = 4;   ///< untimed copies before each sample (nvbandwidth WARMUP_COUNT)
  std::vector<CopyEngine> engines = {CopyEngine::kCe, CopyEngine::kSm};
};

struct CopyResult {
  std::string kind;  ///< h2d, d2h, bidir, p2p, p2p_bidir, d2d_local
  int src = -1;      ///< GPU index, or -1 for host memory
  int dst = -1;
  CopyEngine engine = CopyEngine::kCe;
  bool peer_access = true;  ///< p2p kinds: whether peer access was enabled
  std::uint64_t bytes = 0;
  Summary GBps;                        ///< of the reported figure (the sum for bidirectional kinds)
  std::vector<double> direction_GBps;  ///< bidirectional kinds: the median of each direction
};

struct LatencyResult {
  int src = 0, dst = 0;
  bool peer_access = true;
  double us = 0;  ///< median over samples of (end − start) / repeats for 4-byte copies
};

/// What each benchmark below measures, in the order it measures it, as results with no figures
/// yet: the benchmarks run these lists (measure_copies, measure_latency), so a list's length is
/// what its benchmark will measure (`linkwise bench`'s progress counts them).
///   plan_host_device  h2d, d2h and bidir for each GPU, size and engine
///   plan_peer         p2p and p2p_bidir for every ordered pair of distinct GPUs (bidir once per
///                     pair), with peer access on or off. With it off only the copy engine runs (a
///                     copy kernel cannot reach the peer); with it on, pairs that cannot access
///                     each other are left out.
///   plan_local        d2d_local for each GPU, size and engine
///   plan_latency      every ordered pair of GPUs, itself included, left out as plan_peer does
std::vector<CopyResult> plan_host_device(const std::vector<int>& gpus, const CopyOptions& o);
std::vector<CopyResult> plan_peer(CudaApi& cuda, const std::vector<int>& gpus, bool peer_access,
                                  const CopyOptions& o);
std::vector<CopyResult> plan_local(const std::vector<int>& gpus, const CopyOptions& o);
std::vector<LatencyResult> plan_latency(CudaApi& cuda, const std::vector<int>& gpus,
                                        bool peer_access);

/// Measures each planned copy result in turn (buffers and streams allocated once for the results
/// of one GPU or pair and size) and returns them, handing each to `hooks` as it finishes; a stop
/// request (polled between samples) ends it with the results finished so far.
std::vector<CopyResult> measure_copies(CudaApi& cuda, const std::vector<CopyResult>& plan,
                                       const CopyOptions& o, const Hooks<CopyResult>& hooks = {});
/// GPU-to-GPU latency (p2pBandwidthLatencyTest's GPU latency) of each planned pair: `repeats`
/// 4-byte copies timed between events on a held stream; hooks and stop as measure_copies.
std::vector<LatencyResult> measure_latency(CudaApi& cuda, const std::vector<LatencyResult>& plan,
                                           int repeats = 100, int samples = 3,
                                           const Hooks<LatencyResult>& hooks = {});

/// The plans above, measured.
std::vector<CopyResult> bench_host_device(CudaApi& cuda, const std::vector<int>& gpus,
                                          const CopyOptions& o,
                                          const Hooks<CopyResult>& hooks = {});
std::vector<CopyResult> bench_peer(CudaApi& cuda, const std::vector<int>& gpus, bool peer_access,
                                   const CopyOptions& o, const Hooks<CopyResult>& hooks = {});
std::vector<CopyResult> bench_local(CudaApi& cuda, const std::vector<int>& gpus,
                                    const CopyOptions& o, const Hooks<CopyResult>& hooks = {});
std::vector<LatencyResult> bench_latency(CudaApi& cuda, const std::vector<int>& gpus,
                                         bool peer_access, int repeats = 100, int samples = 3,
                                         const Hooks<LatencyResult>& hooks = {});

/// One timed set of concurrent copies, as described above.
struct CopyJob {
  CudaApi::Buffer dst = -1, src = -1;
  std::uint64_t bytes = 0;
  CopyEngine engine = CopyEngine::kCe;
  CudaApi::Stream stream = -1;
};
struct CopySample {
  std::vector<double> job_GBps;  ///< each job's bandwidth
  double total_GBps = 0;         ///< all jobs' bytes over the whole span
  double total_s = 0;            ///< the whole span, seconds
};
CopySample time_copies(CudaApi& cuda, const std::vector<CopyJob>& jobs, int loops, int warmup);

}  // namespace linkwise::measure
