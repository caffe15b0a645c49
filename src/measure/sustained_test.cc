#include "linkwise/measure/sustained.h"

#include <gtest/gtest.h>

#include "linkwise/measure/fake_gpu.h"
#include "linkwise/probe/nvml_fake.h"
#include "linkwise/util/error.h"

namespace linkwise::measure {

TEST(MeasureSustained, Durations) {
  EXPECT_DOUBLE_EQ(parse_duration_s("90"), 90);
  EXPECT_DOUBLE_EQ(parse_duration_s("90s"), 90);
  EXPECT_DOUBLE_EQ(parse_duration_s("1.5m"), 90);
  EXPECT_DOUBLE_EQ(parse_duration_s("1h"), 3600);
  try {
    parse_duration_s("soon");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--sustained: 'soon' is not a duration (for example 90, 90s, 5m, 1h)");
  }
  EXPECT_THROW(parse_duration_s("0"), InputError);
  EXPECT_THROW(parse_duration_s("-5s"), InputError);
}

TEST(MeasureSustained, SteadyTransferWithTelemetry) {
  FakeCuda cuda(parse_fake_spec("gpus=1,h2d=50,latency=0"));
  FakeTelemetry tel(2);
  SustainedOptions o;
  o.duration_s = 10;
  o.interval_s = 1;
  auto r = run_sustained(cuda, &tel, o);
  // 64 MiB at 50 GB/s is 1.342 ms a copy; the first window (4 copies) then ~1 s windows to 10 s.
  ASSERT_GE(r.points.size(), 10u);
  EXPECT_LE(r.points.size(), 12u);
  EXPECT_GE(r.points.back().t_s, 10);
  EXPECT_NEAR(r.first_GBps, 50, 1e-6);
  EXPECT_NEAR(r.last_GBps, 50, 1e-6);
  EXPECT_FALSE(r.slows_down);
  ASSERT_TRUE(r.points[0].telemetry.has_value());
  EXPECT_GT(r.points.back().telemetry->temp_c, r.points[0].telemetry->temp_c);
  EXPECT_EQ(cuda.live_handles(), 0);
}

TEST(MeasureSustained, CatchesABoxThatSlowsDownWhenWarm) {
  // After 5 busy seconds the fake's copies run at 70% of their rate: the last quarter is 30%
  // slower.
  FakeCuda cuda(parse_fake_spec("gpus=1,h2d=50,latency=0,slowdown=5:0.7"));
  SustainedOptions o;
  o.duration_s = 12;
  auto r = run_sustained(cuda, nullptr, o);
  EXPECT_NEAR(r.first_GBps, 50, 1e-6);
  EXPECT_NEAR(r.last_GBps, 35, 1e-6);
  EXPECT_NEAR(r.drop_pct, 30, 1e-6);
  EXPECT_TRUE(r.slows_down);
  EXPECT_EQ(r.telemetry_note, "no telemetry (NVML not available)");
}

TEST(MeasureSustained, NvmlTelemetryMatchesTheDeviceByBusId) {
  auto nvml = std::make_unique<probe::FakeNvml>();
  probe::FakeNvml::Gpu other, ours;
  other.bus_id = "00000000:0A:00.0";
  ours.bus_id = "00000000:18:00.0";  // FakeCuda's GPU 0 is 0000:18:00.0
  ours.temperature_c = 61, ours.sm_clock_mhz = 1755, ours.power_mw = 412000;
  nvml->gpus = {other, ours};
  std::string why;
  auto tel = make_nvml_telemetry(std::move(nvml), &why);
  ASSERT_TRUE(tel) << why;
  FakeCuda cuda(parse_fake_spec("gpus=1"));
  auto s = tel->sample(cuda.device_info(0));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->temp_c, 61);
  EXPECT_EQ(s->sm_clock_mhz, 1755);
  EXPECT_DOUBLE_EQ(s->power_w, 412);
  auto bad = std::make_unique<probe::FakeNvml>();
  bad->init_result = probe::kNvmlErrorDriverNotLoaded;
  EXPECT_FALSE(make_nvml_telemetry(std::move(bad), &why));
  EXPECT_EQ(why.rfind("nvmlInit failed: ", 0), 0u) << why;
}

TEST(MeasureSustained, UnknownKind) {
  FakeCuda cuda(parse_fake_spec("gpus=1"));
  SustainedOptions o;
  o.kind = "h2x";
  EXPECT_THROW(run_sustained(cuda, nullptr, o), InputError);
  EXPECT_EQ(cuda.live_handles(), 0);
}

}  // namespace linkwise::measure

namespace linkwise::measure {

TEST(MeasureSustained, StopEndsTheRunWithTheWindowsFinished) {
  FakeCuda cuda(parse_fake_spec("gpus=1,h2d=50,latency=0"));
  SustainedOptions o;
  o.duration_s = 10;
  o.interval_s = 1;
  int polls = 0;
  auto r = run_sustained(cuda, nullptr, o, [&] { return ++polls > 5; });
  // Polled before each window: five windows ran, the sixth was never started.
  EXPECT_EQ(r.points.size(), 5u);
  EXPECT_LT(r.points.back().t_s, 10);
  EXPECT_NEAR(r.first_GBps, 50, 1e-6);  // the verdict covers the windows that ran
  EXPECT_FALSE(r.slows_down);
  EXPECT_EQ(cuda.live_handles(), 0);
}

}  // namespace linkwise::measure
