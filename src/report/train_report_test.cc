#include "linkwise/report/train_report.h"

#include <gtest/gtest.h>

namespace linkwise::report {
namespace {

TEST(ReportTrain, ValidationRowsAsMarkdownAndJson) {
  work::ValidationRow r;
  r.c.name = "case A";
  r.c.metric = "MFU";
  r.c.measured = 0.5;
  r.c.source = "paper, Table 1";
  r.predicted = 0.55;
  r.error = 0.1;  // (0.55 - 0.5) / 0.5
  auto md = validation_markdown({r});
  EXPECT_NE(md.find("| case A | "), std::string::npos) << md;
  EXPECT_NE(md.find("| +10.0% | paper, Table 1 |"), std::string::npos) << md;
  auto j = validation_json({r});
  EXPECT_EQ(j["schema_version"], 1);
  ASSERT_EQ(j["cases"].size(), 1u);
  EXPECT_DOUBLE_EQ(j["cases"][0]["error"].get<double>(), 0.1);  // a fraction
}

}  // namespace
}  // namespace linkwise::report
