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
  EXPECT_EQ(error_of("{").rfind("m.json:1: not valid JSON: ", 0), 0u);
  EXPECT_EQ(error_of("[]"),
            "m.json: expected an object with a 'measurements' array (docs/measure.md)");
  EXPECT_EQ(error_of(R"({"measurements": [{"kind": "h2x", "gpus": [0], "measured_GBps": 1}]})"),
            "m.json:1: measurements[0]: unknown kind 'h2x'; valid: h2d, d2h, bidir, p2p, "
            "p2p_bidir, d2d_local, "
            "collective, link");
  EXPECT_EQ(error_of(R"({"measurements": [{"kind": "h2d", "gpus": [0]}]})"),
            "m.json:1: measurements[0]: 'measured_GBps' is missing");
  EXPECT_EQ(error_of(R"({"measurements": [{"kind": "h2d", "gpus": [0], "measured_GBps": 0}]})"),
            "m.json:1: measurements[0]: 'measured_GBps' must be positive, not 0");
  EXPECT_EQ(error_of(R"({"measurements": [{"kind": "p2p", "gpus": [0], "measured_GBps": 5}]})"),
            "m.json:1: measurements[0]: kind 'p2p' needs 2 GPU number(s) in 'gpus', not [0]");
  EXPECT_EQ(error_of(R"({"measurements": [{"kind": "h2d", "gpus": "0", "measured_GBps": 5}]})"),
            "m.json:1: measurements[0]: 'gpus' has the wrong type: \"0\"");
  EXPECT_EQ(
      error_of(R"({"measurements": [{"kind": "link", "tech": "pcie5", "measured_GBps": 5}]})"),
      "m.json:1: measurements[0]: a link needs 'tech' and a positive 'width'");
}

// Each entry is checked against what the model knows, and the error names the file, the entry and
// the key.
TEST(MeasureFile, EntriesOutsideTheModelAreErrors) {
  auto entry = [](const std::string& e) {
    return error_of(R"({"measurements": [{"kind": "h2d", "gpus": [0], "measured_GBps": 5}, )" + e +
                    "]}");
  };
  EXPECT_EQ(entry(R"({"kind": "p2p", "gpus": [0, 0], "measured_GBps": 5})"),
            "m.json:1: measurements[1]: 'gpus' lists GPU 0 twice: [0,0]");
  EXPECT_EQ(
      entry(R"({"kind": "collective", "op": "all_reduce", "gpus": [0, 1, 1], "measured_GBps": 5})"),
      "m.json:1: measurements[1]: 'gpus' lists GPU 1 twice: [0,1,1]");
  EXPECT_EQ(entry(R"({"kind": "h2d", "gpus": [0, 1], "measured_GBps": 5})"),
            "m.json:1: measurements[1]: kind 'h2d' needs 1 GPU number(s) in 'gpus', not [0,1]");
  EXPECT_EQ(entry(R"({"kind": "d2h", "gpus": [-1], "measured_GBps": 5})"),
            "m.json:1: measurements[1]: 'gpus' has GPU -1: GPU numbers start at 0");
  EXPECT_EQ(entry(R"({"kind": "link", "tech": "pcie5", "width": 3, "measured_GBps": 5})"),
            "m.json:1: measurements[1]: 'width' 3 is not allowed for pcie5 (allowed: x1, x2, x4, "
            "x8, x16)");
  EXPECT_EQ(entry(R"({"kind": "link", "tech": "pcie9", "width": 16, "measured_GBps": 5})"),
            "m.json:1: measurements[1]: 'tech': unknown link technology 'pcie9'; did you mean "
            "'pcie1', 'pcie2', 'pcie3'?");
  EXPECT_EQ(entry(R"({"kind": "collective", "op": "xx", "gpus": [0, 1], "measured_GBps": 5})"),
            "m.json:1: measurements[1]: 'op': unknown collective operation 'xx'; valid: "
            "all_reduce, all_gather, "
            "reduce_scatter, broadcast, reduce, alltoall, sendrecv");
  EXPECT_EQ(
      entry(
          R"({"kind": "collective", "op": "all_reduce", "algo": "rign", "gpus": [0, 1], "measured_GBps": 5})")
          .rfind("m.json:1: measurements[1]: 'algo': unknown ", 0),
      0u);
  EXPECT_EQ(
      entry(
          R"({"kind": "collective", "op": "all_reduce", "gpus": [0, 1], "bytes": 0, "measured_GBps": 5})"),
      "m.json:1: measurements[1]: 'bytes' must be a positive whole number of bytes, not 0");
  EXPECT_EQ(entry(R"({"kind": "h2d", "gpus": [0], "bytes": -8, "measured_GBps": 5})"),
            "m.json:1: measurements[1]: 'bytes' must be a positive whole number of bytes, not -8");
  EXPECT_EQ(entry(R"({"kind": "h2d", "gpus": [0], "bytes": 1.5, "measured_GBps": 5})"),
            "m.json:1: measurements[1]: 'bytes' must be a positive whole number of bytes, not 1.5");
  EXPECT_EQ(entry(R"({"kind": "h2d", "gpus": [0], "measured_GBps": 1e308})"),
            "m.json:1: measurements[1]: 'measured_GBps' 1e+308 is not a plausible figure (above "
            "100000 GB/s): check the unit");
  // A size written as a float that is a whole number (1e9) is read.
  auto f = parse_measurements(
      R"({"measurements": [{"kind": "h2d", "gpus": [0], "bytes": 1e9, "measured_GBps": 5}]})",
      "m.json");
  EXPECT_EQ(f.measurements[0].bytes, 1000000000u);
}

TEST(MeasureFile, ADirectoryIsSaidToBeOne) {
  try {
    load_measurements(LINKWISE_SOURCE_DIR);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              std::string(LINKWISE_SOURCE_DIR) +
                  ": is a directory, not a measurement file (JSON, docs/measure.md)");
  }
}

}  // namespace linkwise::measure
