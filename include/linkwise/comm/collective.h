// Collective operations, algorithms and protocols, with nccl-tests' size and bandwidth conventions.
//
// Sizes (S, bytes) are what nccl-tests prints in its "size" column:
//   all-reduce, broadcast, reduce, send/recv   S = the per-rank buffer
//   all-gather                                 S = the whole gathered buffer (each rank holds S/n)
//   reduce-scatter                             S = the whole input buffer (each rank ends with S/n)
//   all-to-all                                 S = the per-rank buffer (S/n to each rank)
// algbw = S / t;  busbw = algbw × bus_factor(op, n) (nccl-tests doc/PERFORMANCE.md):
//   all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n; broadcast, reduce,
//   send/recv 1.
//
//   auto op = linkwise::comm::parse_op("allreduce");     // Op::kAllReduce; throws InputError if
//   unknown double f = linkwise::comm::bus_factor(op, 8);         // 1.75
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace linkwise::comm {

enum class Op { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSendRecv };

/// kAuto picks per message size what NCCL's tuner would pick, by NCCL's own cost model
/// (comm/predict.h), and the flow model times it; kBest keeps the fastest schedule the flow model
/// finds among the same algorithms; the others force one algorithm (kHierarchical, and kDirect for
/// operations other than all-to-all and send/recv, only so).
enum class Algo { kAuto, kRing, kTree, kNvls, kDirect, kHierarchical, kBest };

/// NCCL's protocols: LL (8-byte lines, 4 bytes of flag), LL128 (120 of 128 bytes), Simple.
enum class Protocol { kLL, kLL128, kSimple };

/// "all_reduce", "allreduce", "all-reduce" all name kAllReduce; likewise for the others
/// ("sendrecv", "send_recv", "p2p"). Throws InputError listing the valid names.
Op parse_op(const std::string& name);
/// "auto", "ring", "tree", "nvls", "direct", "hierarchical". Throws InputError.
Algo parse_algo(const std::string& name);
/// "float", "half", "bfloat16", "double", "int8", "uint8", "int32", "int64", ... (nccl-tests
/// names). Returns the element size in bytes. Throws InputError.
int dtype_bytes(const std::string& name);

const char* to_string(Op op);       ///< "all_reduce", "all_gather", ... (nccl-tests' names)
const char* to_string(Algo algo);   ///< "ring", "tree", "nvls", "direct", "hierarchical", "auto"
const char* to_string(Protocol p);  ///< "LL", "LL128", "Simple"

/// Every operation, in the order above.
std::vector<Op> all_ops();

/// busbw / algbw for `n` ranks (see the table above), nccl-tests' formulas at every n: with one
/// rank 0 for all-reduce, all-gather, reduce-scatter and all-to-all (nothing crosses a link), 1 for
/// the others.
double bus_factor(Op op, int n);
/// Whether the op combines data (all-reduce, reduce, reduce-scatter): nccl-tests' redop "sum", else
/// "none".
bool reduces(Op op);
/// Whether the op has a root (broadcast, reduce): nccl-tests' root column, else -1.
bool rooted(Op op);

}  // namespace linkwise::comm
