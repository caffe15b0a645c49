// linkwise collective: output, JSON shape, and bad input (exit code 2 with the exact message).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"

namespace linkwise {
namespace {

using testing::flat;
using testing::run_cli;

TEST(CollectiveCli, TablePrintsNcclTestsColumnsAndTheBound) {
  auto r = run_cli("collective dgx-h100 -b 8 -e 8G -f 1024");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("#       size         count      type   redop    root     time   algbw"),
            std::string::npos);
  EXPECT_NE(r.out.find("# Avg bus bandwidth    : "), std::string::npos);
  EXPECT_NE(r.out.find("# ring 0: GPU0 GPU1 GPU2 GPU3 GPU4 GPU5 GPU6 GPU7"), std::string::npos);
  EXPECT_NE(r.out.find("# bound: busbw <="), std::string::npos);
  EXPECT_NE(r.out.find("8589934592"), std::string::npos);
  EXPECT_NE(r.out.find("nvls/Simple"), std::string::npos);  // 8G on 8 H100: NVLS wins
  EXPECT_NE(r.out.find("ring/LL"), std::string::npos);      // 8 B: ring LL wins
}

TEST(CollectiveCli, NcclTestsFlagsMeanWhatTheyMeanThere) {
  // -o is the reduction, as in nccl-tests; -d the type; -g the first N GPUs; -n/-w accepted.
  auto r = run_cli("collective dgx-h100 -o max -d half -g 4 -b 1M -e 1M -n 20 -w 5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("     1048576        524288      half     max      -1"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# -n and -w (iterations, warm-up) only time real runs"), std::string::npos);
  EXPECT_NE(r.out.find("(4 GPUs)"), std::string::npos);
  // Non-reductions print redop "none"; broadcast prints its root.
  auto b = run_cli("collective dgx-h100 --collective broadcast_perf -r 3 -b 1M -e 1M");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.out.find("     1048576        262144     float    none       3"), std::string::npos)
      << b.out;
  // The collective given to -o, as linkwise's --op took it before: exit 2 pointing to --collective.
  auto old = run_cli("collective dgx-h100 --op all_gather");
  EXPECT_EQ(old.exit_code, 2);
  EXPECT_NE(old.err.find("-o/--op is the reduction, as in nccl-tests (sum, prod, min, max, avg), "
                         "not 'all_gather': name the collective with --collective all_gather"),
            std::string::npos)
      << old.err;
  auto sum = run_cli("collective dgx-h100 -o summ");
  EXPECT_EQ(sum.exit_code, 2);
  EXPECT_NE(sum.err.find("-o/--op: unknown reduction 'summ'"), std::string::npos) << sum.err;
}

TEST(CollectiveCli, CalibrateReadsItsOutputAndRealLogs) {
  const std::string out = std::string(::testing::TempDir()) + "/lw_all_gather_perf.log";
  auto c = run_cli("collective dgx-h100 --collective all_gather -b 1M -e 1G -f 32 --output " + out);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  // The model held against itself: every figure within the printed resolution.
  auto self = run_cli("calibrate dgx-h100 " + out + " --json");
  ASSERT_EQ(self.exit_code, 0) << self.err;
  auto j = nlohmann::json::parse(self.out);
  ASSERT_EQ(j["entries"].size(), 3u) << self.out;  // 1M, 32M, 1G
  for (const auto& e : j["entries"]) {
    EXPECT_FALSE(e["flagged"].get<bool>()) << e;
    EXPECT_NEAR(e["error"].get<double>(), 0, 0.1) << e;  // percent: 0.01 GB/s printed
  }
  auto real = run_cli("calibrate dgx-h100 " + std::string(LINKWISE_SOURCE_DIR) +
                      "/tests/data/nccl-tests/all_reduce_perf_dgx-h100.log");
  ASSERT_EQ(real.exit_code, 0) << real.err;
  EXPECT_NE(real.out.find("8G           475.61"), std::string::npos) << real.out;
}

