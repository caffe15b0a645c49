// linkwise bench and linkwise calibrate, end to end. Benchmarks run on the simulated machine
// (--fake-gpus) so that they are deterministic on machines with and without GPUs.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"

namespace linkwise::testing {

namespace {
const std::string kReference = source_dir() + "/data/measured/public-reference.json";
}

TEST(MeasureCli, BenchWithoutAGpuSaysSoAndExits1) {
  // Every part skipped: on a machine with a GPU this measures nothing and exits 0.
  auto r = run_cli("bench --skip host,local,peer,latency,nccl");
  if (r.exit_code != 0) {
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err.rfind("linkwise: no GPU found: ", 0), 0u) << r.err;
    EXPECT_EQ(r.out, "");
  }
  auto f = run_cli("bench --fake-gpus none=no\\ driver");
  EXPECT_EQ(f.exit_code, 1);
  EXPECT_EQ(f.err, "linkwise: no GPU found: no driver\n");
}

TEST(MeasureCli, BenchTablesOnASimulatedMachine) {
  auto r = run_cli("bench --fake-gpus gpus=2,p2p=300,bus=250 --sizes 1M -e 64K -n 2 -w 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Host <-> device, pinned memory"), std::string::npos);
  EXPECT_NE(
      r.out.find(
          "Unidirectional P2P=Enabled Bandwidth Matrix (GB/s), ce, 1M\n   D\\D       0       1\n"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("P2P=Disabled Latency Matrix (us), GPU"), std::string::npos);
  EXPECT_NE(r.out.find("# all_reduce_perf: 2 ranks"), std::string::npos);
  EXPECT_NE(
      r.out.find(
          "#       size         count      type   redop    root     time   algbw   busbw  #wrong"),
      std::string::npos);
  EXPECT_NE(r.out.find("# Out of bounds values : 0 OK"), std::string::npos);
}

TEST(MeasureCli, BenchJsonIsWhatCalibrateReads) {
  std::string dir = temp_dir();
  auto r = run_cli("bench --fake-gpus gpus=1,h2d=57,d2h=50 --sizes 4M --skip nccl --json -o " +
                   dir + "/m.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format"], "linkwise-measurements/1");
  EXPECT_EQ(j["devices"][0]["name"], "Fake GPU");
  EXPECT_EQ(j["complete"], true);  // the run got to its end
  std::ifstream in(dir + "/m.json");
  EXPECT_EQ(nlohmann::json::parse(in), j);
  auto c = run_cli("calibrate dgx-h100 " + dir + "/m.json --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  auto cj = nlohmann::json::parse(c.out);
  ASSERT_EQ(cj["entries"].size(), j["measurements"].size());
  for (const auto& e : cj["entries"]) EXPECT_TRUE(e["predicted_GBps"].is_number()) << e.dump();
}

TEST(MeasureCli, BenchSustained) {
  auto r = run_cli(
      "bench --fake-gpus gpus=1,h2d=50,slowdown=4:0.8 --skip host,local,nccl --sustained 10s");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Sustained h2d on GPU 0 (Fake GPU), ce copies of 256M for 10 s"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("t (s)  GB/s   temp (C)  SM MHz  mem MHz  power (W)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("SLOWS DOWN (more than 5%)"), std::string::npos) << r.out;
}

TEST(MeasureCli, BenchBadFlags) {
  auto r = run_cli("bench --fake-gpus gpus=1 --ops allreduse");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "linkwise: error: unknown collective operation 'allreduse' (did you mean "
            "'all_reduce'?); valid: "
            "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv\n");
  r = run_cli("bench --fake-gpus gpus=1 --skip disks");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      "linkwise: error: --skip: unknown part 'disks'; valid: host, local, peer, latency, nccl\n");
  r = run_cli("bench --fake-gpus gpus=1 --gpus 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: --gpus: no GPU 3 (this machine has 1)\n");
}

