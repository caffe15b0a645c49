// Hostile and mistaken input on the real CLI: one test per kind of failure it once had (undefined
// behaviour and Debug assertions are caught by running this whole suite under make test-sanitize
// and make test-debug). Each bad input exits 2 with the file, line and (cut) value; nothing
// crashes, hangs, grows without bound, or damages a file.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/cli_runner.h"
#include "linkwise/util/text.h"

namespace linkwise::testing {
namespace {

std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// A two-GPU box: CPU, two GPUs on PCIe, as examples/two-gpu-pcie.yaml; `extra` is added to the node
// list and `links` replaces the links.
std::string box(const std::string& extra_nodes, const std::string& links) {
  return "name: t\nnodes:\n"
         "  - {id: cpu0, kind: cpu, part: xeon-8480c}\n"
         "  - {id: gpu0, kind: gpu, part: h100-pcie}\n"
         "  - {id: gpu1, kind: gpu, part: h100-pcie}\n" +
         extra_nodes + "links:\n" + links;
}
const std::string kLinks =
    "  - {a: cpu0, b: gpu0, tech: pcie5, width: 16}\n"
    "  - {a: cpu0, b: gpu1, tech: pcie5, width: 16}\n";

TEST(HostileCliTest, TheBaseBoxLoads) {
  auto r = run_cli("topo " + write(temp_dir(), "ok.yaml", box("", kLinks)));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Overflow: link widths, NVLink counts and plan sizes past what any machine has; float-to-int
// casts.
TEST(HostileCliTest, OverflowingCountsAreRefused) {
  std::string dir = temp_dir();
  auto r = run_cli(
      "topo " +
      write(dir, "w.yaml",
            box("", kLinks + "  - {a: gpu0, b: gpu1, tech: nvlink4, links: 1000000000}\n")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "linkwise: error: " + dir +
                "/w.yaml:9:5: width 1000000000 is more than a nvlink4 link may have (72 links)\n");
  r = run_cli(
      "topo " +
      write(dir, "o.yaml",
            box("  - {id: nic0, kind: nic, part: connectx-7, overrides: {pcie_width: 1e15}}\n",
                kLinks)));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("override 'pcie_width' is a count: a whole number up to 65536, not 1e15"),
            std::string::npos)
      << r.err;
  r = run_cli("train dgx-h100 --model llama3-8b --plan tp=1048576,pp=1048576,dp=1048576");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      "linkwise: error: --plan: tp·pp·dp = 1048576·1048576·1048576 is more than 1048576 GPUs\n");
  r = run_cli(
      "probe --nccl-xml " +
      write(dir, "nv.xml",
            "<system version=\"1\">\n<cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\">\n"
            "<pci busid=\"0000:01:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" "
            "link_width=\"16\">\n"
            "<gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\">\n"
            "<nvlink target=\"0000:05:00.0\" count=\"2147483647\" tclass=\"0x068000\"/>\n"
            "</gpu>\n</pci>\n</cpu>\n</system>\n"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "linkwise: error: " + dir +
                "/nv.xml:5: <nvlink target=\"0000:05:00.0\">: count 2147483647 is not 1 to 72\n");
  r = run_cli("bench --fake-gpus gpus=1e20");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      "linkwise: error: fake GPU spec: 'gpus' must be a whole number from 0 to 64, not '1e20'\n");
}

// Recursion: nesting far deeper than any real file, in each format.
TEST(HostileCliTest, DeepNestingIsRefusedWithTheLine) {
  std::string dir = temp_dir();
  std::string deep_json =
      "{\"measurements\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  auto r = run_cli("calibrate dgx-h100 " + write(dir, "d.json", deep_json));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: " + dir + "/d.json: JSON nested deeper than 64 levels\n");
  std::string deep_xml = "<system version=\"1\">\n";
  for (int i = 0; i < 100000; ++i) deep_xml += "<pci>";
  r = run_cli("probe --nccl-xml " + write(dir, "d.xml", deep_xml));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: " + dir + "/d.xml:2: XML nested deeper than 64 elements\n");
  r = run_cli("topo " + write(dir, "d.yaml",
                              "nodes: " + std::string(100, '[') + std::string(100, ']') + "\n"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nested deeper than 64 levels"), std::string::npos) << r.err;
}

// Hangs: a FIFO as an input file is refused before it is opened for reading (nothing writes to it).
TEST(HostileCliTest, FifosAndDevicesAreNotInputs) {
  std::string dir = temp_dir();
  std::string fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto r = run_cli("calibrate dgx-h100 " + fifo);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: cannot read '" + fifo +
                       "': it is a FIFO (named pipe); inputs are regular files only\n");
  r = run_cli("probe --nccl-xml " + fifo);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("FIFO"), std::string::npos) << r.err;
  r = run_cli("topo " + fifo);
  EXPECT_EQ(r.exit_code, 2);
  // Memory: an endless file is refused by kind, a huge one by size.
  r = run_cli("probe --nccl-xml /dev/zero");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "linkwise: error: cannot read '/dev/zero': it is a character device; inputs are "
            "regular files only\n");
  std::string big = dir + "/big.json";
  std::filesystem::resize_file(write(dir, "big.json", ""), (16u << 20) + 1);
  r = run_cli("calibrate dgx-h100 " + big);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "linkwise: error: cannot read '" + big + "': larger than the 16 MiB input limit\n");
}

