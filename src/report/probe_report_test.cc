#include "linkwise/report/probe_report.h"

#include <gtest/gtest.h>

namespace linkwise::report {
namespace {

TEST(ReportProbe, CheckListsFindingsAndVerdict) {
  probe::CheckReport r;
  r.findings.push_back({probe::Severity::kFault, "link-degraded", "0000:17:00.0",
                        "pci0000:17/0000:17:00.0", "runs at Gen4 x8, designed Gen5 x16",
                        "reseat the card"});
  r.findings.push_back(
      {probe::Severity::kWarning, "acs-on", "", "", "ACS redirects peer traffic", ""});
  auto t = check_text(r);
  EXPECT_NE(
      t.find(
          "link-degraded: runs at Gen4 x8, designed Gen5 x16\n        at pci0000:17/0000:17:00.0\n"
          "        -> reseat the card\n"),
      std::string::npos)
      << t;
  EXPECT_NE(t.find("UNHEALTHY: 1 fault(s), 1 warning(s)\n"), std::string::npos) << t;
  auto j = check_json(r);
  EXPECT_EQ(j["healthy"], false);
  ASSERT_EQ(j["findings"].size(), 2u);
  EXPECT_EQ(j["findings"][0]["severity"], "fault");
  EXPECT_FALSE(j.contains("faults"));  // lists, not counts (docs/json.md)
}

}  // namespace
}  // namespace linkwise::report
