#include "linkwise/comm/collective.h"

#include <gtest/gtest.h>

#include "linkwise/util/error.h"

namespace linkwise::comm {
namespace {

TEST(CommCollective, ParsesOpsAlgosAndTypes) {
  EXPECT_EQ(parse_op("all_reduce"), Op::kAllReduce);
  EXPECT_EQ(parse_op("allreduce"), Op::kAllReduce);
  EXPECT_EQ(parse_op("all-gather"), Op::kAllGather);
  EXPECT_EQ(parse_op("reduce_scatter"), Op::kReduceScatter);
  EXPECT_EQ(parse_op("alltoall"), Op::kAllToAll);
  EXPECT_EQ(parse_op("sendrecv"), Op::kSendRecv);
  EXPECT_EQ(parse_op("p2p"), Op::kSendRecv);
  EXPECT_THROW(parse_op("allreduse"), InputError);
  EXPECT_EQ(parse_algo("nvls"), Algo::kNvls);
  EXPECT_THROW(parse_algo("butterfly"), InputError);
  EXPECT_EQ(dtype_bytes("float"), 4);
  EXPECT_EQ(dtype_bytes("bfloat16"), 2);
  EXPECT_EQ(dtype_bytes("double"), 8);
  EXPECT_THROW(dtype_bytes("quad"), InputError);
}

TEST(CommCollective, BusFactorsFollowNcclTests) {
  // nccl-tests doc/PERFORMANCE.md: all-reduce 2(n-1)/n, all-gather / reduce-scatter / all-to-all
  // (n-1)/n.
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kBroadcast, 8), 1);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kSendRecv, 2), 1);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kReduce, 8), 1);
  // One rank: the same formulas, 2(1-1)/1 = 0 and (1-1)/1 = 0 (nccl-tests prints busbw 0); 1 for
  // the others.
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllReduce, 1), 0);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllGather, 1), 0);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllToAll, 1), 0);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kBroadcast, 1), 1);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kSendRecv, 1), 1);
}

TEST(CommCollective, EveryOpByItsNcclTestsName) {
  std::vector<std::string> names;
  for (Op op : all_ops()) {
    names.push_back(to_string(op));
    EXPECT_EQ(parse_op(to_string(op)), op);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"all_reduce", "all_gather", "reduce_scatter",
                                             "broadcast", "reduce", "alltoall", "sendrecv"}));
  EXPECT_EQ(parse_op("all_to_all"), Op::kAllToAll);
  EXPECT_EQ(parse_op("send_recv"), Op::kSendRecv);
  EXPECT_TRUE(rooted(Op::kBroadcast));
  EXPECT_TRUE(rooted(Op::kReduce));
  EXPECT_FALSE(rooted(Op::kAllReduce));
  EXPECT_TRUE(reduces(Op::kReduceScatter));
  EXPECT_FALSE(reduces(Op::kAllGather));
}

}  // namespace
}  // namespace linkwise::comm
