#include "linkwise/comm/collective.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "linkwise/util/error.h"
#include "linkwise/util/text.h"

namespace linkwise::comm {

namespace {

std::string normalise(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != '_' && c != '-' && c != ' ')
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

const std::vector<std::pair<std::string, Op>>& op_names() {
  static const std::vector<std::pair<std::string, Op>> names = {
      {"all_reduce", Op::kAllReduce},
      {"all_gather", Op::kAllGather},
      {"reduce_scatter", Op::kReduceScatter},
      {"broadcast", Op::kBroadcast},
      {"reduce", Op::kReduce},
      {"alltoall", Op::kAllToAll},
      {"sendrecv", Op::kSendRecv},
  };
  return names;
}

}  // namespace

Op parse_op(const std::string& name) {
  std::string n = normalise(name);
  if (n == "p2p" || n == "sendrecv" || n == "send/recv") return Op::kSendRecv;
  std::vector<std::string> valid;
  for (const auto& [s, op] : op_names()) {
    if (normalise(s) == n) return op;
    valid.push_back(s);
  }
  std::string hint = did_you_mean(name, valid);
  throw InputError(fmt::format("unknown collective operation '{}'{}; valid: {}", name,
                               hint.empty() ? "" : " (" + hint + ")",
                               fmt::to_string(fmt::join(valid, ", "))));
}

Algo parse_algo(const std::string& name) {
  static const std::vector<std::pair<std::string, Algo>> names = {
      {"auto", Algo::kAuto}, {"ring", Algo::kRing},     {"tree", Algo::kTree},
      {"nvls", Algo::kNvls}, {"direct", Algo::kDirect}, {"hierarchical", Algo::kHierarchical},
      {"best", Algo::kBest},
  };
  std::string n = normalise(name);
  std::vector<std::string> valid;
  for (const auto& [s, a] : names) {
    if (s == n) return a;
    valid.push_back(s);
  }
  throw InputError(fmt::format("unknown algorithm '{}'; valid: {}", name,
                               fmt::to_string(fmt::join(valid, ", "))));
}

int dtype_bytes(const std::string& name) {
  // nccl-tests' type names (src/common.cu, test_typenames) and a few common aliases.
  static const std::vector<std::pair<std::string, int>> types = {
      {"int8", 1},    {"uint8", 1},    {"char", 1},    {"int32", 4},    {"uint32", 4},
      {"int", 4},     {"int64", 8},    {"uint64", 8},  {"half", 2},     {"float16", 2},
      {"fp16", 2},    {"float", 4},    {"float32", 4}, {"fp32", 4},     {"double", 8},
      {"float64", 8}, {"bfloat16", 2}, {"bf16", 2},    {"fp8_e4m3", 1}, {"fp8_e5m2", 1},
  };
  std::vector<std::string> valid;
  for (const auto& [s, b] : types) {
    if (s == name) return b;
    valid.push_back(s);
  }
  std::string hint = did_you_mean(name, valid);
  throw InputError(fmt::format("unknown data type '{}'{}; valid: {}", name,
                               hint.empty() ? "" : " (" + hint + ")",
                               fmt::to_string(fmt::join(valid, ", "))));
}

const char* to_string(Op op) {
  switch (op) {
    case Op::kAllReduce:
      return "all_reduce";
    case Op::kAllGather:
      return "all_gather";
    case Op::kReduceScatter:
      return "reduce_scatter";
    case Op::kBroadcast:
      return "broadcast";
    case Op::kReduce:
      return "reduce";
    case Op::kAllToAll:
      return "alltoall";
    case Op::kSendRecv:
      return "sendrecv";
  }
  return "?";
}

const char* to_string(Algo a) {
  switch (a) {
    case Algo::kAuto:
      return "auto";
    case Algo::kRing:
      return "ring";
    case Algo::kTree:
      return "tree";
    case Algo::kNvls:
      return "nvls";
    case Algo::kDirect:
      return "direct";
    case Algo::kHierarchical:
      return "hierarchical";
    case Algo::kBest:
      return "best";
  }
  return "?";
}

const char* to_string(Protocol p) {
  switch (p) {
    case Protocol::kLL:
      return "LL";
    case Protocol::kLL128:
      return "LL128";
    case Protocol::kSimple:
      return "Simple";
  }
  return "?";
}

std::vector<Op> all_ops() {
  std::vector<Op> ops;
  for (const auto& [name, op] : op_names()) ops.push_back(op);
  return ops;
}

bool rooted(Op op) { return op == Op::kBroadcast || op == Op::kReduce; }

double bus_factor(Op op, int n) {
  n = std::max(n, 1);
  switch (op) {
    case Op::kAllReduce:
      return 2.0 * (n - 1) / n;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAllToAll:
      return static_cast<double>(n - 1) / n;
    case Op::kBroadcast:
    case Op::kReduce:
    case Op::kSendRecv:
      return 1;
  }
  return 1;
}

bool reduces(Op op) {
  return op == Op::kAllReduce || op == Op::kReduce || op == Op::kReduceScatter;
}

}  // namespace linkwise::comm
