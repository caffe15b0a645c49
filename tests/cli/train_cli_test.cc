// linkwise train: real output, JSON fields, and the exact messages and exit code 2 for plans that cannot run.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"

namespace linkwise::testing {
namespace {

TEST(TrainCli, FixedPlanJson) {
  auto r = run_cli("train dgx-h100 --model llama3-70b --mode lora --plan tp=8 --global-batch 8 --tokens 1e9 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plan"], "tp=8,pp=1,dp=1,zero=0");
  EXPECT_EQ(j["model"], "llama3-70b");
  EXPECT_TRUE(j["fits"].get<bool>());
  for (const char* k : {"step_time_s", "tokens_per_s", "mfu", "memory_per_gpu_GiB", "run_time_s"})
    EXPECT_GT(j[k].get<double>(), 0) << k;
  for (const char* k : {"compute_s", "exposed_comm_s", "bubble_s", "io_s"}) EXPECT_TRUE(j["breakdown"].contains(k)) << k;
  ASSERT_FALSE(j["links"].empty());
  EXPECT_GE(j["links"][0]["busy_fraction"].get<double>(), j["links"].back()["busy_fraction"].get<double>());
  EXPECT_NEAR(j["run_time_s"].get<double>(), 1e9 / j["tokens_per_s"].get<double>(), 1e-6);
  // the step adds up
  auto b = j["breakdown"];
  EXPECT_NEAR(b["compute_s"].get<double>() + b["exposed_comm_s"].get<double>() + b["bubble_s"].get<double>() +
                  b["io_s"].get<double>(),
              j["step_time_s"].get<double>(), 1e-9);
}

TEST(TrainCli, MakeRunJobShowsPlansAndBottleneck) {
  auto r = run_cli("train training-appliance --model llama3-70b --mode lora --tokens 1e9");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("plan search:"), std::string::npos);
  EXPECT_NE(r.out.find("busiest links"), std::string::npos);
  EXPECT_NE(r.out.find("bottleneck: "), std::string::npos);
  EXPECT_NE(r.out.find("time to train 1e+09 tokens"), std::string::npos);
  EXPECT_NE(r.out.find("fits, headroom"), std::string::npos);
}

TEST(TrainCli, Scaling) {
  auto r = run_cli("train dgx-h100 --model llama2-7b --mode lora --seq 2048 --scaling --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["scaling"].size(), 4u);
  EXPECT_EQ(j["scaling"][3]["gpus"], 8);
  EXPECT_DOUBLE_EQ(j["scaling"][0]["efficiency"].get<double>(), 1.0);
}

TEST(TrainCli, Validation) {
  auto r = run_cli("train --validation --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_GE(j.size(), 10u);
  for (const auto& row : j) EXPECT_LE(std::abs(row["error"].get<double>()), 0.15) << row["case"];
}

TEST(TrainCli, TpNotDividingHeads) {
  auto r = run_cli("train dgx-h100 --model llama2-7b --plan tp=3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: tp=3 does not divide the 32 attention heads of llama2-7b\n");
}

TEST(TrainCli, PlanLargerThanTheChassis) {
  auto r = run_cli("train dgx-h100 --model llama2-7b --plan tp=8,dp=2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: plan tp=8,pp=1,dp=2,zero=0 needs tp·pp·dp = 16 GPUs but the chassis has 8\n");
}

TEST(TrainCli, ModelThatFitsOnNoPlan) {
  auto r = run_cli("train workstation-4gpu-nvlink --model llama3-405b");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("linkwise: error: llama3-405b fits on no plan of 4 GPUs of workstation-4gpu-nvlink: "
                        "the least memory any plan needs is ", 0), 0u) << r.err;
}

TEST(TrainCli, FixedPlanThatDoesNotFit) {
  auto r = run_cli("train dgx-h100 --model llama3-70b --plan tp=8");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("DOES NOT FIT"), std::string::npos);
  EXPECT_EQ(r.err, "linkwise: error: plan tp=8,pp=1,dp=1,zero=0 does not fit: it needs 154.4 GiB per GPU of 80.0 GiB\n");
}

TEST(TrainCli, BadFlags) {
  auto r = run_cli("train dgx-h100 --model llama3-7b");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: 'llama3-7b' is neither a model preset nor a model file; did you mean "
                   "'llama2-7b', 'llama3-70b', 'llama3-8b'?\n");
  r = run_cli("train dgx-h100 --model llama2-7b --mode lorra");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: unknown mode 'lorra' (one of: pretrain, full, lora); did you mean 'lora'?\n");
  r = run_cli("train dgx-h100 --model llama2-7b --plan tp=2,foo=1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("linkwise: error: --plan: unknown key 'foo'", 0), 0u) << r.err;
  r = run_cli("train dgx-h100");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: train needs --model (a preset such as llama3-70b, or a model YAML file)\n");
}

TEST(TrainCli, CustomModelFile) {
  std::string dir = temp_dir();
  std::string path = dir + "/tiny.yaml";
  FILE* f = fopen(path.c_str(), "w");
  fputs("id: tiny\nlayers: 4\nhidden: 1024\nheads: 8\nffn: 4096\nvocab: 32000\nseq: 1024\n", f);
  fclose(f);
  auto r = run_cli("train workstation-4gpu-nvlink --model " + path + " --plan dp=4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["model"], "tiny");
}

}  // namespace
}  // namespace linkwise::testing
