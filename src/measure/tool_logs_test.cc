// nvbandwidth and p2pBandwidthLatencyTest output read as measurements. The logs below are written
// for these tests in each tool's printed layout (nvbandwidth output.cpp and the PeerValueMatrix
// printer: "%10" columns, N/A, a SUM line; p2pBandwidthLatencyTest: "   D\D" then "%6d " and
// "%6.02f " columns), with figures of an 8-GPU H100 box rounded by hand.
#include <gtest/gtest.h>

#include "linkwise/util/error.h"
#include "measure/nvbandwidth_log.h"
#include "measure/p2p_matrix_log.h"

namespace linkwise::measure::detail {
namespace {

const char* kNvbandwidth =
    "nvbandwidth Version: v0.7\n"
    "Built from Git version: v0.7\n"
    "\n"
    "CUDA Runtime Version: 12040\n"
    "Device 0: NVIDIA H100 80GB HBM3 (00000000:1b:00)\n"
    "Device 1: NVIDIA H100 80GB HBM3 (00000000:43:00)\n"
    "\n"
    "Running host_to_device_memcpy_ce.\n"
    "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
    "           0         1\n"
    " 0     55.21     55.18\n"
    "\n"
    "SUM host_to_device_memcpy_ce 110.39\n"
    "\n"
    "Running device_to_host_bidirectional_memcpy_ce.\n"
    "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)\n"
    "           0         1\n"
    " 0     48.00     47.50\n"
    "\n"
    "SUM device_to_host_bidirectional_memcpy_ce 95.50\n"
    "\n"
    "Running device_to_device_memcpy_read_ce.\n"
    "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)\n"
    "           0         1\n"
    " 0       N/A    376.40\n"
    " 1    377.02       N/A\n"
    "\n"
    "SUM device_to_device_memcpy_read_ce 753.42\n"
    "\n"
    "Running all_to_host_memcpy_ce.\n"
    "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)\n"
    "           0         1\n"
    " 0     27.10     27.08\n"
    "\n"
    "SUM all_to_host_memcpy_ce 54.18\n";

TEST(NvbandwidthLog, ReadsEachTestcaseAsTheKindItMeasures) {
  ASSERT_TRUE(is_nvbandwidth_log(kNvbandwidth));
  auto f = parse_nvbandwidth_log(kNvbandwidth, "nvb.txt");
  EXPECT_EQ(f.tool, "nvbandwidth v0.7");
  ASSERT_EQ(f.measurements.size(), 6u);
  const auto& h = f.measurements[0];
  EXPECT_EQ(h.kind, "h2d");
  EXPECT_EQ(h.gpus, std::vector<int>{0});
  EXPECT_EQ(h.engine, "ce");
  EXPECT_DOUBLE_EQ(h.measured_GBps, 55.21);
  EXPECT_EQ(h.where.line, 11);
  EXPECT_EQ(f.measurements[1].gpus, std::vector<int>{1});
  // The bidirectional CE figure is the measured direction alone: doubled, 2 x 48.00.
  const auto& b = f.measurements[2];
  EXPECT_EQ(b.kind, "bidir");
  EXPECT_DOUBLE_EQ(b.measured_GBps, 96.0);
  EXPECT_NE(b.note.find("printed 48.00 GB/s"), std::string::npos) << b.note;
  // Reads: "GPU(row) <- GPU(column)", the data moves from the column GPU to the row GPU.
  const auto& r = f.measurements[4];
  EXPECT_EQ(r.kind, "p2p");
  EXPECT_EQ(r.gpus, (std::vector<int>{1, 0}));
  EXPECT_DOUBLE_EQ(r.measured_GBps, 376.40);
  EXPECT_EQ(r.source, "nvbandwidth device_to_device_memcpy_read_ce");
  EXPECT_EQ(f.measurements[5].gpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(f.extra["skipped_testcases"], nlohmann::json::array({"all_to_host_memcpy_ce"}));
}

TEST(NvbandwidthLog, BadMatricesAreInputErrorsWithTheirLine) {
  std::string t =
      "Running host_to_device_memcpy_ce.\n"
      "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
      "           0         1\n"
      " 0     55.21\n";
  try {
    parse_nvbandwidth_log(t, "nvb.txt");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "nvb.txt:4: a matrix row of 1 figure(s) under 2 column(s)");
  }
  t = "Running host_to_device_memcpy_ce.\n"
      "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
      "           0\n"
      " 0     fast\n";
  EXPECT_THROW(parse_nvbandwidth_log(t, "nvb.txt"), InputError);
  t = "Running host_device_latency_sm.\n"
      "memcpy SM CPU(row) <-> GPU(column) bandwidth (GB/s)\n"
      "           0\n"
      " 0     1.00\n";
  EXPECT_THROW(parse_nvbandwidth_log(t, "nvb.txt"), InputError);
  EXPECT_FALSE(is_nvbandwidth_log("{\"measurements\": []}"));
}

const char* kP2p =
    "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n"
    "Device: 0, NVIDIA A100-PCIE-40GB, pciBusID: 1b, pciDeviceID: 0, pciDomainID:0\n"
    "Device: 1, NVIDIA A100-PCIE-40GB, pciBusID: 1c, pciDeviceID: 0, pciDomainID:0\n"
    "Device=0 CAN Access Peer Device=1\n"
    "Device=1 CAN Access Peer Device=0\n"
    "P2P Connectivity Matrix\n"
    "     D\\D     0     1\n"
    "     0\t     1     1\n"
    "     1\t     1     1\n"
    "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n"
    "   D\\D     0      1 \n"
    "     0 1290.50  17.90 \n"
    "     1  18.02 1295.10 \n"
    "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n"
    "   D\\D     0      1 \n"
    "     0 1289.90  24.60 \n"
    "     1  24.70 1296.00 \n"
    "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n"
    "   D\\D     0      1 \n"
    "     0 1310.00  44.10 \n"
    "     1  44.30 1312.40 \n"
    "P2P=Enabled Latency (P2P Writes) Matrix (us)\n"
    "   GPU     0      1 \n"
    "     0   2.10   1.90 \n"
    "     1   1.95   2.05 \n";

TEST(P2pMatrixLog, ReadsBandwidthMatricesNotLatency) {
  ASSERT_TRUE(is_p2p_matrix_log(kP2p));
  EXPECT_FALSE(is_nvbandwidth_log(kP2p));
  auto f = parse_p2p_matrix_log(kP2p, "p2p.txt");
  ASSERT_EQ(f.measurements.size(), 6u);  // diagonals and latencies left out
  const auto& off = f.measurements[0];
  EXPECT_EQ(off.kind, "p2p");
  EXPECT_FALSE(off.peer_access);
  EXPECT_EQ(off.gpus, (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(off.measured_GBps, 17.90);
  EXPECT_EQ(off.where.line, 12);
  const auto& on = f.measurements[3];
  EXPECT_TRUE(on.peer_access);
  EXPECT_EQ(on.gpus, (std::vector<int>{1, 0}));
  EXPECT_DOUBLE_EQ(on.measured_GBps, 24.70);
  const auto& bi = f.measurements[4];
  EXPECT_EQ(bi.kind, "p2p_bidir");
  EXPECT_DOUBLE_EQ(bi.measured_GBps, 44.10);  // already the sum of both directions
}

TEST(P2pMatrixLog, ReadsAreFromColumnToRowAndBadRowsThrow) {
  std::string t =
      "Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix (GB/s)\n"
      "   D\\D     0      1 \n"
      "     0 1289.90  24.60 \n"
      "     1  24.70 1296.00 \n";
  auto f = parse_p2p_matrix_log(t, "p2p.txt");
  ASSERT_EQ(f.measurements.size(), 2u);
  EXPECT_EQ(f.measurements[0].gpus, (std::vector<int>{1, 0}));
  t = "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n"
      "   D\\D     0      1 \n"
      "     0 1289.90  24.60  3.00\n";
  try {
    parse_p2p_matrix_log(t, "p2p.txt");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "p2p.txt:3: a matrix row of 3 figure(s) under 2 column(s)");
  }
}

}  // namespace
}  // namespace linkwise::measure::detail
