// linkwise collective: output, JSON shape, and bad input (exit code 2 with the exact message).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"

namespace linkwise {
namespace {

using testing::run_cli;

TEST(CollectiveCli, TablePrintsNcclTestsColumnsAndTheBound) {
  auto r = run_cli("collective dgx-h100 -b 8 -e 8G -f 1024");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("size"), std::string::npos);
  EXPECT_NE(r.out.find("busbw(GB/s)"), std::string::npos);
  EXPECT_NE(r.out.find("# ring 0: GPU0 GPU1 GPU2 GPU3 GPU4 GPU5 GPU6 GPU7"), std::string::npos);
  EXPECT_NE(r.out.find("# bound: busbw <="), std::string::npos);
  EXPECT_NE(r.out.find("8589934592"), std::string::npos);
  EXPECT_NE(r.out.find("nvls/Simple"), std::string::npos);  // 8G on 8 H100: NVLS wins
  EXPECT_NE(r.out.find("ring/LL"), std::string::npos);      // 8 B: ring LL wins
}

TEST(CollectiveCli, JsonShape) {
  auto r = run_cli("collective dgx-a100 --op all_gather --gpus 0-3 -b 1M -e 4M --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["op"], "all_gather");
  EXPECT_EQ(j["ranks"], 4);
  ASSERT_EQ(j["rows"].size(), 3u);  // 1M, 2M, 4M
  EXPECT_EQ(j["rows"][0]["bytes"], 1048576.0);
  EXPECT_EQ(j["rows"][0]["count"], 65536.0);  // per rank: 1M / 4 bytes / 4 ranks, as nccl-tests prints
  for (const auto& row : j["rows"]) {
    EXPECT_GT(row["time_us"].get<double>(), 0);
    // busbw = algbw x (n-1)/n for all-gather
    EXPECT_NEAR(row["busbw_GBps"].get<double>(), row["algbw_GBps"].get<double>() * 0.75, 1e-9);
    EXPECT_TRUE(row["algorithm"].is_string());
  }
  EXPECT_GT(j["bound_busbw_GBps"].get<double>(), 0);
}

TEST(CollectiveCli, SendRecvAndNodes) {
  auto r = run_cli("collective dgx-h100 --op sendrecv --gpus 0,1 -b 1G -e 1G --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  double bw = j["rows"][0]["busbw_GBps"];
  EXPECT_GT(bw, 340);
  EXPECT_LT(bw, 410);
  auto m = run_cli("collective dgx-h100 --nodes 2 -b 8G -e 8G --json");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_EQ(nlohmann::json::parse(m.out)["ranks"], 16);
}

TEST(CollectiveCli, BadInputExitsTwoWithAClearMessage) {
  auto op = run_cli("collective dgx-h100 --op allreduse");
  EXPECT_EQ(op.exit_code, 2);
  EXPECT_NE(op.err.find("unknown collective operation 'allreduse' (did you mean 'all_reduce'"), std::string::npos)
      << op.err;
  auto gpu = run_cli("collective dgx-h100 --gpus 0,9");
  EXPECT_EQ(gpu.exit_code, 2);
  EXPECT_NE(gpu.err.find("--gpus: GPU9 is not in chassis 'dgx-h100', which has GPU0 to GPU7"), std::string::npos)
      << gpu.err;
  auto one = run_cli("collective dgx-h100 --gpus 3");
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_NE(one.err.find("--gpus: a collective needs at least 2 GPUs, got 1 ('3')"), std::string::npos) << one.err;
  auto zero = run_cli("collective dgx-h100 -b 0");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(zero.err.find("bad -b/--minbytes '0': must be at least 1 byte"), std::string::npos) << zero.err;
  auto big = run_cli("collective dgx-h100 -e 2T");
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.err.find("bad -e/--maxbytes '2T': too large"), std::string::npos) << big.err;
  auto nvls = run_cli("collective dgx-a100 --algo nvls");
  EXPECT_EQ(nvls.exit_code, 2);
  EXPECT_NE(nvls.err.find("algorithm 'nvls' cannot run all_reduce on these 8 GPUs"), std::string::npos) << nvls.err;
  auto preset = run_cli("collective dgx-h1000");
  EXPECT_EQ(preset.exit_code, 2);
}

}  // namespace
}  // namespace linkwise