// Memory: brace products and match: all share one budget for the whole file.
TEST(HostileCliTest, NameExpansionHasOneBudget) {
  std::string dir = temp_dir();
  auto r = run_cli(
      "topo " +
      write(dir, "p.yaml",
            box("  - {id: \"n{0..999}{0..999}\", kind: nvme, part: samsung-pm1743}\n", kLinks)));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      "linkwise: error: " + dir +
          "/p.yaml:6:5: bad pattern 'n{0..999}{0..999}': expands to more than 100000 names\n");
  // Two match: all links, each within the cap, over the budget together.
  const std::string all300 =
      "  - {a: \"gpu{0..299}\", b: \"gpu{0..299}\", tech: nvlink4, match: all}\n";
  r = run_cli("topo " + write(dir, "s.yaml", box("", kLinks + all300 + all300)));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: " + dir +
                       "/s.yaml:10:5: the chassis expands to more than 100000 node names and "
                       "link pairs in all (brace lists and match: all)\n");
  r = run_cli("topo " +
              write(dir, "b.yaml",
                    box("  - {id: \"n{0..4999}\", kind: nvme, part: samsung-pm1743}\n", kLinks)));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: " + dir + "/b.yaml:6:5: more than 4096 nodes in one box\n");
  r = run_cli("topo " +
              write(dir, "m.yaml",
                    box("", kLinks + "  - {a: \"gpu{0..999}\", b: \"gpu{0..999}\", tech: nvlink4, "
                                     "match: all}\n")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: " + dir +
                       "/m.yaml:9:5: the chassis expands to more than 100000 node names and "
                       "link pairs in all (brace lists and match: all)\n");
}

// Destroying files: -o never replaces a device, FIFO or directory.
TEST(HostileCliTest, OutputsAreRegularFilesOnly) {
  std::string dir = temp_dir();
  auto r = run_cli("topo dgx-h100 -o /dev/full");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "linkwise: error: cannot write '/dev/full': it is a character device; outputs are "
            "regular files only\n");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  std::string fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  r = run_cli("topo dgx-h100 -o " + fifo);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("it is a FIFO"), std::string::npos) << r.err;
  r = run_cli("collective dgx-h100 --collective all_reduce --output " + dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("it is a directory"), std::string::npos) << r.err;
  // A regular file is replaced, keeping its mode; a symbolic link keeps pointing at the new file.
  std::string out = write(dir, "out.txt", "old");
  ::chmod(out.c_str(), 0640);
  std::filesystem::create_symlink(out, dir + "/link.txt");
  r = run_cli("topo dgx-h100 -o " + dir + "/link.txt");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_symlink(dir + "/link.txt"));
  EXPECT_NE(read_file(out).find("NV18"), std::string::npos);
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    files += e.is_regular_file() && !e.is_symlink();
  EXPECT_EQ(files, 1u);  // out.txt only: no temporary left behind
}

// Partial outputs: a command writing two files writes both or neither.
TEST(HostileCliTest, TwoOutputsAllOrNone) {
  std::string dir = temp_dir();
  std::filesystem::create_directory(dir + "/sub");
  auto r = run_cli("probe --chassis dgx-h100 -o " + dir + "/a.yaml --nccl-out " + dir + "/sub");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir + "/a.yaml"));
  r = run_cli("probe --chassis dgx-h100 -o " + dir + "/a.yaml --nccl-out " + dir + "/b.xml");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/a.yaml"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/b.xml"));
}