TEST(CollectiveCli, JsonShape) {
  auto r = run_cli("collective dgx-a100 --collective all_gather --gpus 0-3 -b 1M -e 4M --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["op"], "all_gather");
  EXPECT_EQ(j["ranks"], 4);
  ASSERT_EQ(j["rows"].size(), 3u);  // 1M, 2M, 4M
  EXPECT_EQ(j["rows"][0]["bytes"], 1048576.0);
  EXPECT_EQ(j["rows"][0]["count"],
            65536.0);  // per rank: 1M / 4 bytes / 4 ranks, as nccl-tests prints
  for (const auto& row : j["rows"]) {
    EXPECT_GT(row["time_us"].get<double>(), 0);
    // busbw = algbw x (n-1)/n for all-gather
    EXPECT_NEAR(row["busbw_GBps"].get<double>(), row["algbw_GBps"].get<double>() * 0.75, 1e-9);
    EXPECT_TRUE(row["algorithm"].is_string());
  }
  EXPECT_GT(j["bound_busbw_GBps"].get<double>(), 0);
}

TEST(CollectiveCli, SendRecvAndNodes) {
  auto r = run_cli("collective dgx-h100 --collective sendrecv --gpus 0,1 -b 1G -e 1G --json");
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
  auto op = run_cli("collective dgx-h100 --collective allreduse");
  EXPECT_EQ(op.exit_code, 2);
  EXPECT_NE(op.err.find("unknown collective operation 'allreduse' (did you mean 'all_reduce'"),
            std::string::npos)
      << op.err;
  auto gpu = run_cli("collective dgx-h100 --gpus 0,9");
  EXPECT_EQ(gpu.exit_code, 2);
  EXPECT_NE(gpu.err.find("--gpus: GPU9 is not in chassis 'dgx-h100', which has GPU0 to GPU7"),
            std::string::npos)
      << gpu.err;
  auto one = run_cli("collective dgx-h100 --gpus 3");
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_NE(one.err.find("--gpus: a collective needs at least 2 GPUs, got 1 ('3')"),
            std::string::npos)
      << one.err;
  auto zero = run_cli("collective dgx-h100 -b 0");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(zero.err.find("bad -b/--minbytes '0': must be at least 1 byte"), std::string::npos)
      << zero.err;
  auto big = run_cli("collective dgx-h100 -e 2T");
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.err.find("bad -e/--maxbytes '2T': too large"), std::string::npos) << big.err;
  auto nvls = run_cli("collective dgx-a100 --algo nvls");
  EXPECT_EQ(nvls.exit_code, 2);
  EXPECT_NE(nvls.err.find("algorithm 'nvls' cannot run all_reduce on these 8 GPUs"),
            std::string::npos)
      << nvls.err;
  auto preset = run_cli("collective dgx-h1000");
  EXPECT_EQ(preset.exit_code, 2);
}

TEST(CollectiveCli, StepFactorIsAWholeNumberAndRowsAreCapped) {
  auto frac = run_cli("collective dgx-h100 -b 8 -e 8G -f 1.0000001");  // used to build ~2e8 sizes
  EXPECT_EQ(frac.exit_code, 2);
  EXPECT_NE(frac.err.find("-f/--stepfactor must be a whole number of at least 2, not '1.0000001'"),
            std::string::npos)
      << frac.err;
  auto one = run_cli("collective dgx-h100 -f 1");
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_NE(one.err.find("-f/--stepfactor must be a whole number of at least 2, not '1'"),
            std::string::npos)
      << one.err;
  auto many = run_cli("collective dgx-h100 -b 8 -e 8G -i 1");
  EXPECT_EQ(many.exit_code, 2);
  EXPECT_NE(
      many.err.find(
          "-b 8 -e 8G -i 1 makes 8589934585 sizes; the most is 10000 (use a larger -i, or -f)"),
      std::string::npos)
      << many.err;
  auto both = run_cli("collective dgx-h100 -f 2 -i 1M");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("give -f/--stepfactor or -i/--stepbytes, not both"), std::string::npos)
      << both.err;
  // -i steps by bytes: 1M, 2M, 3M, 4M.
  auto step = run_cli("collective dgx-h100 -b 1M -e 4M -i 1M --json");
  ASSERT_EQ(step.exit_code, 0) << step.err;
  auto j = nlohmann::json::parse(step.out);
  ASSERT_EQ(j["rows"].size(), 4u);
  EXPECT_EQ(j["rows"][2]["bytes"], 3u << 20);
  // -f 3 from 8: 8, 24, 72, 216.
  auto three = run_cli("collective dgx-h100 -b 8 -e 300 -f 3 --json");
  ASSERT_EQ(three.exit_code, 0) << three.err;
  auto k = nlohmann::json::parse(three.out);
  ASSERT_EQ(k["rows"].size(), 4u);
  EXPECT_EQ(k["rows"][3]["bytes"], 216u);
}

