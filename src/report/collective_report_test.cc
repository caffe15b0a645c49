#include "linkwise/report/collective_report.h"

#include <gtest/gtest.h>

#include "linkwise/measure/nccl_tests_log.h"

namespace linkwise::report {
namespace {

// A result made by hand: the report prints what it is given, nothing computed.
comm::SweepResult two_sizes() {
  comm::SweepResult r;
  r.chassis = "box";
  r.op = comm::Op::kAllReduce;
  r.ranks = 4;
  r.dtype = "float";
  r.unit = 4;
  r.bound.busbw_Bps = 100e9;
  r.bound.cut = "GPU0 | others";
  r.rings.push_back({{}, 50e9, {}, {}, "GPU0 GPU1 GPU2 GPU3"});
  for (std::uint64_t b : {1024u, 2048u}) {
    comm::SweepRow row;
    row.bytes = b;
    row.count = b / 4;
    row.prediction.time_s = 2e-6;
    row.prediction.algbw_Bps = b / 2e-6;
    row.prediction.busbw_Bps = 1.5 * b / 2e-6;
    row.prediction.bottlenecks = {"gpu0->nvsw0"};
    row.prediction.saturated = 3;
    row.ratio_to_bound = row.prediction.busbw_Bps / 100e9;
    r.rows.push_back(row);
  }
  return r;
}

TEST(ReportCollective, TextHasRingsBoundRowsAndLimit) {
  auto t = collective_text(two_sizes());
  EXPECT_NE(t.find("# linkwise collective: all_reduce on box (4 GPUs), predicted by the model, "
                   "not measured\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("# ring 0: GPU0 GPU1 GPU2 GPU3  (50.00 GB/s)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("# bound: busbw <= 100.00 GB/s (worst cut: GPU0 | others)\n"), std::string::npos)
      << t;
  // 2048 B in 2 us: algbw 1.02 GB/s, busbw 1.5 x that = 1.54 GB/s.
  EXPECT_NE(t.find("1.02"), std::string::npos) << t;
  EXPECT_NE(t.find("1.54"), std::string::npos) << t;
  EXPECT_NE(t.find("# limited by (largest size, fullest first): gpu0->nvsw0, (+2 more)\n"),
            std::string::npos)
      << t;
}

TEST(ReportCollective, TextIsNcclTestsColumnForColumn) {
  auto r = two_sizes();
  r.redop = "sum";
  auto t = collective_text(r);
  // nccl-tests 2.x (src/util.cu): "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s ..." headers,
  // rows "%12li  %12li  %8s  %6s  %6s" then per group "  %7s  %6s  %6s    N/A".
  EXPECT_NE(t.find("#       size         count      type   redop    root     time   algbw   busbw  "
                   "#wrong     time   algbw   busbw  #wrong \n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("#        (B)    (elements)                               (us)  (GB/s)  "
                   "(GB/s)             (us)  (GB/s)  (GB/s)         \n"),
            std::string::npos)
      << t;
  // 2048 B in 2 us: algbw 1.02 GB/s, busbw 1.54 GB/s, both groups alike.
  EXPECT_NE(t.find("\n        2048           512     float     sum      -1     2.00    1.02    1.54"
                   "    N/A     2.00    1.02    1.54    N/A\n"),
            std::string::npos)
      << t;
  // The average over the rows: (0.77 + 1.536) / 2 GB/s.
  EXPECT_NE(t.find("# Avg bus bandwidth    : 1.152 \n"), std::string::npos) << t;
  EXPECT_NE(t.find("# Collective test starting: all_reduce_perf\n"), std::string::npos) << t;
}

// The round trip: what `linkwise collective` prints, read back by the nccl-tests log reader that
// calibrate uses, gives the same sizes and bus bandwidths (to the 0.01 GB/s printed).
TEST(ReportCollective, RoundTripThroughTheNcclTestsReader) {
  comm::SweepRequest q;
  q.chassis = "dgx-h100";
  q.sweep.min = "1K";
  q.sweep.max = "8G";
  q.sweep.factor = "8";
  for (const std::string op : {"all_reduce", "all_gather", "broadcast", "sendrecv"}) {
    q.op = op;
    q.gpus = op == "sendrecv" ? std::optional<std::string>("0,1") : std::nullopt;
    auto r = comm::predict_sweep(q);
    auto log = measure::parse_nccl_tests_log(collective_text(r), "predicted.log");
    EXPECT_EQ(log.op, op);
    EXPECT_EQ(log.ranks, r.ranks);
    ASSERT_EQ(log.rows.size(), r.rows.size()) << op;
    for (std::size_t i = 0; i < r.rows.size(); ++i) {
      EXPECT_EQ(log.rows[i].bytes, r.rows[i].bytes);
      EXPECT_EQ(log.rows[i].count, r.rows[i].count);
      EXPECT_NEAR(log.rows[i].figures().busbw_GBps, r.rows[i].prediction.busbw_Bps / 1e9, 0.005);
      EXPECT_NEAR(log.rows[i].in_place->busbw_GBps, r.rows[i].prediction.busbw_Bps / 1e9, 0.005);
    }
    auto file = measure::nccl_tests_measurements(log);
    EXPECT_EQ(file.measurements.back().bytes, r.rows.back().bytes);
    EXPECT_EQ(file.measurements.back().gpus.size(), static_cast<std::size_t>(r.ranks));
  }
}

TEST(ReportCollective, JsonKeysCarryUnits) {
  auto j = collective_json(two_sizes());
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["rows"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["rows"][1]["busbw_GBps"].get<double>(), 1.5 * 2048 / 2e-6 / 1e9);
  EXPECT_DOUBLE_EQ(j["rows"][0]["time_us"].get<double>(), 2.0);
  EXPECT_EQ(j["rings"][0]["order"], "GPU0 GPU1 GPU2 GPU3");
}

}  // namespace
}  // namespace linkwise::report
