// linkwise design: real output on the example spaces, --out chassis files other commands load,
// JSON, and exit code 2 with the budgets that excluded candidates, or file:line for malformed
// spaces.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"

namespace linkwise::testing {
namespace {

std::string example(const std::string& name) { return source_dir() + "/examples/design/" + name; }

std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// The training appliance space holds the training-appliance, pcie-8gpu-gen4 and workstation
// designs: the NVSwitch design ranks first for its 70B full fine-tune, each design names the link
// that limits each workload, and --out writes chassis files `topo` and `train` load.
TEST(DesignCli, TrainingSpaceRanksNvSwitchFirstAndWritesChassis) {
  std::string dir = temp_dir();
  auto r = run_cli("design " + example("training-appliance-space.yaml") +
                   " --top 2 --threads 2 --out " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto first = r.out.find("Design #1 ");
  ASSERT_NE(first, std::string::npos) << r.out;
  std::string line = r.out.substr(first, r.out.find('\n', first) - first);
  EXPECT_NE(line.find("8x h200-sxm nvswitch"), std::string::npos) << line;
  EXPECT_NE(r.out.find("fullest link: "), std::string::npos);
  EXPECT_NE(r.out.find("binding budget: "), std::string::npos);
  EXPECT_NE(r.out.find("Pareto front"), std::string::npos);
  int files = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    ++files;
    auto t = run_cli("topo " + f.path().string());
    EXPECT_EQ(t.exit_code, 0) << f.path() << t.err;
    EXPECT_NE(t.out.find("Budgets"), std::string::npos);
  }
  EXPECT_GE(files, 2);
  auto first_file =
      dir + "/" + line.substr(line.find('(') + 1, line.find(',') - line.find('(') - 1) + ".yaml";
  auto t = run_cli("train " + first_file + " --model llama3-8b --mode lora");
  EXPECT_EQ(t.exit_code, 0) << first_file << t.err;
}

TEST(DesignCli, JsonHasRankedFrontAndBudgets) {
  auto r = run_cli("design " + example("inference-appliance-space.yaml") + " --json --top 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranked"].size(), 2u);
  EXPECT_FALSE(j["front"].empty());
  EXPECT_GT(j["feasible"].get<int>(), 0);
  const auto& d = j["ranked"][0];
  EXPECT_EQ(d["rank"], 1);
  EXPECT_GT(d["power_w"].get<double>(), 0);
  EXPECT_GT(d["cost_usd"].get<double>(), 0);
  EXPECT_FALSE(d["budgets"]["lines"].empty());
  EXPECT_TRUE(d["workloads"][0]["simulated"].get<bool>());
}

// Nothing fits: 8x H100 PCIe (8 x 350 + 360 W) is over the 2000 W supply, 4x (4 x 350 + 360 = 1760
// W) fits it but costs 4 x 25000 > 50000 USD. The message counts the candidates each budget
// excluded; exit 2.
TEST(DesignCli, NoCandidateFitsSaysWhichBudgetExits2) {
  std::string dir = temp_dir();
  auto path = write(dir, "tiny.yaml", R"(name: tiny
gpus: [{part: h100-pcie, counts: [4, 8]}]
cpus: [{part: epyc-9654}]
budgets:
  power: {supplies: 1, supply_w: 2000}
  max_cost_usd: 50000
  prices_usd: {h100-pcie: 25000}
workloads: [{name: w, model: llama3-8b, mode: lora}]
)");
  auto r = run_cli("design " + path);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(
      r.err.find("tiny.yaml: no candidate of design space 'tiny' fits: 2 candidates, 2 excluded"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("1 by power"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 by cost"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

// A target no candidate reaches excludes every candidate under "target".
TEST(DesignCli, TargetExcludes) {
  std::string dir = temp_dir();
  auto path =
      write(dir, "t.yaml",
            "gpus: [{part: h100-pcie, counts: [2, 4]}]\ncpus: [{part: epyc-9654}]\n"
            "workloads: [{name: w, model: llama3-8b, mode: lora, min_tokens_per_s: 1e9}]\n");
  auto r = run_cli("design " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("2 candidates, 2 excluded (2 by target)"), std::string::npos) << r.err;
}

TEST(DesignCli, MalformedSpaceGivesFileLine) {
  std::string dir = temp_dir();
  auto path =
      write(dir, "bad.yaml",
            "gpus: [{part: h100-pcie, counts: [4]}]\ncpus: [{part: epyc-9654}]\nworkloads:\n"
            "  - {name: w, model: llama3-8b, weigth: 2}\n");
  auto r = run_cli("design " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.yaml:4:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("weigth"), std::string::npos) << r.err;
  auto p = write(dir, "part.yaml",
                 "gpus: [{part: h100-pcei, counts: [4]}]\ncpus: [{part: epyc-9654}]\n"
                 "workloads: [{name: w, model: llama3-8b}]\n");
  auto q = run_cli("design " + p);
  EXPECT_EQ(q.exit_code, 2);
  EXPECT_NE(q.err.find("part.yaml:1:"), std::string::npos) << q.err;
  EXPECT_NE(q.err.find("h100-pcie"), std::string::npos) << q.err;  // did you mean
}

}  // namespace
}  // namespace linkwise::testing

namespace linkwise::testing {
namespace {

// `topo` reads trace_mm and material: 1.5 m of FR-4 at Gen5 without a retimer, and a Gen4 retimer
// on a Gen5 link, are rejected with the file and line of the link (exit 2).
TEST(BudgetCli, TopoRejectsUnreachableChannelsAndSlowRetimers) {
  std::string dir = temp_dir();
  std::string head =
      "nodes:\n  - {id: cpu0, kind: cpu, part: xeon-8480c}\n  - {id: gpu0, kind: gpu, part: "
      "h100-pcie}\n";
  auto a = write(dir, "long.yaml",
                 head +
                     "links:\n  - {a: gpu0, b: cpu0, tech: pcie5, width: 16, trace_mm: 1500, "
                     "material: fr4}\n");
  auto r = run_cli("topo " + a);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("long.yaml:5:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exceeds the 36 dB budget; it needs 4 retimers"), std::string::npos)
      << r.err;
  auto b = write(dir, "slow.yaml",
                 head +
                     "  - {id: rt0, kind: retimer, part: astera-aries-pt4161l}\nlinks:\n"
                     "  - {a: rt0, b: cpu0, tech: pcie5, width: 16}\n"
                     "  - {a: gpu0, b: rt0, tech: pcie5, width: 16}\n");
  auto s = run_cli("topo " + b);
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_NE(s.err.find("slow.yaml:6:"), std::string::npos) << s.err;
  EXPECT_NE(s.err.find("is a PCIe Gen4 part on the Gen5 link"), std::string::npos) << s.err;
  // The training appliance reports its channels and budgets, as JSON too.
  auto t = run_cli("topo training-appliance --json");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  auto j = nlohmann::json::parse(t.out);
  EXPECT_DOUBLE_EQ(j["budgets"]["power_w"].get<double>(), 7740);
  EXPECT_EQ(j["budgets"]["channels"].size(), 16u);
  EXPECT_EQ(j["budgets"]["errors"], 0);
}

}  // namespace
}  // namespace linkwise::testing
