// A probed box as nvidia-smi and the field see it, end to end on the CLI: sub-NUMA clustering in
// the topology matrix and affinities, XID events in `probe --check`, nvbandwidth and
// p2pBandwidthLatencyTest output read by `calibrate`, and the NCCL topology export of a probed box.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"
#include "probe/testing/fixture.h"

namespace linkwise::testing {
namespace {

using probe::testing::SysfsFixture;

// The line of `out` that starts with `head`, without its newline; "" when none does.
// The line that starts with `head`, its continuation lines (wrapped at 100 columns, indented)
// joined back with single spaces; a finding's "at" and "->" detail lines are not part of it.
std::string line_of(const std::string& out, const std::string& head) {
  auto p = out.find(head);
  if (p == std::string::npos) return "";
  auto e = out.find('\n', p);
  std::string line = out.substr(p, e - p);
  while (e != std::string::npos && out.compare(e + 1, 4, "    ") == 0) {
    auto next = out.find('\n', e + 1);
    std::string cont = out.substr(e + 1, next == std::string::npos ? next : next - e - 1);
    cont = cont.substr(cont.find_first_not_of(' '));
    if (cont.rfind("at ", 0) == 0 || cont.rfind("-> ", 0) == 0) break;
    line += " " + cont;
    e = next;
  }
  return line;
}

std::string probed(SysfsFixture& fx, const std::string& name) {
  std::string out = fx.root() + "/" + name + ".yaml";
  auto r = run_cli("probe --sysfs-root " + fx.root() + " -o " + out + " --name " + name);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

// Sub-NUMA clustering: the 8-GPU server with two NUMA nodes per socket, each switch on its own
// (gpu0-1 node 0, gpu2-3 node 1, gpu4-5 node 2, gpu6-7 node 3). nvidia-smi topo -m's legend: NODE
// is "within a NUMA node", SYS "between NUMA nodes", so gpu0-gpu2 (one socket, two nodes) is SYS
// where the same box without SNC prints NODE. Each GPU's CPU and NUMA affinity are its own node's
// (node1's CPUs: cores 4-7 and their SMT siblings 20-23, as node1/cpulist lists them).
TEST(FieldCli, SubNumaClusteringIsSysBetweenNodesAsNvidiaSmiPrintsIt) {
  SysfsFixture snc(temp_dir());
  probe::testing::build_pcie_server(snc, true);
  auto r = run_cli("topo " + probed(snc, "snc") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["matrix"]["GPU0"]["GPU1"], "PIX");
  EXPECT_EQ(j["matrix"]["GPU0"]["GPU2"], "SYS");
  EXPECT_EQ(j["matrix"]["GPU0"]["GPU4"], "SYS");
  EXPECT_EQ(j["matrix"]["GPU4"]["GPU6"], "SYS");
  const std::pair<int, const char*> kAffinity[] = {
      {0, "0-3,16-19"},  {1, "0-3,16-19"},  {1, "4-7,20-23"},   {1, "4-7,20-23"},
      {2, "8-11,24-27"}, {2, "8-11,24-27"}, {3, "12-15,28-31"}, {3, "12-15,28-31"}};
  for (int g = 0; g < 8; ++g) {
    EXPECT_EQ(j["gpus"][g]["numa"], g / 2) << g;
    EXPECT_EQ(j["gpus"][g]["cpu_affinity"], kAffinity[g].second) << g;
  }
  // Held against its design (one NUMA node per socket), the 18 pairs that crossed host bridges of
  // one node and now cross two nodes of one socket (per socket: gpu0/1-gpu2/3, gpu0/1-nvme0,
  // nic0-gpu2/3, nic0-nvme0) are one warning, not 18 wiring faults.
  auto c = run_cli("probe --check --sysfs-root " + snc.root() + " --expect pcie-8gpu-gen4");
  EXPECT_EQ(c.exit_code, 0) << c.out;
  EXPECT_EQ(
      line_of(c.out, "warning sub-numa-clustering:"),
      "warning sub-numa-clustering: 18 device pair(s) designed NODE are SYS (e.g. GPU0-GPU2): "
      "one socket, two of its NUMA nodes. Sub-NUMA clustering (SNC/NPS) is on, a BIOS "
      "setting, not other wiring")
      << c.out;
  EXPECT_EQ(c.out.find("differs-from-design"), std::string::npos) << c.out;
  // The same box without sub-NUMA clustering: one node per socket, gpu0-gpu2 NODE.
  SysfsFixture plain(temp_dir());
  probe::testing::build_pcie_server(plain);
  auto p = nlohmann::json::parse(run_cli("topo " + probed(plain, "plain") + " --json").out);
  EXPECT_EQ(p["matrix"]["GPU0"]["GPU2"], "NODE");
  EXPECT_EQ(p["gpus"][2]["cpu_affinity"], "0-3");
}

// XID events as the kernel logs them, read from dev/kmsg below the root (/dev/kmsg on the machine).
TEST(FieldCli, XidEventsFromTheKernelLog) {
  SysfsFixture fx(temp_dir());
  probe::testing::build_pcie_server(fx);
  fx.write("dev/kmsg",
           "4,1201,812402311,-;NVRM: Xid (PCI:0000:1a:00): 79, pid=2291, name=python3, GPU has "
           "fallen off the bus.\n"
           "6,1202,812402400,-;NVRM: GPU 0000:1a:00.0: GPU has fallen off the bus.\n"
           "4,1250,912044551,-;NVRM: Xid (PCI:0000:3e:00): 13, pid=3310, name=train, Graphics "
           "SM Warp Exception on (GPC 1, TPC 0, SM 1): Out Of Range Address\n"
           "4,1301,992044551,-;NVRM: Xid (PCI:0000:1a:00): 79, pid=2291, name=python3, GPU has "
           "fallen off the bus.\n");
  auto r = run_cli("probe --check --sysfs-root " + fx.root());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_of(r.out, "fault   gpu-xid:"),
            "fault   gpu-xid: gpu0 0000:1a:00.0: XID 79 (GPU has fallen off the bus), 2 event(s) "
            "in the kernel log; last: \"GPU has fallen off the bus.\"");
  EXPECT_EQ(line_of(r.out, "warning gpu-xid:"),
            "warning gpu-xid: gpu3 0000:3e:00.0: XID 13 (graphics engine exception), 1 event(s) "
            "in the kernel log; last: \"Graphics SM Warp Exception on (GPC 1, TPC 0, SM 1): Out Of "
            "Range Address\"");
  EXPECT_NE(r.out.find("        -> reboot; check the slot, riser, power cables and cooling"),
            std::string::npos)
      << r.out;
  // Besides XID 13: gpu1 idles (link-speed-idle), four GPUs have no NIC beside them.
  EXPECT_NE(r.out.find("UNHEALTHY: 1 fault(s), 6 warning(s)"), std::string::npos) << r.out;
  // Without a kernel log to read, the check says so (an info) and does not guess.
  SysfsFixture quiet(temp_dir());
  probe::testing::build_pcie_server(quiet);
  auto q = run_cli("probe --check --sysfs-root " + quiet.root());
  EXPECT_EQ(q.exit_code, 0) << q.out;
  EXPECT_EQ(line_of(q.out, "info    xid-not-read:"), "info    xid-not-read: XID events not read: " +
                                                         quiet.root() + "/dev/kmsg: not present");
}

// nvbandwidth output as printed (output.cpp; the matrix printer's %10 columns, N/A, SUM lines),
// written for this test. On pcie-8gpu-gen4, gpu0 and gpu1 share a PEX88096 switch with Gen4 x16
// links: pcie4 at 16 GT/s x 128/130 / 8 = 1.9692 GB/s per lane x 16 = 31.51 GB/s line rate x
// efficiency 0.7935 (catalog.yaml pcie4) = 25.00 GB/s, the p2p prediction.
TEST(FieldCli, CalibrateReadsNvbandwidthOutput) {
  std::string dir = temp_dir();
  std::ofstream(dir + "/nvb.txt") << "nvbandwidth Version: v0.7\n"
                                     "\n"
                                     "Running host_to_device_memcpy_ce.\n"
                                     "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
                                     "           0         1\n"
                                     " 0     24.31     24.28\n"
                                     "\n"
                                     "SUM host_to_device_memcpy_ce 48.59\n"
                                     "\n"
                                     "Running device_to_device_memcpy_write_ce.\n"
                                     "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n"
                                     "           0         1\n"
                                     " 0       N/A     24.60\n"
                                     " 1     24.55       N/A\n"
                                     "\n"
                                     "SUM device_to_device_memcpy_write_ce 49.15\n";
  auto r = run_cli("calibrate pcie-8gpu-gen4 " + dir + "/nvb.txt --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["entries"].size(), 4u) << r.out;
  const auto& p2p = j["entries"][2];
  EXPECT_EQ(p2p["kind"], "p2p");
  EXPECT_EQ(p2p["gpus"], nlohmann::json::array({0, 1}));
  EXPECT_EQ(p2p["source"], "nvbandwidth device_to_device_memcpy_write_ce");
  EXPECT_NEAR(p2p["predicted_GBps"].get<double>(), 1.9692307692 * 16 * 0.7935, 0.01);
  // A malformed matrix is bad input: exit 2 with the file and line.
  std::ofstream(dir + "/bad.txt") << "Running host_to_device_memcpy_ce.\n"
                                     "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
                                     "           0         1\n"
                                     " 0     24.31     lots\n";
  auto b = run_cli("calibrate pcie-8gpu-gen4 " + dir + "/bad.txt");
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find(dir + "/bad.txt:4: 'lots' is neither a figure (GB/s) nor N/A"),
            std::string::npos)
      << b.err;
}

// p2pBandwidthLatencyTest output as printed ("   D\D" then "%6d " and "%6.02f " columns).
TEST(FieldCli, CalibrateReadsP2pBandwidthLatencyTestOutput) {
  std::string dir = temp_dir();
  std::ofstream(dir + "/p2p.txt") << "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n"
                                     "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix "
                                     "(GB/s)\n"
                                     "   D\\D     0      1 \n"
                                     "     0 1289.90  24.60 \n"
                                     "     1  24.70 1296.00 \n"
                                     "P2P=Enabled Latency (P2P Writes) Matrix (us)\n"
                                     "   GPU     0      1 \n"
                                     "     0   2.10   1.90 \n"
                                     "     1   1.95   2.05 \n";
  auto r = run_cli("calibrate pcie-8gpu-gen4 " + dir + "/p2p.txt --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["entries"].size(), 2u) << r.out;
  EXPECT_EQ(j["entries"][1]["gpus"], nlohmann::json::array({1, 0}));
  EXPECT_NEAR(j["entries"][1]["predicted_GBps"].get<double>(), 1.9692307692 * 16 * 0.7935, 0.01);
}

// The NCCL topology of a probed box with gpu0 trained at x8: its pci element says link_width="8"
// (as NCCL reads the live machine's current_link_width), and the file loads back. A designed
// chassis without PCI addresses gets synthetic bus IDs, marked and listed.
TEST(FieldCli, NcclExportUsesTheTrainedWidthAndMarksSyntheticBusIds) {
  SysfsFixture fx(temp_dir());
  probe::testing::build_pcie_server(fx);
  fx.write(fx.device_dir("0000:1a:00.0") + "/current_link_width", "8\n");
  std::string box = probed(fx, "box");
  std::string xml = fx.root() + "/topo.xml";
  auto r = run_cli("probe --chassis " + box + " --nccl-out " + xml);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string t = read_text(xml);
  EXPECT_NE(t.find("<pci busid=\"0000:1a:00.0\" class=\"0x030200\""), std::string::npos) << t;
  EXPECT_NE(line_of(t, "<pci busid=\"0000:1a:00.0\"").find("link_width=\"8\""), std::string::npos)
      << t;
  EXPECT_NE(line_of(t, "<pci busid=\"0000:1b:00.0\"").find("link_width=\"16\""), std::string::npos)
      << t;
  EXPECT_EQ(run_cli("probe --nccl-xml " + xml).exit_code, 0);
  auto d = run_cli("probe --chassis pcie-8gpu-gen4 --nccl-out " + fx.root() + "/design.xml");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_NE(d.out.find("NCCL topology: "), std::string::npos) << d.out;
  EXPECT_NE(read_text(fx.root() + "/design.xml").find("linkwise_busid=\"synthetic\""),
            std::string::npos);
}

// The DGX-like box's NVML answers as a snapshot beside its sysfs copy (nvml.json), with GPU 2
// throttling hot, ECC errors and a pending row remap on GPU 4, and GPU 5's fabric registration
// not started (the fabric manager down for it). Each finding as `probe --check` prints it.
nlohmann::json snapshot_of(const probe::FakeNvml& nvml) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : nvml.gpus) {
    nlohmann::json links = nlohmann::json::array();
    for (const auto& l : g.links)
      links.push_back(
          {{"active", l.active}, {"version", l.version}, {"remote_bus_id", l.remote_bus_id}});
    gpus.push_back({{"bus_id", g.bus_id}, {"name", g.name}, {"nvlinks", links}});
  }
  return {{"gpus", gpus}};
}

TEST(FieldCli, NvmlHealthFromASnapshotBesideTheCopy) {
  SysfsFixture fx(temp_dir());
  probe::FakeNvml nvml;
  probe::testing::build_dgx_like(fx, nvml, false);
  auto j = snapshot_of(nvml);
  for (auto& g : j["gpus"]) g["fabric_state"] = 3;  // registered
  j["gpus"][2]["throttle_reasons"] = 0x60;          // software and hardware thermal slowdown
  j["gpus"][2]["temperature_c"] = 87;
  j["gpus"][2]["slowdown_temperature_c"] = 90;
  j["gpus"][4]["ecc_uncorrected"] = 2;
  j["gpus"][4]["ecc_corrected"] = 130;
  j["gpus"][4]["remapped_rows"] = {
      {"correctable", 1}, {"uncorrectable", 2}, {"pending", true}, {"failure", false}};
  j["gpus"][5]["fabric_state"] = 1;  // not started
  fx.write("nvml.json", j.dump(2));
  auto r = run_cli("probe --check --sysfs-root " + fx.root());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_of(r.out, "fault   gpu-throttled:"),
            "fault   gpu-throttled: gpu2 0000:33:00.0: clocks held down: software thermal "
            "slowdown, hardware thermal slowdown (throttle reasons 0x60)");
  EXPECT_EQ(
      line_of(r.out, "warning gpu-hot:"),
      "warning gpu-hot: gpu2 0000:33:00.0: 87 C, within 5 C of its slowdown temperature 90 C");
  EXPECT_EQ(line_of(r.out, "fault   ecc-uncorrected:"),
            "fault   ecc-uncorrected: gpu4 0000:93:00.0: 2 uncorrectable ECC error(s) (lifetime)");
  EXPECT_EQ(line_of(r.out, "info    ecc-corrected:"),
            "info    ecc-corrected: gpu4 0000:93:00.0: 130 corrected ECC error(s) (lifetime)");
  EXPECT_EQ(line_of(r.out, "warning row-remap-pending:"),
            "warning row-remap-pending: gpu4 0000:93:00.0: a row remapping waits for a GPU reset "
            "(1 correctable, 2 uncorrectable rows remapped)");
  EXPECT_EQ(line_of(r.out, "fault   fabric-not-ready:"),
            "fault   fabric-not-ready: gpu5 0000:a3:00.0: NVSwitch fabric registration not started "
            "(state 1, status 0)");
  EXPECT_NE(r.out.find("UNHEALTHY: 3 fault(s), 2 warning(s)"), std::string::npos) << r.out;
  // NVLinks come from the snapshot too: read, none down.
  EXPECT_EQ(r.out.find("nvlink-not-read"), std::string::npos) << r.out;
  // A malformed snapshot is bad input, named.
  fx.write("nvml.json", R"({"gpus": [{"bus_id": "0000:13:00.0", "temperature_c": -4}]})");
  auto b = run_cli("probe --check --sysfs-root " + fx.root());
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find(fx.root() + "/nvml.json: NVML snapshot gpus[0].temperature_c: must be a "
                                   "whole number from 0 to 4294967295"),
            std::string::npos)
      << b.err;
}

}  // namespace
}  // namespace linkwise::testing