TEST(CollectiveCli, SizesAreWholeElementsAsNcclTestsCountsThem) {
  // Under one double: nothing to run.
  auto tiny = run_cli("collective dgx-h100 --dtype double -b 7 -e 7");
  EXPECT_EQ(tiny.exit_code, 2);
  EXPECT_NE(tiny.err.find("-b 7 -e 7: no size holds one double (8 bytes); use -b 8 or more"),
            std::string::npos)
      << tiny.err;
  // 1, 3, 9, 27, 81 bytes of doubles: 0, 0, 8, 24, 80; the first two left out, with a note.
  auto r = run_cli("collective dgx-h100 --dtype double -b 1 -e 100 -f 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(flat(r.out).find(flat(
                "# sizes rounded down to whole elements (8 bytes: one double), as nccl-tests does; "
                "3 of 5 sizes remain")),
            std::string::npos)
      << r.out;
  // All-gather counts per rank: on 3 GPUs a float size is a multiple of 12 bytes; count = S / 12.
  auto ag =
      run_cli("collective dgx-h100 --gpus 0,2,5 --collective all_gather -b 1000 -e 1000 --json");
  ASSERT_EQ(ag.exit_code, 0) << ag.err;
  auto j = nlohmann::json::parse(ag.out);
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["rows"][0]["bytes"], 996u);
  EXPECT_EQ(j["rows"][0]["count"], 83u);
  auto under = run_cli("collective dgx-h100 --collective reduce_scatter -b 16 -e 16");
  EXPECT_EQ(under.exit_code, 2);
  EXPECT_NE(
      under.err.find(
          "-b 16 -e 16: no size holds one float per rank on 8 GPUs (32 bytes); use -b 32 or more"),
      std::string::npos)
      << under.err;
}

TEST(CollectiveCli, JsonHasIntegersAndNamesOnly) {
  auto r = run_cli("collective dgx-h100 -b 8G -e 8G --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto row = nlohmann::json::parse(r.out)["rows"][0];
  EXPECT_TRUE(row["bytes"].is_number_integer());
  EXPECT_TRUE(row["count"].is_number_integer());
  EXPECT_EQ(row["bytes"], 8589934592u);
  EXPECT_EQ(row["count"], 2147483648u);
  // NVLS at 8G loads every GPU's 18 NVLinks both ways on 4 switches: 64 link directions saturated.
  ASSERT_EQ(row["bottlenecks"].size(), 3u);
  for (const auto& b : row["bottlenecks"])
    EXPECT_EQ(b.get<std::string>().find("more"), std::string::npos) << b;
  EXPECT_EQ(row["saturated_resources"], 64);
  auto t = run_cli("collective dgx-h100 -b 8G -e 8G");
  EXPECT_NE(
      t.out.find(
          "# limited by (largest size, fullest first): gpu0->nvsw1, nvsw1->gpu0, gpu0->nvsw2, "
          "(+61 more)"),
      std::string::npos)
      << t.out;
}

TEST(CollectiveCli, AlgorithmRefusalsSayWhy) {
  auto ag = run_cli("collective dgx-h100 --algo nvls --collective all_gather");
  EXPECT_EQ(ag.exit_code, 2);
  EXPECT_NE(ag.err.find("algorithm 'nvls' cannot run all_gather on these 8 GPUs (NVLS is modelled "
                        "for all_reduce only)"),
            std::string::npos)
      << ag.err;
  auto boxes = run_cli("collective dgx-h100 --nodes 2 --algo nvls");
  EXPECT_EQ(boxes.exit_code, 2);
  EXPECT_NE(
      boxes.err.find(
          "algorithm 'nvls' cannot run all_reduce on these 16 GPUs (NVLS across boxes (NVLS tree) "
          "is not modelled)"),
      std::string::npos)
      << boxes.err;
  auto a100 = run_cli("collective dgx-a100 --algo nvls");
  EXPECT_NE(a100.err.find("(NVLS needs all ranks on NVSwitches that reduce in-network)"),
            std::string::npos)
      << a100.err;
  auto ring = run_cli("collective dgx-h100 --algo ring --collective alltoall");
  EXPECT_EQ(ring.exit_code, 2);
  EXPECT_NE(ring.err.find("algorithm 'ring' cannot run alltoall on these 8 GPUs (ring does not run "
                          "alltoall in this "
                          "model; NCCL runs it as direct peer transfers (--algo direct))"),
            std::string::npos)
      << ring.err;
  auto hier = run_cli("collective dgx-h100 --algo hierarchical");
  EXPECT_NE(hier.err.find("(hierarchical needs ranks in several boxes)"), std::string::npos)
      << hier.err;
}

TEST(CollectiveCli, EmptyGpuListIsAnError) {
  auto r = run_cli("collective dgx-h100 --gpus ''");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--gpus: empty list; give GPUs such as 0,1,2,3 or 0-3, or leave --gpus out "
                       "for every GPU"),
            std::string::npos)
      << r.err;
  auto comma = run_cli("collective dgx-h100 --gpus 0,1,");
  EXPECT_EQ(comma.exit_code, 2);
  EXPECT_NE(comma.err.find("--gpus: '' in '0,1,' is not a GPU number"), std::string::npos)
      << comma.err;
}

