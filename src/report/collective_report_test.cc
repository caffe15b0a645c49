#include "linkwise/report/collective_report.h"

#include <gtest/gtest.h>

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
  r.rings.push_back({{}, 50e9, {}, "GPU0 GPU1 GPU2 GPU3"});
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
  EXPECT_NE(t.find("# linkwise collective: all_reduce on box (4 GPUs), predicted\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("# ring 0: GPU0 GPU1 GPU2 GPU3  (50.00 GB/s)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("# bound: busbw <= 100.00 GB/s (worst cut: GPU0 | others)\n"), std::string::npos)
      << t;
  // 2048 B in 2 us: algbw 1.02 GB/s, busbw 1.5 x that = 1.54 GB/s.
  EXPECT_NE(t.find("1.02"), std::string::npos) << t;
  EXPECT_NE(t.find("1.54"), std::string::npos) << t;
  EXPECT_NE(t.find("# limited by (largest size): gpu0->nvsw0, (+2 more)\n"), std::string::npos)
      << t;
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
