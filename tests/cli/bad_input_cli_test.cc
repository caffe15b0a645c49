// Bad input named by the open issues, each on the real CLI: a chassis file with an undefined part,
// a figure in the wrong unit, an NCCL setting NCCL does not have or a value it does not take (on
// the command line and in a chassis file's `nccl:`, for every command that reads the chassis); a
// serve context longer than the model allows, a TP that does not divide the heads, a model that
// cannot fit; a train framework that does not exist, a plan that needs more GPUs than the box has;
// malformed, empty and missing files, a directory given as a file, a bad flag value. Each exits 2
// with the key part of its message (file:line:column and the value where it comes from a file),
// and leaves no output file where one was asked for with -o. Beside them: the worked example of
// README.md is what the CLI prints, and the text output of a README example keeps to 100 columns.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_runner.h"

namespace linkwise::testing {
namespace {

namespace fs = std::filesystem;

std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// A two-GPU box: one CPU, two H100 PCIe on its root ports. `head` goes between the name and the
// nodes (a parts: list, an nccl: map), `nodes` after the three nodes. Line 1 is `name: t`, so the
// first line of `head` is line 2.
std::string box(const std::string& head, const std::string& nodes = "") {
  return "name: t\n" + head +
         "nodes:\n"
         "  - {id: cpu0, kind: cpu, part: xeon-8480c}\n"
         "  - {id: gpu0, kind: gpu, part: h100-pcie}\n"
         "  - {id: gpu1, kind: gpu, part: h100-pcie}\n" +
         nodes +
         "links:\n"
         "  - {a: cpu0, b: gpu0, tech: pcie5, width: 16}\n"
         "  - {a: cpu0, b: gpu1, tech: pcie5, width: 16}\n";
}

const std::string kError = "linkwise: error: ";

// Exit 2, the message on stderr starting with "linkwise: error: " + `message`, nothing on stdout.
void expect_refused(const CliResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind(kError + message, 0), 0u) << r.err;
  EXPECT_EQ(r.out, "");
}

// --- issue 9: chassis files and NCCL settings ---------------------------------------------------

TEST(BadInputCli, AnUndefinedPartNamesItsNodeAndLine) {
  std::string dir = temp_dir();
  std::string f = write(dir, "u.yaml", box("", "  - {id: gpu2, kind: gpu, part: my-gpu}\n"));
  // Line 6 is the fourth node; column 5 its map.
  expect_refused(run_cli("topo " + f), f + ":6:5: node 'gpu2': unknown gpu part 'my-gpu'");
}

TEST(BadInputCli, AFigureWithAUnitInItsValueIsRefused) {
  std::string dir = temp_dir();
  std::string f = write(
      dir, "g.yaml", box("parts:\n  - {id: my-gpu, kind: gpu, like: l40s, memory_GiB: 96 GB}\n"));
  // The value of memory_GiB starts at line 3, column 53.
  expect_refused(run_cli("topo " + f),
                 f + ":3:53: part 'my-gpu': figure 'memory_GiB' must be a number of zero or more "
                     "in the unit its name says, not '96 GB'");
  f = write(dir, "b.yaml",
            box("parts:\n  - {id: my-gpu, kind: gpu, like: l40s, memory_GBps: 300 GB/s}\n"));
  expect_refused(run_cli("topo " + f), f + ":3:54: part 'my-gpu': figure 'memory_GBps' must be a "
                                           "number of zero or more in the unit its name says, "
                                           "not '300 GB/s'");
}

TEST(BadInputCli, ABandwidthInAUnitTheCatalogDoesNotTakeIsRefused) {
  std::string dir = temp_dir();
  // Gbps (bits) is not one of the catalog's units (_GBps, _TBps, _bytes_per_s).
  std::string f = write(dir, "g.yaml",
                        box("parts:\n  - {id: my-gpu, kind: gpu, like: l40s, memory_Gbps: 300}\n"));
  auto r = run_cli("topo " + f);
  expect_refused(r, f + ":3:54: part 'my-gpu' (like: l40s) has no figure 'memory_Gbps'");
  EXPECT_NE(r.err.find("_GBps"), std::string::npos) << r.err;  // the units it takes are listed
}

TEST(BadInputCli, ALikeThatNamesNoCatalogPartIsRefused) {
  std::string dir = temp_dir();
  std::string f =
      write(dir, "l.yaml",
            box("parts:\n  - {id: my-gpu, kind: gpu, like: no-such-gpu, memory_GiB: 96}\n"));
  expect_refused(run_cli("topo " + f),
                 f + ":3:35: part 'my-gpu': 'like: no-such-gpu' names no part");
}

TEST(BadInputCli, AnUnknownLinkTechnologyIsRefused) {
  std::string dir = temp_dir();
  std::string f =
      write(dir, "t.yaml", box("") + "  - {a: cpu0, b: gpu0, tech: pcie9, width: 16}\n");
  expect_refused(run_cli("topo " + f), f + ":9:5: unknown link technology 'pcie9'");
}

TEST(BadInputCli, AP2pLevelNcclDoesNotHaveOnTheCommandLine) {
  expect_refused(run_cli("collective dgx-h100 -b 1M -e 1M --nccl NCCL_P2P_LEVEL=FOO"),
                 "--nccl: NCCL_P2P_LEVEL=FOO: not a level NCCL has (LOC, NVL, PIX, PXB, PHB, NODE, "
                 "SYS or 0-5)");
  expect_refused(run_cli("collective dgx-h100 -b 1M -e 1M --nccl NCCL_P2P_DISABLE=2"),
                 "--nccl: NCCL_P2P_DISABLE=2: must be 0 or 1");
  expect_refused(run_cli("collective dgx-h100 -b 1M -e 1M --nccl NCCL_MIN_NCHANNELS=-3"),
                 "--nccl: NCCL_MIN_NCHANNELS=-3: must be a whole number from 1 to 64");
}

TEST(BadInputCli, AnNcclSettingNcclDoesNotHaveOnTheCommandLine) {
  expect_refused(run_cli("collective dgx-h100 -b 1M -e 1M --nccl NCCL_FOO=1"),
                 "--nccl: unknown NCCL setting 'NCCL_FOO' (value '1')");
}

// A chassis file's bad nccl: setting used to pass every command but `collective` (exit 0): serve
// and train run collectives too, and topo and draw read the same file. Now each refuses it with
// the line of the setting.
TEST(BadInputCli, AChassisNcclSettingIsCheckedByEveryCommandThatReadsIt) {
  std::string dir = temp_dir();
  std::string f = write(dir, "n.yaml", box("nccl:\n  NCCL_ALGO: ring\n  NCCL_P2P_LEVEL: FOO\n"));
  const std::string message =
      f +
      ":4:3: NCCL_P2P_LEVEL=FOO: not a level NCCL has (LOC, NVL, PIX, PXB, PHB, NODE, SYS or "
      "0-5)";
  for (const std::string& command :
       {"collective " + f + " -b 1M -e 1M", "topo " + f, "serve " + f + " --model llama3.1-8b",
        "train " + f + " --model llama3.2-3b --plan dp=2", "draw " + f + " -o " + dir + "/d.svg"}) {
    SCOPED_TRACE(command);
    expect_refused(run_cli(command), message);
  }
  EXPECT_FALSE(fs::exists(dir + "/d.svg"));
  f = write(dir, "u.yaml", box("nccl: {NCCL_FOO: 1}\n"));
  expect_refused(run_cli("serve " + f + " --model llama3.1-8b"),
                 f + ":2:8: unknown NCCL setting 'NCCL_FOO' (value '1')");
}

// --- issue 11: serve
// ------------------------------------------------------------------------------

TEST(BadInputCli, ServeAContextLongerThanTheModelAllows) {
  std::string dir = temp_dir();
  // llama3.1-8b: max_position_embeddings 131072 (data/models/llama3.1-8b.yaml).
  expect_refused(run_cli("serve dgx-h100 --model llama3.1-8b --input 131000 --output 2000 --json "
                         "-o " +
                         dir + "/s.json"),
                 "--input 131000 + --output 2000 = 133000 tokens exceeds the 131072-token context "
                 "of llama3.1-8b");
  EXPECT_FALSE(fs::exists(dir + "/s.json"));
}

TEST(BadInputCli, ServeATpThatDoesNotDivideTheHeads) {
  std::string dir = temp_dir();
  expect_refused(run_cli("serve dgx-h100 --model llama3.1-70b --tp 3 -o " + dir + "/s.txt"),
                 "--tp 3 does not divide the 64 attention heads of llama3.1-70b");
  EXPECT_FALSE(fs::exists(dir + "/s.txt"));
}

TEST(BadInputCli, ServeAModelThatCannotFit) {
  std::string dir = temp_dir();
  // 70.6e9 parameters x 2 bytes = 131.4 GiB of bf16 weights on one 80 GiB H100 PCIe.
  auto r =
      run_cli("serve inference-appliance --model llama3.1-70b --tp 1 --json -o " + dir + "/s.json");
  expect_refused(r, "llama3.1-70b does not fit on h100-pcie with tp 1 x pp 1 in bf16");
  EXPECT_NE(r.err.find("131.4 GiB of weights"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/s.json"));
}

TEST(BadInputCli, ServeMoreGpusThanTheBoxHas) {
  expect_refused(run_cli("serve dgx-h100 --model llama3.1-70b --tp 8 --pp 3"),
                 "--tp 8 x --pp 3 needs 24 GPUs; dgx-h100 has 8");
}

// --- issue 10: train
// ------------------------------------------------------------------------------

TEST(BadInputCli, TrainAFrameworkThatDoesNotExist) {
  std::string dir = temp_dir();
  expect_refused(run_cli("train dgx-h100 --model llama3-8b --framework foo -o " + dir + "/t.txt"),
                 "unknown framework 'foo' (one of: megatron, fsdp, fsdp1, deepspeed, "
                 "deepspeed-0.3, hf)");
  EXPECT_FALSE(fs::exists(dir + "/t.txt"));
}

TEST(BadInputCli, TrainRecomputeEveryWithoutFullRecomputation) {
  std::string dir = temp_dir();
  expect_refused(run_cli("train dgx-h100 --model llama3-8b --plan dp=8 --recompute-every 2 -o " +
                         dir + "/t.txt"),
                 "--recompute-every 2 checkpoints one block in 2: it needs --recompute full, not "
                 "'selective'");
  EXPECT_FALSE(fs::exists(dir + "/t.txt"));
  auto zero = run_cli("train dgx-h100 --model llama3-8b --recompute full --recompute-every 0");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(zero.err.find("--recompute-every: Value 0 not in range 1 to 65536"), std::string::npos)
      << zero.err;
}

TEST(BadInputCli, TrainFp8GatherWithoutFp8Fsdp) {
  expect_refused(run_cli("train hgx-h200 --model llama3-8b --plan dp=8,zero=3 --fp8-gather"),
                 "--fp8-gather gathers FSDP2's float8 weights (torchao): it needs --precision fp8 "
                 "and --framework fsdp, not 'auto' and 'megatron'");
}

TEST(BadInputCli, TrainPerOpRecomputationOutsideFsdp) {
  expect_refused(run_cli("train dgx-h100 --model llama3-8b --plan dp=8 --recompute op"),
                 "--recompute op is torchtitan's per-op checkpointing (FSDP2): it needs "
                 "--framework fsdp, not 'megatron'");
}

TEST(BadInputCli, TrainAPlanThatDoesNotDivideTheGpusOrTheModel) {
  std::string dir = temp_dir();
  expect_refused(
      run_cli("train dgx-h100 --model llama3-8b --plan tp=2,pp=2,dp=3 -o " + dir + "/t.txt"),
      "plan tp=2,pp=2,dp=3,zero=0 needs tp·pp·dp = 12 GPUs but the chassis has 8");
  EXPECT_FALSE(fs::exists(dir + "/t.txt"));
  expect_refused(run_cli("train dgx-h100 --model llama3-8b --plan tp=3,dp=1"),
                 "tp=3 does not divide the 32 attention heads of llama3-8b");
  expect_refused(run_cli("train dgx-h100 --model llama3-8b --plan tp=1,pp=3,dp=2"),
                 "pp=3 does not divide the 32 layers of llama3-8b");
  expect_refused(run_cli("train dgx-h100 --model llama3-8b --plan tp=x"),
                 "--plan: 'tp' must be a whole number from 1 to 1048576, not 'x'");
}

// --- files and flags
// ------------------------------------------------------------------------------

TEST(BadInputCli, MalformedYamlNamesTheLine) {
  std::string dir = temp_dir();
  std::string f = write(dir, "m.yaml", "name: t\nnodes: [\n  - {id: a\n");
  expect_refused(run_cli("topo " + f), f + ":3:3: YAML syntax error");
  expect_refused(run_cli("serve dgx-h100 --model " + f), f + ":3:3: YAML syntax error");
}

TEST(BadInputCli, AnEmptyFileIsRefused) {
  std::string dir = temp_dir();
  std::string f = write(dir, "e.yaml", "");
  expect_refused(run_cli("topo " + f),
                 f + ": a chassis file must be a map with 'nodes' and 'links'");
  expect_refused(run_cli("serve dgx-h100 --model " + f), f + ": a model must be a map of keys");
}

// A name written as a path that is not there used to read "'x' is neither a preset nor a chassis
// file": it is now a missing file, as read_file says it.
TEST(BadInputCli, AMissingFileIsNamedMissing) {
  std::string dir = temp_dir();
  expect_refused(run_cli("topo " + dir + "/missing.yaml"),
                 "cannot read '" + dir + "/missing.yaml': No such file or directory");
  expect_refused(run_cli("serve dgx-h100 --model " + dir + "/missing.yaml"),
                 "cannot read '" + dir + "/missing.yaml': No such file or directory");
  // A name that is no path stays a preset name, with the nearest presets.
  expect_refused(run_cli("topo dgx-h10"), "'dgx-h10' is neither a preset nor a chassis file");
}

TEST(BadInputCli, ADirectoryIsNotAFile) {
  std::string dir = temp_dir();
  fs::create_directory(dir + "/d.yaml");
  const std::string message =
      "cannot read '" + dir + "/d.yaml': it is a directory; inputs are regular files only";
  expect_refused(run_cli("topo " + dir + "/d.yaml"), message);
  expect_refused(run_cli("train " + dir + "/d.yaml --model llama3-8b"), message);
  expect_refused(run_cli("serve dgx-h100 --model " + dir + "/d.yaml"), message);
}

TEST(BadInputCli, ABadFlagValueNamesTheFlag) {
  auto r = run_cli("serve dgx-h100 --model llama3.1-8b --concurrency 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--concurrency: Value 0 not in range 1 to 1048576"), std::string::npos)
      << r.err;
  // Not a number at all used to read "Value abc not in range 1 to 1048576".
  r = run_cli("serve dgx-h100 --model llama3.1-8b --concurrency abc");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("linkwise: --concurrency: must be a whole number, not 'abc'\n", 0), 0u)
      << r.err;
  r = run_cli("serve dgx-h100 --model llama3.1-8b --concurrency 1.5");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("linkwise: --concurrency: must be a whole number, not '1.5'\n", 0), 0u)
      << r.err;
  r = run_cli("serve dgx-h100 --model llama3.1-8b --prefix-cache half");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("linkwise: --prefix-cache: must be a number, not 'half'\n", 0), 0u)
      << r.err;
  expect_refused(run_cli("collective dgx-h100 -b 1X"),
                 "bad -b/--minbytes '1X': unknown suffix (use K, M, G or T)");
  expect_refused(run_cli("serve dgx-h100 --model llama3.1-8b --precision fp4"),
                 "--precision must be bf16, fp8 or int4, not 'fp4'");
  expect_refused(run_cli("collective dgx-h100 --algo foo"), "unknown algorithm 'foo'");
}