// Messages: file:line for JSON and XML, no wrapped integers, long values cut.
TEST(HostileCliTest, MessagesNameTheLineAndCutLongValues) {
  std::string dir = temp_dir();
  auto r = run_cli("calibrate dgx-h100 " +
                   write(dir, "g.json",
                         "{\"measurements\": [\n"
                         "  {\"kind\": \"h2d\", \"gpus\": [0], \"measured_GBps\": 50},\n"
                         "  {\"kind\": \"h2d\", \"gpus\": [3e10], \"measured_GBps\": 50}\n]}\n"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: " + dir +
                       "/g.json:3: measurements[1]: 'gpus' has GPU 30000000000.0: GPU numbers "
                       "are below 1048576\n");
  r = run_cli("calibrate dgx-h100 " +
              write(dir, "s.json", "{\"measurements\": [\n  {\"kind\": }\n]}\n"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("linkwise: error: " + dir + "/s.json:2: not valid JSON: ", 0), 0u) << r.err;
  r = run_cli("probe --nccl-xml " +
              write(dir, "s.xml", "<system version=\"1\">\n<cpu numaid=\"0\">\n</system>\n"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("linkwise: error: " + dir + "/s.xml:4: malformed NCCL topology XML", 0), 0u)
      << r.err;
  std::string long_id(5000, 'x');
  r = run_cli("topo " + write(dir, "l.yaml",
                              box("",
                                  "  - {a: cpu0, b: gpu0, tech: pcie5, width: 16}\n"
                                  "  - {a: cpu0, b: gpu1, tech: pcie5, width: " +
                                      long_id + "}\n")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_LT(r.err.size(), 300u) << r.err;
  EXPECT_NE(r.err.find("xxx... (5000 characters)"), std::string::npos) << r.err;
}

// Duplicate keys: a second 'links:' used to replace the first list without a word.
TEST(HostileCliTest, DuplicateKeysAreErrors) {
  std::string dir = temp_dir();
  auto r =
      run_cli("topo " + write(dir, "k.yaml",
                              box("", kLinks) + "links:\n  - {a: cpu0, b: gpu0, tech: pcie5}\n"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "linkwise: error: " + dir +
                       "/k.yaml:9:1: duplicate key 'links' (the same key twice in one map)\n");
  r = run_cli("topo " +
              write(dir, "n.yaml",
                    box("  - {id: nv0, kind: nvme, part: samsung-pm1743, part: samsung-pm1743}\n",
                        kLinks)));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("duplicate key 'part'"), std::string::npos) << r.err;
}

// A PCIe link's `reported` (0: the host does not report it to the guest, 1: default) is 0 or 1 on
// a PCIe link: other values, other types and other link families exit 2 with the place.
TEST(HostileCliTest, ReportedIsZeroOrOneOnPcieLinks) {
  std::string dir = temp_dir();
  auto with = [&](const std::string& name, const std::string& value) {
    return run_cli("topo " + write(dir, name,
                                   box("",
                                       "  - {a: cpu0, b: gpu0, tech: pcie5, width: 16}\n"
                                       "  - {a: cpu0, b: gpu1, tech: pcie5, width: 16, "
                                       "reported: " +
                                           value + "}\n")));
  };
  const std::string at = ".yaml:8:58: 'reported' must be ";
  struct Bad {
    std::string name, value, message;
  } bad[] = {{"two", "2", "0 or 1, not 2"},
             {"neg", "-1", "0 or 1, not -1"},
             {"big", "1e9", "0 or 1, not 1000000000"},
             {"huge", "1e300", "a whole number, not '1e300'"},
             {"half", "0.5", "a whole number, not '0.5'"},
             {"bool", "true", "a number, not 'true'"},
             {"list", "[0]", "a number, not 'a list'"},
             {"none", "~", "a number, not 'nothing'"}};
  for (const auto& b : bad) {
    auto r = with(b.name + ".yaml", b.value);
    EXPECT_EQ(r.exit_code, 2) << b.value;
    EXPECT_EQ(r.err, "linkwise: error: " + dir + "/" + b.name + at + b.message + "\n");
  }
  auto ok = with("zero.yaml", "0");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  auto nv = run_cli("topo " +
                    write(dir, "nv.yaml",
                          box("", kLinks + "  - {a: gpu0, b: gpu1, tech: nvlink4-bridge, links: 4, "
                                           "reported: 0}\n")));
  EXPECT_EQ(nv.exit_code, 2);
  EXPECT_EQ(nv.err, "linkwise: error: " + dir +
                        "/nv.yaml:9:5: 'reported: 0' is for PCIe links (how a VM shows its "
                        "devices), not nvlink4-bridge\n");
}

}  // namespace
}  // namespace linkwise::testing
