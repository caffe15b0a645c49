#include "linkwise/report/bench_report.h"

#include <gtest/gtest.h>

#include "linkwise/measure/nccl_tests_log.h"

namespace linkwise::report {
namespace {

TEST(ReportBench, DevicesAndNotes) {
  measure::BenchReport r;
  measure::DeviceInfo d;
  d.index = 0;
  d.name = "Fake GPU";
  d.pci_bus_id = "0000:01:00.0";
  d.sm_count = 132;
  d.memory_bytes = 80ull << 30;
  r.devices.push_back(d);
  r.notes.push_back("collectives skipped: no NCCL");
  auto t = bench_text(r);
  EXPECT_EQ(t.rfind("# GPU 0: Fake GPU [0000:01:00.0] 132 SMs, 80 GiB\n", 0), 0u) << t;
  EXPECT_NE(t.find("note: collectives skipped: no NCCL\n"), std::string::npos) << t;
}

TEST(ReportBench, StoppedLine) {
  measure::BenchReport r;
  r.complete = false;
  r.host.resize(3);
  r.nccl.resize(1);
  r.nccl[0].rows.resize(2);
  EXPECT_EQ(bench_stopped_line(r, "SIGINT", "m.json"),
            "linkwise: stopped by SIGINT: 5 measurements finished, kept in m.json (\"complete\": "
            "false)\n");
  r.host.resize(1);
  r.nccl.clear();
  EXPECT_EQ(bench_stopped_line(r, "SIGTERM", ""),
            "linkwise: stopped by SIGTERM: 1 measurement finished (\"complete\": false)\n");
  EXPECT_EQ(bench_stopped_line(r, "", "m.json"), "");  // no signal: nothing to say
}

// The nccl-tests table inside bench's text is printed as nccl-tests prints it, one row per line
// (wider than the 100 columns the other tables fit), so calibrate's nccl-tests reader reads it
// back: two sizes of 1 MiB and 4 MiB, busbw 77.70 and 174.90 GB/s, out of place and in place alike.
TEST(ReportBench, NcclTableIsNotWrappedAndReadsBackAsNcclTests) {
  measure::BenchReport r;
  measure::NcclSweep s;
  s.nranks = 2;
  s.nccl_version = "2.27.3";
  for (auto [bytes, t, bw] : {std::tuple{1048576ull, 13.50, 77.70}, {4194304ull, 23.98, 174.90}}) {
    measure::NcclRow row;
    row.size_bytes = bytes;
    row.count = bytes / 4;
    row.redop = "sum";
    for (int k = 0; k < 2; ++k) {
      row.time_us[k] = t;
      row.algbw[k] = row.busbw[k] = bw;
      row.wrong[k] = 0;
    }
    s.rows.push_back(row);
  }
  s.avg_busbw = (77.70 + 174.90) / 2;
  r.nccl.push_back(s);
  auto text = bench_text(r);
  auto log = measure::parse_nccl_tests_log(text, "bench.log");
  ASSERT_EQ(log.rows.size(), 2u) << text;
  EXPECT_EQ(log.rows[1].bytes, 4194304u);
  EXPECT_NEAR(log.rows[0].figures().busbw_GBps, 77.70, 0.005);
  EXPECT_NEAR(log.rows[1].in_place->busbw_GBps, 174.90, 0.005);
  EXPECT_NE(text.find("174.90       0\n"), std::string::npos) << text;  // the row ends on its line
}

}  // namespace
}  // namespace linkwise::report