// --- README.md -----------------------------------------------------------------------------------

// The worked example's table ("Worked example: serving a coding assistant") row by row against
// `serve ... --json`, each figure as the table rounds it: TTFT to 0.01 s, ITL to 1 ms, tok/s to 1,
// links to 1 % (exact match of the rounded figure: the table is the CLI's output, not a model of
// it).
TEST(BadInputCli, TheReadmeWorkedExampleIsWhatTheCliPrints) {
  std::istringstream in(read_text(source_dir() + "/README.md"));
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.rfind("| `inference", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream cut(line.substr(1));
    for (std::string c; std::getline(cut, c, '|');) {
      auto b = c.find_first_not_of(' ');
      auto e = c.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : c.substr(b, e - b + 1));
    }
    ASSERT_GE(cells.size(), 9u) << line;
    std::string args = cells[0].substr(1, cells[0].size() - 2);  // inside the backquotes
    auto r = run_cli("serve " + args + " --input 8192 --output 512 --concurrency " + cells[2] +
                     " --json");
    ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    auto j = nlohmann::json::parse(r.out);
    auto fixed = [](double x, int digits) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.*f", digits, x);
      return std::string(buf);
    };
    std::vector<std::string> got = {
        std::to_string(j["replicas"].get<int>()) + " x tp" + std::to_string(j["tp"].get<int>()),
        std::to_string(j["concurrency"].get<int>()),
        fixed(j["ttft_s"].get<double>(), 2),
        fixed(j["itl_s"].get<double>() * 1000, 0),
        fixed(j["output_tokens_per_s"].get<double>(), 0),
        std::to_string(j["max_concurrency_fit"].get<int>()),
        fixed(j["comm_fraction"].get<double>() * 100, 0) + "%",
        j["bound"].get<std::string>()};
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_EQ(cells[i + 1], got[i])
          << "README.md row `" << args << "` at " << cells[2] << " users, column " << i + 2;
    ++rows;
  }
  EXPECT_EQ(rows, 20);  // 10 commands, each at 1 and at 32 users
}

// README.md: "Text output keeps to 100 columns". probe's note on synthetic NCCL bus IDs was one
// line of 836 columns on `probe --chassis dgx-h100 --nccl-out topo.xml`; it now wraps. The lines
// of nvidia-smi's matrix and legend (up to its NIC Legend), printed as nvidia-smi prints them, are
// left out.
TEST(BadInputCli, ProbeChassisOutputKeepsTo100Columns) {
  std::string dir = temp_dir();
  auto r = run_cli("probe --chassis dgx-h100 --nccl-out " + dir + "/topo.xml");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto after = r.out.find("\nNIC Legend:");  // the last block of nvidia-smi's layout
  ASSERT_NE(after, std::string::npos) << r.out;
  std::istringstream in(r.out.substr(after));
  int notes = 0;
  for (std::string l; std::getline(in, l);) {
    EXPECT_LE(l.size(), 100u) << l;
    notes += l.rfind("NCCL topology:", 0) == 0;
  }
  EXPECT_EQ(notes, 1);
}

}  // namespace
}  // namespace linkwise::testing