// Flags are checked before a GPU is looked for: exit 2 with or without one (no --fake-gpus here).
TEST(MeasureCli, BenchBadFlagsExit2BeforeLookingForAGpu) {
  auto r = run_cli("bench --sustained 5s --sustained-kind foo");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "linkwise: error: --sustained-kind: unknown kind 'foo'; valid: h2d, d2h, bidir, p2p, "
            "d2d_local\n");
  r = run_cli("bench --sustained-kind d2h");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')), "linkwise: --sustained-kind requires --sustained");
  r = run_cli("bench --gpus 0,0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: --gpus: GPU 0 is listed twice in '0,0'\n");
  r = run_cli("bench --gpus 1x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: --gpus: '1x' is not a GPU number\n");
  r = run_cli("bench -b 8G -e 8");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "linkwise: error: -b 8G is larger than -e 8\n");  // as linkwise collective says it
  r = run_cli("bench --sustained 5s --gpus 1 --sustained-gpu 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: --sustained-gpu: GPU 0 is not among --gpus 1\n");
  r = run_cli("bench --fake-gpus gpus=1 --skip host,local,nccl --sustained 2s --sustained-gpu 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: --sustained-gpu: GPU 3 is not among the measured GPUs (0)\n");
}

TEST(MeasureCli, CalibrateBadEntriesNameTheFileEntryAndKey) {
  std::string dir = temp_dir();
  auto write = [&](const std::string& name, const std::string& entries) {
    std::ofstream(dir + "/" + name) << R"({"measurements": [)" + entries + "]}";
    return dir + "/" + name;
  };
  auto r = run_cli("calibrate dgx-h100 " +
                   write("p.json", R"({"kind": "p2p", "gpus": [0, 0], "measured_GBps": 5})"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: " + dir +
                       "/p.json:1: measurements[0]: 'gpus' lists GPU 0 twice: [0,0]\n");
  r = run_cli("calibrate dgx-h100 " +
              write("op.json", R"({"kind": "h2d", "gpus": [0], "measured_GBps": 5},
      {"kind": "collective", "op": "xx", "gpus": [0, 1], "measured_GBps": 100})"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      "linkwise: error: " + dir +
          "/op.json:2: measurements[1]: 'op': unknown collective operation 'xx'; "
          "valid: all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv\n");
  r = run_cli(
      "calibrate dgx-h100 " +
      write("w.json", R"({"kind": "link", "tech": "pcie5", "width": 3, "measured_GBps": 5})"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: " + dir +
                       "/w.json:1: measurements[0]: 'width' 3 is not allowed for pcie5 (allowed: "
                       "x1, x2, x4, x8, x16)\n");
  r = run_cli(
      "calibrate dgx-h100 " +
      write("c.json", R"({"kind": "h2d", "gpus": [0], "chassis": "nope", "measured_GBps": 5})"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: " + dir +
                       "/c.json:1: measurements[0]: 'chassis': 'nope' is neither a preset nor a "
                       "chassis file (linkwise presets lists the presets)\n");
  r = run_cli("calibrate dgx-h100 " + dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: " + dir +
                       ": is a directory, not a measurement file (JSON, docs/measure.md)\n");
}

TEST(MeasureCli, CalibrateFitSaysWhatItDidNotTrust) {
  std::string dir = temp_dir();
  std::ofstream(dir + "/m.json")
      << R"({"measurements": [{"kind": "h2d", "gpus": [0], "measured_GBps": 200},
      {"kind": "d2h", "gpus": [0], "measured_GBps": 0.001}, {"kind": "h2d", "gpus": [1], "measured_GBps": 30}]})";
  auto r = run_cli("calibrate dgx-h100 " + dir + "/m.json --fit -o " + dir + "/f.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.out.find(
          "technology  catalog efficiency  fitted efficiency  figures  spread  links written\n"
          "pcie5                   0.9045             0.7380        2  71.0%   4 of 32\n"),
      std::string::npos)
      << r.out;
  EXPECT_NE(
      flat(r.out).find(flat(
          "warning: measurements[0] (h2d GPU0, 200 GB/s): measured above the line rate of its path "
          "(63.02 GB/s, pcie5): efficiency clamped to 1\n")),
      std::string::npos);
  EXPECT_NE(
      r.out.find("warning: measurements[1] (d2h GPU0, 0.001 GB/s): 1.59e-05 of the line rate"),
      std::string::npos);
  EXPECT_NE(
      flat(r.out).find(flat(
          "warning: pcie5: the 2 figures imply efficiencies from 0.476 to 1.000 (spread 71% of the "
          "median, more than 10%); the median 0.738 is written\n")),
      std::string::npos)
      << r.out;
  auto j = run_cli("calibrate dgx-h100 " + dir + "/m.json --fit -o " + dir + "/f.yaml --json");
  auto fj = nlohmann::json::parse(j.out)["fit"];
  EXPECT_EQ(fj["warnings"].size(), 3u);
  EXPECT_EQ(fj["techs"][0]["links"], 4);
  EXPECT_EQ(fj["techs"][0]["tech_links"], 32);
}

