#include "linkwise/measure/nccl_tests_log.h"

#include <gtest/gtest.h>

#include "linkwise/util/text.h"

namespace linkwise::measure {
namespace {

std::string sample(const std::string& name) {
  return std::string(LINKWISE_SOURCE_DIR) + "/tests/data/nccl-tests/" + name;
}

std::string error_of(const std::string& text, const std::string& file = "x.log") {
  try {
    nccl_tests_measurements(parse_nccl_tests_log(text, file));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const char* kHeader =
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time"
    "   algbw   busbw #wrong\n";

TEST(NcclTestsLog, ReadsASingleProcessRun) {
  // 8 GPUs driven by one process (-g 8), nccl-tests 2.13 layout: a Rank line per GPU.
  const auto path = sample("all_reduce_perf_dgx-h100.log");
  const auto text = read_file(path);
  ASSERT_TRUE(looks_like_nccl_tests_log(text));
  auto log = parse_nccl_tests_log(text, path);
  EXPECT_EQ(log.op, "all_reduce");  // from the file's name: this log does not name its test
  EXPECT_EQ(log.ranks, 8);
  ASSERT_EQ(log.rows.size(), 31u);  // 8 B to 8 GiB, factor 2
  const auto& last = log.rows.back();
  EXPECT_EQ(last.bytes, 8589934592u);
  EXPECT_EQ(last.count, 2147483648u);
  EXPECT_EQ(last.redop, "sum");
  EXPECT_EQ(last.root, -1);
  EXPECT_DOUBLE_EQ(last.out_of_place->busbw_GBps, 475.61);
  EXPECT_DOUBLE_EQ(last.in_place->busbw_GBps, 461.76);
  EXPECT_EQ(last.out_of_place->wrong, 0.0);
  EXPECT_DOUBLE_EQ(*log.avg_busbw_GBps, 162.617);
  EXPECT_EQ(log.devices.front(), "NVIDIA H100 80GB HBM3");
  auto file = nccl_tests_measurements(log);
  // Rows printing busbw 0.00 are below the log's resolution and left out.
  ASSERT_FALSE(file.measurements.empty());
  const auto& m = file.measurements.back();
  EXPECT_EQ(m.kind, "collective");
  EXPECT_EQ(m.op, "all_reduce");
  EXPECT_EQ(m.gpus, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(m.bytes, 8589934592u);
  EXPECT_DOUBLE_EQ(m.measured_GBps, 475.61);
  EXPECT_EQ(m.where.line, static_cast<int>(last.line));
}

TEST(NcclTestsLog, ReadsAnOlderMultiProcessRunThroughMpirunTags) {
  // mpirun --tag-output, 16 processes of one GPU, no root column, `error` columns, NCCL INFO lines.
  const auto path = sample("all_gather_perf_2x-dgx-a100.log");
  auto log = parse_nccl_tests_log(read_file(path), path);
  EXPECT_EQ(log.op, "all_gather");
  EXPECT_EQ(log.ranks, 16);
  ASSERT_EQ(log.rows.size(), 6u);
  EXPECT_EQ(log.rows[0].bytes, 1048576u);
  EXPECT_EQ(log.rows[0].root, -1);
  EXPECT_DOUBLE_EQ(log.rows[0].out_of_place->busbw_GBps, 8.64);
  EXPECT_EQ(log.rows[0].out_of_place->wrong, 0.0);
  EXPECT_EQ(nccl_tests_measurements(log).measurements.size(), 6u);
}

TEST(NcclTestsLog, InPlaceOnlyRowsAndTheTestLine) {
  const std::string text = std::string("# Collective test starting: sendrecv_perf\n") +
                           "# nThread 1 nGpus 2 minBytes 8 maxBytes 8 step: 2(factor)\n" + kHeader +
                           "     1048576        262144     float     sum      -1"
                           "                                   "
                           "   12.00   87.38   87.38      0\n";
  auto log = parse_nccl_tests_log(text, "run.log");
  EXPECT_EQ(log.op, "sendrecv");
  EXPECT_EQ(log.ranks, 2);  // nThread 1 x nGpus 2
  ASSERT_EQ(log.rows.size(), 1u);
  EXPECT_FALSE(log.rows[0].out_of_place);
  EXPECT_DOUBLE_EQ(log.rows[0].figures().busbw_GBps, 87.38);
}

TEST(NcclTestsLog, BadLogsSayWhereAndWhat) {
  EXPECT_FALSE(looks_like_nccl_tests_log("{\"measurements\": []}"));
  const std::string head = "# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor)\n";
  EXPECT_EQ(error_of(head + kHeader +
                         "        1024           256     float     sum      -1  "
                         "   5.00   0.20  fast      0\n",
                     "all_reduce_perf.log"),
            "all_reduce_perf.log:3: nccl-tests log: 'fast' in the busbw column is not a figure");
  EXPECT_EQ(error_of(head + kHeader +
                         "        1024           256     float     sum      -1  "
                         "   5.00   0.20   0.36      0\n",
                     "results.log"),
            "results.log: nccl-tests log: it does not name its test (no '# Collective test "
            "starting:' line); name the file after it, e.g. all_reduce_perf.log");
  EXPECT_EQ(error_of(std::string(kHeader) + "        1024           256     float     sum      -1 "
                                            "    5.00   0.20   0.36      0\n",
                     "all_reduce_perf.log"),
            "all_reduce_perf.log: nccl-tests log: it does not say how many ranks ran (no '#  Rank' "
            "or '# nThread ... nGpus' line)");
  EXPECT_EQ(error_of(head + kHeader, "all_reduce_perf.log"),
            "all_reduce_perf.log: nccl-tests log: a column header but no result row (did the run "
            "fail?)");
}

}  // namespace
}  // namespace linkwise::measure