TEST(CollectiveCli, ManyBoxes) {
  // 128 DGX H100 (1024 GPUs): the cut bound is solved per box (one box and the network switch).
  auto r = run_cli("collective dgx-h100 --nodes 128 -b 1G -e 1G --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"], 1024);
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_GT(j["rows"][0]["busbw_GBps"].get<double>(), 0);
  EXPECT_LE(j["rows"][0]["ratio_to_bound"].get<double>(), 1.0);
}

TEST(CollectiveCli, OneShmChannelNamedInTheSingular) {
  // NCCL_MAX_NCHANNELS=1 on the Azure A100 VM (every ring hop through host memory): one channel.
  const std::string vm = "collective " + testing::source_dir() +
                         "/examples/validation/azure-nc96ads-a100-v4.yaml -b 1G -e 1G";
  auto r = run_cli(vm + " --nccl NCCL_MAX_NCHANNELS=1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("limited by (largest size, fullest first): 1 SHM channel\n"),
            std::string::npos)
      << r.out;
  r = run_cli(vm);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("4 SHM channels"), std::string::npos) << r.out;
}

}  // namespace
TEST(CollectiveCli, NcclSettingsAndTheChoice) {
  // NCCL_P2P_DISABLE=1 on the PCIe server stages every hop through host memory: slower than P2P.
  auto p2p = run_cli("collective pcie-8gpu-gen4 -b 1G -e 1G --json");
  auto shm = run_cli("collective pcie-8gpu-gen4 -b 1G -e 1G --json --nccl NCCL_P2P_DISABLE=1");
  ASSERT_EQ(p2p.exit_code, 0) << p2p.err;
  ASSERT_EQ(shm.exit_code, 0) << shm.err;
  EXPECT_NE(p2p.out, shm.out);
  EXPECT_NE(shm.out.find("\"choice\""), std::string::npos);
  auto table = run_cli("collective workstation-4gpu-nvlink -b 1G -e 1G");
  EXPECT_NE(table.out.find("# chosen (largest size): NCCL's tuner model: ring/Simple"),
            std::string::npos)
      << table.out;
  auto best = run_cli("collective workstation-4gpu-nvlink -b 1G -e 1G --algo best");
  EXPECT_NE(best.out.find("the fastest schedule the flow model finds"), std::string::npos)
      << best.out;
  // A setting NCCL does not have, or a value it does not take: the flag, the setting, the value,
  // exit 2.
  auto bad = run_cli("collective pcie-8gpu-gen4 --nccl NCCL_P2P_LEVEL=PCI");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--nccl: NCCL_P2P_LEVEL=PCI: not a level NCCL has"), std::string::npos)
      << bad.err;
  auto unknown = run_cli("collective pcie-8gpu-gen4 --nccl NCCL_FOO=1");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown NCCL setting 'NCCL_FOO'"), std::string::npos) << unknown.err;
}

}  // namespace linkwise
