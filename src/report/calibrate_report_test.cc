#include "linkwise/report/calibrate_report.h"

#include <gtest/gtest.h>

namespace linkwise::report {
namespace {

TEST(ReportCalibrate, ErrorIsAFractionInJsonAndAPercentInTheTable) {
  measure::Calibration cal;
  cal.chassis = "box";
  cal.threshold_pct = 10;
  measure::CalibrationEntry e;
  e.measured.kind = "h2d";
  e.measured.gpus = {0};
  e.measured.engine = "ce";
  e.measured.measured_GBps = 50;
  e.measured.source = "lab";
  e.chassis = "box";
  e.predicted_GBps = 55;
  e.error_pct = 10;  // (55 - 50) / 50
  e.method = "max flow";
  cal.entries.push_back(e);
  cal.predicted = 1;
  auto t = calibrate_text(cal);
  EXPECT_NE(t.find("+10.0%"), std::string::npos) << t;
  EXPECT_NE(t.find("1 of 1 figures predicted; 0 off by more than 10%"), std::string::npos) << t;
  auto j = calibrate_json(cal);
  EXPECT_DOUBLE_EQ(j["threshold"].get<double>(), 0.10);
  EXPECT_DOUBLE_EQ(j["entries"][0]["error"].get<double>(), 0.10);
  EXPECT_FALSE(j.contains("fit"));
  EXPECT_EQ(j["schema_version"], 1);
}

}  // namespace
}  // namespace linkwise::report
