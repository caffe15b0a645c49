#include "linkwise/report/bench_report.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace linkwise::report
