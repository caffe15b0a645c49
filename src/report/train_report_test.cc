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
  r.step.memory.total = 3.0 * (1ull << 30), r.step.memory.capacity = 80.0 * (1ull << 30);
  auto md = validation_markdown({r});
  EXPECT_NE(md.find("| case A | "), std::string::npos) << md;
  EXPECT_NE(md.find("| +10.0% | paper, Table 1 |"), std::string::npos) << md;
  auto j = validation_json({r});
  EXPECT_EQ(j["schema_version"], 1);
  ASSERT_EQ(j["cases"].size(), 1u);
  EXPECT_DOUBLE_EQ(j["cases"][0]["error"].get<double>(), 0.1);       // a fraction
  EXPECT_DOUBLE_EQ(j["cases"][0]["memory_GiB"].get<double>(), 3.0);  // bytes / 2^30
  EXPECT_DOUBLE_EQ(j["cases"][0]["memory_capacity_GiB"].get<double>(), 80.0);
}

work::ScalingPoint point(int gpus, double tokens_per_s) {
  work::ScalingPoint p;
  p.gpus = gpus;
  p.fits = tokens_per_s > 0;
  p.best.tokens_per_s = tokens_per_s;
  return p;
}

// The verdict says what the table shows when there is nothing to compare or the per-GPU rate rises.
TEST(ReportTrain, ScalingVerdictWithoutAFall) {
  // Nothing fits: no scaling, and not "holds".
  auto none = work::scaling_verdict({point(1, 0), point(2, 0), point(4, 0)});
  EXPECT_EQ(none.counts_that_fit, 0);
  EXPECT_EQ(scaling_verdict_text(none, 4).rfind("no GPU count up to 4 fits this job", 0), 0u);
  // One count fits: nothing to compare.
  auto one = work::scaling_verdict({point(1, 0), point(2, 15412)});
  EXPECT_EQ(scaling_verdict_text(one, 2), "only 2 GPUs fit this job: no scaling to show\n");
  // 4 GPUs at 7716 tokens/s (1929 per GPU), 8 at 23856 (2982 per GPU): 2982 / 1929 - 1 = +54.6 %.
  auto rise = work::scaling_verdict({point(1, 0), point(2, 0), point(4, 7716), point(8, 23856)});
  EXPECT_EQ(rise.to, 0);
  EXPECT_EQ(rise.rise_from, 4);
  EXPECT_EQ(rise.rise_to, 8);
  EXPECT_NEAR(rise.per_gpu_rise, 23856.0 / 8 / (7716.0 / 4) - 1, 1e-12);
  EXPECT_NE(scaling_verdict_text(rise, 8).find("rises most from 4 to 8 GPUs (+54.6 %)"),
            std::string::npos);
  // 100 -> 199 tokens/s on 1 -> 2 GPUs: -0.5 % per GPU, within 2 %.
  auto flat = work::scaling_verdict({point(1, 100), point(2, 199), point(4, 0)});
  EXPECT_EQ(scaling_verdict_text(flat, 4), "per-GPU throughput holds within 2 % up to 2 GPUs\n");
}

}  // namespace
}  // namespace linkwise::report
