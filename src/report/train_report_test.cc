#include "linkwise/report/train_report.h"

#include <gtest/gtest.h>

namespace linkwise::report {
namespace {

TEST(ReportTrain, ScalingTableAndJson) {
  work::TrainResult r;
  r.setup.model_name = "Tiny";
  r.setup.total_params = 1e9;
  r.setup.chassis = "box";
  r.setup.chassis_gpus = 2;
  r.setup.gpu_part = "h100-sxm";
  work::ScalingPoint one;
  one.gpus = 1;
  one.fits = false;
  r.scaling = std::vector<work::ScalingPoint>{one};
  auto t = train_text(r);
  EXPECT_NE(t.find("Tiny (1.0B parameters) on box (2 x h100-sxm)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("does not fit"), std::string::npos) << t;
  auto j = train_json(r);
  EXPECT_EQ(j["scaling"][0]["fits"], false);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_FALSE(j.contains("plan"));  // a scaling run has no single step
}

TEST(ReportTrain, DoesNotFitSaysWhatIsNotWritten) {
  work::StepResult s;
  s.memory.total = 100.0 * (1ull << 30);
  s.memory.capacity = 80.0 * (1ull << 30);
  auto m = does_not_fit_message(s, "out.json");
  EXPECT_NE(m.find("it needs 100.0 GiB per GPU of 80.0 GiB; out.json not written"), std::string::npos) << m;
}

}  // namespace
}  // namespace linkwise::report
