#include "linkwise/measure/measurement.h"

#include <gtest/gtest.h>

namespace linkwise::measure {

namespace {
std::string error_of(const std::string& text) {
  try {
    parse_measurements(text, "m.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(MeasureFile, ParsesAndKeepsUnknownKeys) {
  auto f = parse_measurements(R"({"machine": "box", "measurements": [
      {"kind": "h2d", "gpus": [0], "bytes": 1024, "measured_GBps": 55.5, "source": "x", "min_GBps": 50},
      {"kind": "collective", "op": "all_reduce", "gpus": [0, 1], "measured_GBps": 300}],
      "nccl": [1, 2]})",
                              "m.json");
  ASSERT_EQ(f.measurements.size(), 2u);
  EXPECT_EQ(f.machine, "box");
  EXPECT_EQ(f.measurements[0].engine, "ce");
  EXPECT_EQ(f.measurements[0].extra["min_GBps"], 50);
  EXPECT_EQ(f.measurements[1].metric, "busbw");
  EXPECT_EQ(f.extra["nccl"].size(), 2u);
  auto again = parse_measurements(to_json(f).dump(), "again.json");
  EXPECT_EQ(to_json(again), to_json(f));
}

TEST(MeasureFile, Errors) {
  EXPECT_EQ(error_of("{").rfind("m.json: not valid JSON: ", 0), 0u);
  EXPECT_EQ(error_of("[]"), "m.json: expected an object with a 'measurements' array (docs/measure.md)");
  EXPECT_EQ(error_of(R"({"measurements": [{"kind": "h2x", "gpus": [0], "measured_GBps": 1}]})"),
            "m.json: measurements[0]: unknown kind 'h2x'; valid: h2d, d2h, bidir, p2p, p2p_bidir, d2d_local, "
            "collective, link");
  EXPECT_EQ(error_of(R"({"measurements": [{"kind": "h2d", "gpus": [0]}]})"),
            "m.json: measurements[0]: 'measured_GBps' is missing");
  EXPECT_EQ(error_of(R"({"measurements": [{"kind": "h2d", "gpus": [0], "measured_GBps": 0}]})"),
            "m.json: measurements[0]: 'measured_GBps' must be positive, not 0");
  EXPECT_EQ(error_of(R"({"measurements": [{"kind": "p2p", "gpus": [0], "measured_GBps": 5}]})"),
            "m.json: measurements[0]: kind 'p2p' needs at least 2 GPU number(s) in 'gpus'");
  EXPECT_EQ(error_of(R"({"measurements": [{"kind": "h2d", "gpus": "0", "measured_GBps": 5}]})"),
            "m.json: measurements[0]: 'gpus' has the wrong type: \"0\"");
  EXPECT_EQ(error_of(R"({"measurements": [{"kind": "link", "tech": "pcie5", "measured_GBps": 5}]})"),
            "m.json: measurements[0]: a link needs 'tech' and a positive 'width'");
}

}  // namespace linkwise::measure
