// CLI tests of linkwise presets / catalog / topo on their real output.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "linkwise/util/text.h"

namespace linkwise::testing {
namespace {

TEST(TopoCliTest, PresetsListsEveryPreset) {
  auto r = run_cli("presets");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* p : {"dgx1-v100", "dgx-a100", "dgx-h100", "hgx-h200", "pcie-8gpu-gen4",
                        "workstation-4gpu-nvlink", "training-appliance", "inference-appliance"})
    EXPECT_NE(r.out.find(p), std::string::npos) << p;
}

TEST(TopoCliTest, QuietLeavesOutKnownWarningsButJsonKeepsThem) {
  // four-gpu-mesh has an oversubscribed PCIe uplink: a known warning.
  const std::string mesh = source_dir() + "/examples/four-gpu-mesh.yaml";
  auto loud = run_cli("topo " + mesh);
  ASSERT_EQ(loud.exit_code, 0) << loud.err;
  EXPECT_NE(loud.out.find("oversubscribed-uplink"), std::string::npos) << loud.out;
  auto quiet = run_cli("topo " + mesh + " --quiet");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out.find("oversubscribed-uplink"), std::string::npos) << quiet.out;
  EXPECT_NE(quiet.out.find("PCIe lanes"), std::string::npos);  // the rest is still there
  auto j = nlohmann::json::parse(run_cli("topo " + mesh + " --quiet --json").out);
  EXPECT_FALSE(j["warnings"].empty());
  // Every command takes the flag.
  EXPECT_EQ(run_cli("collective dgx-a100 -b 8M -e 8M --quiet").exit_code, 0);
  EXPECT_EQ(run_cli("train dgx-a100 --model llama2-7b --mode lora --quiet").exit_code, 0);
}

TEST(TopoCliTest, JsonHasTheDocumentedKeys) {
  auto r = run_cli("topo dgx-h100 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"gpus", "matrix", "pairs", "bisection_GBps", "warnings"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["gpus"].size(), 8u);
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b)
      if (a != b)
        EXPECT_EQ(j["matrix"]["GPU" + std::to_string(a)]["GPU" + std::to_string(b)], "NV18");
  ASSERT_EQ(j["pairs"].size(), 28u);
  const auto& p = j["pairs"][0];
  for (const char* key : {"a", "b", "class", "path_GBps", "maxflow_GBps", "hops"})
    EXPECT_TRUE(p.contains(key)) << key;
  EXPECT_NEAR(p["maxflow_GBps"].get<double>(), 450.0, 1e-6);
}

TEST(TopoCliTest, TextShowsMatrixPairsBisectionLanes) {
  auto r = run_cli("topo dgx1-v100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GPU0\t X \tNV1\tNV1\tNV2\tNV2\tSYS\tSYS\tSYS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Bisection bandwidth"), std::string::npos);
  EXPECT_NE(r.out.find("PCIe lanes"), std::string::npos);
  EXPECT_NE(r.out.find("CPU Affinity"), std::string::npos);
}

TEST(TopoCliTest, DotAndFileOutput) {
  auto r = run_cli("topo inference-appliance --dot");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("graph \"inference-appliance\" {", 0), 0u);
  std::string out = temp_dir() + "/topo.json";
  r = run_cli("topo workstation-4gpu-nvlink --json -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  std::ifstream in(out);
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["gpus"].size(), 4u);
}

TEST(TopoCliTest, ExampleFilesLoad) {
  for (const char* f :
       {"examples/two-gpu-pcie.yaml", "examples/four-gpu-mesh.yaml", "examples/hgx-a100-4nic.yaml",
        "examples/sys-521ge-8x-l40s.yaml", "examples/aws-g6-12xlarge-4x-l4.yaml",
        "examples/z8-fury-4x-rtx6000-ada.yaml", "examples/h100-nvl-pair-xeon-w.yaml",
        "examples/dgx-b200.yaml"}) {
    auto r = run_cli("topo " + source_dir() + "/" + f + " --json");
    EXPECT_EQ(r.exit_code, 0) << f << ": " << r.err;
    r = run_cli("collective " + source_dir() + "/" + f + " -b 1G -e 1G --json");
    EXPECT_EQ(r.exit_code, 0) << f << ": " << r.err;
  }
}

TEST(TopoCliTest, BadInputExitsTwoWithOneMessage) {
  std::string dir = temp_dir();
  std::string bad = dir + "/bad.yaml";
  std::ofstream(bad) << "nodes:\n  - {id: g0, kind: gpu, part: h100-sxm}\n  - {id: g1, kind: gpu, "
                        "part: h100-sxm\n";
  auto r = run_cli("topo " + bad);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "linkwise: error: " + bad + ":4:1: YAML syntax error: end of map flow not found\n");
  EXPECT_TRUE(r.out.empty());

  r = run_cli("topo no-such-box");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'no-such-box' is neither a preset nor a chassis file"), std::string::npos)
      << r.err;

  r = run_cli("topo dgx-h100 --frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--frobnicate"), std::string::npos) << r.err;

  r = run_cli("topo dgx-h100 --nodes 0");
  EXPECT_EQ(r.exit_code, 2);
}

TEST(TopoCliTest, FailedOutputLeavesNoFile) {
  std::string dir = temp_dir();
  auto r = run_cli("topo dgx-h100 --json -o " + dir + "/missing/x.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot write"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/missing"));
}

TEST(TopoCliTest, CatalogShowsSources) {
  auto r = run_cli("catalog pcie5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("128b/130b"), std::string::npos) << r.out;
  r = run_cli("catalog h100-sxm --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["figures"]["bf16_dense_tflops"]["source"].get<std::string>().empty());
}

}  // namespace
}  // namespace linkwise::testing

namespace linkwise::testing {
namespace {

TEST(TopoCliTest, UnknownCommandsAndIdsSuggest) {
  auto r = run_cli("topl dgx-h100");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: unknown command 'topl'; did you mean 'topo'?\n");
  r = run_cli("catalog nvlnk4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "linkwise: error: 'nvlnk4' is neither a catalog part nor a link technology; did you "
            "mean 'nvlink4'?\n");
  r = run_cli("topo dgx-h100 --dot --json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--json excludes --dot"), std::string::npos) << r.err;
  r = run_cli("topo dgx-h100 --nodes 1025");
  EXPECT_EQ(r.exit_code, 2);
}

TEST(TopoCliTest, CatalogShowsOnlyFiguresTheEntryCarries) {
  auto r = run_cli("catalog nvlink4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("transfer_rate_GTps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unit_bytes_per_s"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace linkwise::testing

namespace linkwise {
namespace {

// The matrix as nvidia-smi prints it, byte for byte, before linkwise's own sections.
TEST(TopoCliTest, MatrixIsNvidiaSmiTopoM) {
  auto r = testing::run_cli("topo dgx-h100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string golden =
      read_file(std::string(LINKWISE_SOURCE_DIR) + "/tests/data/nvidia-smi/dgx-h100-topo-m.txt");
  EXPECT_EQ(r.out.substr(0, golden.size()), golden) << r.out;
  EXPECT_EQ(r.out.substr(golden.size(), 10), "\ndgx-h100:");
}

}  // namespace
}  // namespace linkwise
