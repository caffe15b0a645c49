#include "linkwise/measure/nccl_bench.h"

#include <gtest/gtest.h>

#include "linkwise/measure/fake_gpu.h"
#include "linkwise/util/error.h"

namespace linkwise::measure {

TEST(MeasureNccl, CountsFollowNcclTests) {
  // 1 MiB of float over 4 ranks: 262144 elements.
  auto ar = collective_counts(comm::Op::kAllReduce, 1 << 20, 4);
  EXPECT_EQ(ar.count, 262144u);
  EXPECT_EQ(ar.size_bytes, 1u << 20);
  auto ag = collective_counts(comm::Op::kAllGather, 1 << 20, 4);
  EXPECT_EQ(ag.count, 65536u);  // per rank
  EXPECT_EQ(ag.recv_count, 262144u);
  EXPECT_EQ(ag.size_bytes, 1u << 20);  // the gathered buffer
  EXPECT_EQ(ag.send_inplace, 65536u);
  auto rs = collective_counts(comm::Op::kReduceScatter, 1 << 20, 4);
  EXPECT_EQ(rs.count, 65536u);
  EXPECT_EQ(rs.send_count, 262144u);
  EXPECT_EQ(rs.recv_inplace, 65536u);
  auto a2a = collective_counts(comm::Op::kAllToAll, 1 << 20, 4);
  EXPECT_EQ(a2a.count, 65536u);
  EXPECT_EQ(a2a.send_count, 262144u);
  // 12 bytes over 4 ranks: 3 elements, 0 per rank for all-gather: sizes round down as nccl-tests.
  EXPECT_EQ(collective_counts(comm::Op::kAllGather, 12, 4).size_bytes, 0u);
  // algbw = S / t for all of them: 1 MiB in 1 ms = 1.048576 GB/s.
  for (auto op : comm::all_ops())
    EXPECT_NEAR(alg_bandwidth_GBps(op, collective_counts(op, 1 << 20, 4), 4, 1e-3), 1.048576, 1e-9)
        << to_string(op);
}

class MeasureNcclSweep : public ::testing::TestWithParam<comm::Op> {};

TEST_P(MeasureNcclSweep, DataChecksPassAndBusbwApproachesTheBusRate) {
  FakeGpuSpec spec = parse_fake_spec("gpus=4,p2p=300,bus=200");
  FakeCuda cuda(spec);
  FakeNccl nccl(cuda);
  RankSet rs;
  rs.nranks = 4;
  rs.devices = {0, 1, 2, 3};
  rs.ranks = {0, 1, 2, 3};
  rs.comms = nccl.init_all(rs.devices);
  NcclOptions o;
  o.op = GetParam();
  o.min_bytes = 1024;
  o.max_bytes = 1 << 20;
  o.factor = 4;
  o.iters = 3;
  o.warmup = 1;
  o.root = 1;
  auto s = run_nccl_sweep(cuda, nccl, rs, o);
  ASSERT_EQ(s.rows.size(), 6u);  // 1K, 4K, ..., 1M
  EXPECT_EQ(s.wrong_total, 0);
  for (const auto& r : s.rows) EXPECT_EQ(r.wrong[0] + r.wrong[1], 0) << r.size_bytes;
  // The fake takes 10 us + S × factor / 200 GB/s per call: at 1 MiB busbw = 200 × t_bw / (t_bw + 10
  // us).
  const auto& last = s.rows.back();
  double t_bw = static_cast<double>(last.size_bytes) * bus_factor(o.op, 4) / 200e9;
  EXPECT_NEAR(last.busbw[0], 200 * t_bw / (t_bw + 10e-6), 0.01);
  EXPECT_NEAR(last.busbw[0], last.algbw[0] * bus_factor(o.op, 4), 1e-9);
  EXPECT_EQ(last.root, rooted(o.op) ? 1 : -1);
  EXPECT_EQ(last.redop, reduces(o.op) ? "sum" : "none");
  for (auto c : rs.comms) nccl.destroy(c);
  EXPECT_EQ(cuda.live_handles(), 0);
}

INSTANTIATE_TEST_SUITE_P(Ops, MeasureNcclSweep, ::testing::ValuesIn(comm::all_ops()),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(MeasureNccl, FakeMovesDataOnlyForFilledInputs) {
  // A data check fills every input and reads the result: that call moves data. A timing run (inputs
  // not filled again) moves none, and its output is stale: reading it throws until a fill covers
  // the whole buffer.
  FakeCuda cuda(parse_fake_spec("gpus=2,p2p=100"));
  FakeNccl nccl(cuda);
  auto comms = nccl.init_all({0, 1});
  std::vector<CudaApi::Buffer> send, recv;
  std::vector<CudaApi::Stream> streams;
  for (int r = 0; r < 2; ++r) {
    send.push_back(cuda.alloc(MemoryKind::kDevice, r, 64 * 4));
    recv.push_back(cuda.alloc(MemoryKind::kDevice, r, 64 * 4));
    streams.push_back(cuda.create_stream(r));
  }
  auto all_reduce = [&] {
    nccl.group_start();
    for (int r = 0; r < 2; ++r) {
      NcclApi::Call c;
      c.op = comm::Op::kAllReduce, c.count = 64, c.rank = r, c.nranks = 2;
      c.send = send[r], c.recv = recv[r];
      nccl.run(comms[r], c, streams[r]);
    }
    nccl.group_end();
  };
  for (int r = 0; r < 2; ++r) cuda.fill(send[r], 0, 64, static_cast<float>(r + 1), streams[r]);
  all_reduce();  // 1 + 2 = 3 everywhere
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(cuda.count_mismatches(recv[r], 0, 64, 3.0f, streams[r]), 0u);
  all_reduce();  // the inputs were used and not filled again: a timing run
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(cuda.stale(recv[r]));
    EXPECT_THROW(cuda.count_mismatches(recv[r], 0, 64, 3.0f, streams[r]), RuntimeError);
  }
  cuda.fill(recv[0], 0, 32, 0.0f, streams[0]);  // half the buffer: still stale
  EXPECT_THROW(cuda.count_mismatches(recv[0], 0, 64, 0.0f, streams[0]), RuntimeError);
  cuda.fill(recv[0], 0, 64, 0.0f, streams[0]);
  EXPECT_EQ(cuda.count_mismatches(recv[0], 0, 64, 0.0f, streams[0]), 0u);
  for (int r = 0; r < 2; ++r) {  // a check again, as run_nccl_sweep's: output cleared, inputs set
    cuda.fill(recv[r], 0, 64, 0.0f, streams[r]);
    cuda.fill(send[r], 0, 64, static_cast<float>(r + 1), streams[r]);
  }
  all_reduce();
  EXPECT_FALSE(cuda.stale(recv[1]));
  EXPECT_EQ(cuda.count_mismatches(recv[1], 0, 64, 3.0f, streams[1]), 0u);
}

TEST(MeasureNccl, WrongResultsAreCounted) {
  // A fake whose all-reduce moves no data: every checked element stays 0 instead of 1+2 = 3.
  class Lazy : public FakeNccl {
   public:
    using FakeNccl::FakeNccl;
    void run(Comm, const Call&, CudaApi::Stream) override {}
  };
  FakeCuda cuda(parse_fake_spec("gpus=2,p2p=100"));
  Lazy nccl(cuda);
  RankSet rs;
  rs.nranks = 2;
  rs.devices = {0, 1};
  rs.ranks = {0, 1};
  rs.comms = nccl.init_all(rs.devices);
  NcclOptions o;
  o.min_bytes = o.max_bytes = 1024;
  auto s = run_nccl_sweep(cuda, nccl, rs, o);
  // Out of place: 256 elements per rank never written (0 != 3): 512. In place the input (rank + 1)
  // stays: 512 more.
  EXPECT_EQ(s.rows[0].wrong[0], 512);
  EXPECT_EQ(s.rows[0].wrong[1], 512);
  EXPECT_EQ(s.wrong_total, 1024);
}

}  // namespace linkwise::measure
