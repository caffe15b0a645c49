// nccl-tests' message-size sweep, one for every command that runs or predicts collectives over
// sizes
// (`linkwise collective`, `linkwise bench`).
//
// Sizes go from -b to -e, multiplied by -f (a whole number of at least 2, default 2) or stepped by
// -i bytes, as nccl-tests makes them; sizes read as nccl-tests reads them (8, 64K, 8M, 8G: powers
// of 2). A collective moves whole elements: each size is rounded down to whole elements (whole
// elements per rank where nccl-tests counts per rank: all-gather, reduce-scatter, all-to-all).
//
//   comm::SweepFlags f;  f.min = "1M";  f.max = "8M";
//   auto sizes = comm::sweep_sizes(f);   // 1M, 2M, 4M, 8M
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "linkwise/comm/collective.h"
#include "linkwise/comm/predict.h"
#include "linkwise/util/option_spec.h"

namespace linkwise::comm {

/// The most sizes one sweep holds: -f 2 from 1 byte to 2^40 gives 41; -i can ask for billions.
inline constexpr std::uint64_t kMaxSweepSizes = 10000;

/// The sweep as given on a command line: -b, -e, and -f or -i (absent: not given).
struct SweepFlags {
  std::string min = "8", max = "8G";
  std::optional<std::string> factor, step;
};

/// The sizes of `flags`, smallest first. Throws InputError naming the flag and the value given.
std::vector<std::uint64_t> sweep_sizes(const SweepFlags& flags);
/// min, min × factor, ... while <= max (factor 1: only min). Throws InputError when min is 0 or
/// above max.
std::vector<std::uint64_t> sweep_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                       std::uint64_t factor);

/// The bytes one element of `dtype_bytes` stands for in a size of `op` on `ranks` ranks: the
/// element itself, or one element per rank where nccl-tests counts per rank (all-gather,
/// reduce-scatter, all-to-all).
std::uint64_t element_unit(Op op, int dtype_bytes, int ranks);
/// Whether nccl-tests counts `op`'s elements per rank.
bool counts_per_rank(Op op);

/// `sizes` rounded down to whole `unit`s, repeats and sizes under one unit left out. Throws
/// InputError when none is left, naming the flags and `what` a unit holds (e.g. "one float").
std::vector<std::uint64_t> whole_elements(const std::vector<std::uint64_t>& sizes,
                                          std::uint64_t unit, const SweepFlags& flags,
                                          const std::string& what);

/// What `linkwise collective` asks: a chassis, the ranks, the operation and the sweep, as given.
struct SweepRequest {
  std::string chassis;  ///< a preset name or a chassis YAML file
  int nodes = 0;        ///< copies of the chassis (topo::load_chassis); 0: as the file says
  bool as_designed =
      false;  ///< links at their design rate, not the trained one the chassis records
  std::string op = "all_reduce", dtype = "float", algo = "auto";
  /// nccl-tests' -o: the reduction (sum, prod, min, max, avg); a model times them alike. Printed in
  /// the redop column of reductions ("none" for the others, as nccl-tests prints).
  std::string redop = "sum";
  int root = 0;                     ///< nccl-tests' -r: the root of broadcast and reduce
  std::optional<std::string> gpus;  ///< "0,1,4-7" or "all"; absent: every GPU
  std::optional<int> first_gpus;    ///< nccl-tests' -g N (one thread): GPU0 to GPU(N-1)
  std::optional<int> iterations;    ///< -n/-w as given: they time real runs; a model ignores them
  SweepFlags sweep;
  std::vector<std::string>
      nccl;  ///< --nccl NAME=VALUE lists, applied after the chassis file's `nccl:`
};

/// `linkwise collective`'s options: flags, help, ranges and Python keywords (util/option_spec.h).
const std::vector<OptionSpec<SweepRequest>>& sweep_options();

/// One size of a sweep.
struct SweepRow {
  std::uint64_t bytes = 0;  ///< S, as nccl-tests' size column
  std::uint64_t count = 0;  ///< elements (per rank where nccl-tests counts per rank)
  Prediction prediction;
  double ratio_to_bound = 0;  ///< busbw / the cut bound's busbw (0 without a bound)
};

/// A collective predicted over a size sweep, with its rings, cut bound and notes.
struct SweepResult {
  std::string chassis;
  Op op = Op::kAllReduce;
  int ranks = 0, boxes = 1;
  std::string dtype;
  std::string redop;  ///< as nccl-tests prints it: the reduction, or "none"
  int root = -1;      ///< broadcast and reduce: the root rank; -1 for the others
  std::uint64_t min_bytes = 0, max_bytes = 0;  ///< -b and -e as read
  std::uint64_t step = 2;                      ///< -f factor, or -i bytes when step_bytes
  bool step_bytes = false;
  std::uint64_t unit = 0;  ///< bytes of one element (× ranks where counted per rank)
  Bound bound;
  /// The communicator's rings: order, rate and description (`hops` left empty: a 1,024-rank ring
  /// has 1,024 routes; Communicator::rings() has them).
  std::vector<Ring> rings;
  std::vector<std::string> notes;  ///< e.g. sizes rounded down to whole elements
  std::vector<SweepRow> rows;
};

/// The collective named as linkwise or nccl-tests name it: "all_reduce", "allreduce",
/// "all_reduce_perf" (the nccl-tests binary). Throws InputError as parse_op.
Op parse_collective(const std::string& name);
/// nccl-tests' reduction names for -o: sum, prod, min, max, avg. Throws InputError, pointing to
/// --collective when `name` is a collective (linkwise's --op named the collective before 0.2).
std::string parse_redop(const std::string& name);
/// The name nccl-tests gives `op`'s binary: all_reduce_perf, ..., alltoall_perf, sendrecv_perf.
std::string nccl_tests_binary(Op op);

/// "0,1,4-7" -> GPU node indices of `chassis` in that order; absent or "all": every GPU. Throws
/// InputError for an empty list, a GPU the chassis lacks, one listed twice, or fewer than 2.
std::vector<int> parse_gpu_list(const std::optional<std::string>& given,
                                const topo::Chassis& chassis);

/// Everything `linkwise collective` prints: the request checked (InputError naming the flag), the
/// chassis loaded, a Communicator over the ranks, every size predicted.
SweepResult predict_sweep(const SweepRequest& request);
/// The same on a chassis already built (the request's chassis, nodes and as_designed are not read):
/// many sweeps on one chassis load it once.
SweepResult predict_sweep(const SweepRequest& request, const topo::Chassis& chassis);

}  // namespace linkwise::comm