TEST(MeasureCli, CalibrateReportsAnErrorForEveryReferenceFigure) {
  auto r = run_cli("calibrate dgx-h100 " + kReference + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_GE(j["entries"].size(), 16u);
  for (const auto& e : j["entries"]) {
    EXPECT_TRUE(e["error"].is_number()) << e.dump();
    EXPECT_TRUE(e["predicted_GBps"].is_number()) << e.dump();
    EXPECT_FALSE(e["source"].get<std::string>().empty());
  }
  auto t = run_cli("calibrate dgx-h100 " + kReference);
  ASSERT_EQ(t.exit_code, 0);
  EXPECT_NE(t.out.find("16 of 16 figures predicted;"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("nvbandwidth issues 6, 24"), std::string::npos);
  EXPECT_NE(
      t.out.find("bound: 1 copy-kernel figure(s) held against the copy-engine link rate only"),
      std::string::npos)
      << t.out;
}

TEST(MeasureCli, CalibrateH200GpuCheck) {
  auto r = run_cli("calibrate hgx-h200 " + source_dir() +
                   "/data/measured/h200-gpu-check-2026-11-30.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("24 of 24 figures predicted; 2 off by more than 10%"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("bound: 9 copy-kernel figure(s)"), std::string::npos) << r.out;
}

TEST(MeasureCli, CalibrateFitWritesALoadableChassis) {
  std::string dir = temp_dir();
  auto r = run_cli("calibrate dgx-h100 " + kReference + " --fit -o " + dir + "/fitted.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Fitted link efficiencies"), std::string::npos);
  EXPECT_NE(r.out.find("pcie5"), std::string::npos);
  auto t = run_cli("topo " + dir + "/fitted.yaml");
  EXPECT_EQ(t.exit_code, 0) << t.err;
  std::ifstream in(dir + "/fitted.yaml");
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(yaml.find("efficiency:"), std::string::npos);
}

TEST(MeasureCli, CalibrateBadInput) {
  auto r = run_cli("calibrate dgx-h100 /nonexistent/m.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("linkwise: error: ", 0), 0u);
  EXPECT_NE(r.err.find("/nonexistent/m.json"), std::string::npos) << r.err;
  r = run_cli("calibrate dgx-h100 " + kReference + " --fit");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: --fit needs -o FILE for the fitted chassis\n");
  std::string dir = temp_dir();
  std::ofstream(dir + "/bad.json") << R"({"measurements": [{"kind": "h2d", "gpus": [0]}]})";
  r = run_cli("calibrate dgx-h100 " + dir + "/bad.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: " + dir +
                       "/bad.json:1: measurements[0]: 'measured_GBps' is missing\n");
}

TEST(MeasureCli, CalibrateStrictExitsOneWhenFlagged) {
  auto r = run_cli("calibrate dgx-h100 " + kReference + " --strict");
  EXPECT_EQ(r.exit_code, 0)
      << r.out;  // every reference figure within 10% (the SM copy is below its bound)
  r = run_cli("calibrate dgx-h100 " + kReference + " --strict --threshold 5");
  EXPECT_EQ(r.exit_code, 1);  // gearshifft's d2h (12.9 against 12.2, -5.4%) is off by more than 5%
}

}  // namespace linkwise::testing
