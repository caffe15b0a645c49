// The box as built: predictions on a probed chassis with one downtrained link use the trained rate
// by default and the design's with --as-designed.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "probe/testing/fixture.h"

namespace linkwise::testing {
namespace {

using probe::testing::SysfsFixture;

// The 8-GPU Gen4 server of build_pcie_server() with gpu0 (0000:1a:00.0, below the socket-0 switch)
// trained at Gen4 x8 instead of x16, written as a chassis by `probe -o`.
std::string probed_downtrained_server() {
  SysfsFixture fx(temp_dir());
  probe::testing::build_pcie_server(fx);
  fx.write(fx.device_dir("0000:1a:00.0") + "/current_link_width", "8\n");
  std::string out = temp_dir() + "/box.yaml";
  auto r = run_cli("probe --sysfs-root " + fx.root() + " -o " + out + " --name box");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

nlohmann::json run_json(const std::string& args) {
  auto r = run_cli(args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

double busbw(const std::string& args) {
  return run_json("collective " + args)["rows"][0]["busbw_GBps"].get<double>();
}

// gpu0's link, pcie4 (unit rate 1.9692 GB/s per lane: 16 GT/s x 128/130 / 8) at efficiency 0.7935
// (catalog.yaml pcie4): designed x16 31.508 x 0.7935 = 25.00 GB/s per direction, as built x8 15.754
// x 0.7935 = 12.50 GB/s. Every other link of the box is x16 at 25.00 GB/s or more.
constexpr double kDesignGBps = 1.9692307692 * 16 * 0.7935;  // 25.00
constexpr double kBuiltGBps = 1.9692307692 * 8 * 0.7935;    // 12.50
constexpr double kDuplex = 0.894;                           // catalog.yaml pcie4 duplex_efficiency
// NCCL's SMs write P2P and host-staged traffic in 128 B payloads: (128 / 152) / (256 / 280) of a
// PCIe link's copy-engine rate (comm transport_rules.h, sm_write_share).
constexpr double kSm = (128.0 / 152) / (256.0 / 280);
// What one NCCL channel moves through host memory, GB/s (comm nccl_channels.h).
constexpr double kShmChannels = 7.32;

// A 1 GiB all-reduce is bandwidth-bound: on 2 GPUs (busbw = algbw) under one switch, the ring's two
// flows each cross gpu0's link once per direction, so busbw is that link's rate for SM writes
// (x kSm) loaded both ways (x duplex_efficiency, which P2P over PCIe keeps per direction as SHM
// does: docs/collectives.md, "Both directions at once"); on all 8 with --algo ring, the ring's
// slowest link sets busbw the same way. Tolerance 1%: the fixed latency of ~20 steps is tens of
// microseconds against 43-91 ms.
TEST(AsBuiltCli, CollectiveUsesTheTrainedRateUnlessAsDesigned) {
  std::string box = probed_downtrained_server();
  EXPECT_NEAR(busbw(box + " --gpus 0,1 -b 1G -e 1G"), kBuiltGBps * kDuplex * kSm,
              0.01 * kBuiltGBps);
  EXPECT_NEAR(busbw(box + " --gpus 0,1 -b 1G -e 1G --as-designed"), kDesignGBps * kDuplex * kSm,
              0.01 * kDesignGBps);
  // On all 8 the ring's slowest link carries traffic both ways at once too: 10.29 as built, 20.59
  // designed; but the ring's hops between the switches are host-staged (SHM), and NCCL runs it on
  // 2 channels of 7.32 GB/s (comm nccl_channels.h): 14.64 as designed. With NCCL_MIN_NCHANNELS=8
  // the channels carry 58 GB/s and the link figure binds again.
  EXPECT_NEAR(busbw(box + " --algo ring -b 1G -e 1G"), kBuiltGBps * kDuplex * kSm,
              0.01 * kBuiltGBps);
  EXPECT_NEAR(busbw(box + " --algo ring -b 1G -e 1G --as-designed"), kShmChannels * 2,
              0.01 * kDesignGBps);
  EXPECT_NEAR(busbw(box + " --algo ring -b 1G -e 1G --as-designed --nccl NCCL_MIN_NCHANNELS=8"),
              kDesignGBps * kDuplex * kSm, 0.01 * kDesignGBps);
  // GPUs 2 and 3 do not use gpu0's link: the same figure either way.
  EXPECT_NEAR(busbw(box + " --gpus 2,3 -b 1G -e 1G"), kDesignGBps * kDuplex * kSm,
              0.01 * kDesignGBps);
  // The output says which.
  auto r = run_cli("collective " + box + " --gpus 0,1 -b 1G -e 1G");
  EXPECT_NE(
      flat(r.out).find(flat(
          "# links as built: sw0 - gpu0 trained at Gen4 x8 (designed pcie4 x16); these run at the "
          "trained rate (--as-designed for the design figures)\n")),
      std::string::npos)
      << r.out;
  auto d = run_cli("collective " + box + " --gpus 0,1 -b 1G -e 1G --as-designed");
  EXPECT_NE(
      flat(d.out).find(flat("# links as designed (--as-designed): sw0 - gpu0 trained at Gen4 x8 "
                            "(designed pcie4 x16) run "
                            "at the design rate, not the trained one\n")),
      std::string::npos)
      << d.out;
  // A preset records no trained state: no note.
  EXPECT_EQ(run_cli("collective pcie-8gpu-gen4 -b 1G -e 1G").out.find("links as"),
            std::string::npos);
}

// Llama 3 8B, dp=8 with ZeRO-2: compute is the same either way; every exposed communication is a
// collective over the 8-GPU ring whose slowest link is gpu0's, 10.29 GB/s busbw as built; as
// designed the ring is held to NCCL's 2 host-staged channels, 2 x 7.32 = 14.64 GB/s (the links
// would give 20.59). At these sizes (GBs) it is bandwidth-bound, so the exposed time grows as built
// by at most 14.64 / 10.29 = 1.42 (less where part of it overlaps compute either way).
TEST(AsBuiltCli, TrainUsesTheTrainedRateUnlessAsDesigned) {
  std::string box = probed_downtrained_server();
  const std::string job = "train " + box + " --model llama3-8b --plan tp=1,pp=1,dp=8,zero=2";
  auto built = run_json(job);
  auto designed = run_json(job + " --as-designed");
  EXPECT_DOUBLE_EQ(built["breakdown"]["compute_s"].get<double>(),
                   designed["breakdown"]["compute_s"].get<double>());
  for (const char* kind : {"dp", "zero"}) {
    double b = built["breakdown"]["exposed_comm_by_kind_s"][kind].get<double>();
    double d = designed["breakdown"]["exposed_comm_by_kind_s"][kind].get<double>();
    ASSERT_GT(d, 0) << kind;
    EXPECT_GT(b / d, 1.1) << kind;
    EXPECT_LT(b / d, 2 * kShmChannels / (kBuiltGBps * kDuplex * kSm) * 1.02) << kind;
  }
  EXPECT_GT(built["step_time_s"].get<double>(), designed["step_time_s"].get<double>());
  auto text = run_cli(job);
  EXPECT_NE(
      text.out.find("note: links as built: sw0 - gpu0 trained at Gen4 x8 (designed pcie4 x16)"),
      std::string::npos)
      << text.out;
}

// topo: pair bandwidths as built (gpu0's pairs at the x8 line rate 15.8 GB/s), as designed 31.5.
TEST(AsBuiltCli, TopoPairBandwidthAsBuiltAndAsDesigned) {
  std::string box = probed_downtrained_server();
  auto r = run_cli("topo " + box);
  EXPECT_NE(r.out.find("GPU0-GPU1  PIX         15.8           15.8     2"), std::string::npos)
      << r.out;
  EXPECT_NE(flat(r.out).find(
                flat("[trained-below-spec] link sw0 - gpu0 trained at Gen4 x8, designed pcie4 "
                     "x16; figures here "
                     "use the trained rate (--as-designed: the design's)")),
            std::string::npos)
      << r.out;
  auto d = run_cli("topo " + box + " --as-designed");
  EXPECT_NE(d.out.find("GPU0-GPU1  PIX         31.5           31.5     2"), std::string::npos)
      << d.out;
}

// An idle GPU (full width, low speed) is not recorded as trained lower: its link keeps the design
// rate.
TEST(AsBuiltCli, IdleGpuSpeedIsNotRecordedAsTrained) {
  SysfsFixture fx(temp_dir());
  probe::testing::build_pcie_server(fx);  // gpu1 idles at 2.5 GT/s x16
  std::string out = temp_dir() + "/idle.yaml";
  ASSERT_EQ(run_cli("probe --sysfs-root " + fx.root() + " -o " + out).exit_code, 0);
  EXPECT_EQ(run_cli("topo " + out).out.find("trained-below-spec"), std::string::npos);
}

// The CPU Affinity column of a probed box is the probed cpulist of its NUMA node (SMT siblings and
// all, as numactl --physcpubind and taskset -c take it), not a range made from the part's core
// count: the fixture gives each socket 4 CPUs, 0-3 and 4-7.
TEST(AsBuiltCli, ProbedCpuAffinityIsTheNodesCpulist) {
  std::string box = probed_downtrained_server();
  auto j = run_json("topo " + box);
  ASSERT_TRUE(j.contains("gpus")) << j.dump();
  EXPECT_EQ(j["gpus"][0]["cpu_affinity"], "0-3");
  EXPECT_EQ(j["gpus"][7]["cpu_affinity"], "4-7");
  // Anything but a Linux CPU list is an input error (it is printed for numactl).
  std::ifstream in(box);
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto at = yaml.find("cpulist: 0-3");
  ASSERT_NE(at, std::string::npos) << yaml;
  yaml.replace(at, 12, "cpulist: 0-3;x");
  std::string bad = temp_dir() + "/bad.yaml";
  std::ofstream(bad) << yaml;
  auto r = run_cli("topo " + bad);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'cpulist' must be a Linux CPU list such as 0-55,112-167, not '0-3;x'"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace linkwise::testing
