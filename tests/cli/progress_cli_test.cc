// Progress of long runs on stderr: drawn when stderr is a terminal, nothing otherwise. The terminal
// is util-linux's `script`, which runs a command on a pseudo-terminal and copies what it shows.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli/cli_runner.h"

namespace linkwise::testing {

namespace {

// What a terminal shows while `linkwise <args>` runs with stdout sent to a file; "" when `script`
// is not installed.
std::string on_a_terminal(const std::string& args) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) return "";
  std::string dir = temp_dir();
  std::string cmd = "script -qec \"" + std::string(LINKWISE_CLI) + " " + args + " >" + dir +
                    "/out.txt\" /dev/null >" + dir + "/tty.txt 2>&1 </dev/null";
  if (std::system(cmd.c_str()) != 0) return "";
  std::ifstream in(dir + "/tty.txt");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(ProgressCli, ServeSweepAndCollectiveSizesDrawOnlyOnATerminal) {
  const std::string serve = "serve dgx-h100 --model llama3.1-70b --tp 8 --sweep concurrency";
  const std::string collective = "collective dgx-h100 --nodes 2 -b 1M -e 64M";
  // Not a terminal (the runner sends stderr to a file): nothing.
  auto s = run_cli(serve);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.err, "");
  auto c = run_cli(collective);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.err, "");
  // On a terminal: "what: done/total", the last one drawn, then the line cleared.
  std::string tty = on_a_terminal(serve);
  if (tty.empty()) GTEST_SKIP() << "no `script` to run a command on a terminal";
  EXPECT_NE(tty.find("\rserve: concurrency sweep: 9/9\033[K\r\033[K"), std::string::npos) << tty;
  tty = on_a_terminal(collective);
  EXPECT_NE(tty.find("\rcollective: predicting sizes: 7/7\033[K\r\033[K"), std::string::npos)
      << tty;
  // --quiet draws nothing, terminal or not.
  tty = on_a_terminal(serve + " --quiet");
  EXPECT_EQ(tty.find("concurrency sweep"), std::string::npos) << tty;
}

TEST(ProgressCli, BenchCountsItsMeasurementsOnlyOnATerminal) {
  // Two simulated GPUs with peer access, one copy size, all_reduce from 8 B to 64 KiB. Planned:
  // host 2 GPUs x 2 engines x (h2d, d2h, bidir) = 12; local 2 x 2 = 4; peer on: 0->1 (p2p, bidir)
  // and 1->0 (p2p) for ce and sm = 6; peer off, ce only = 3; latency 4 pairs on and off = 8;
  // all_reduce at 8, 16, ..., 64K = 14 sizes. 47 in all.
  const std::string bench = "bench --fake-gpus gpus=2,p2p=300,bus=250 --sizes 1M -e 64K -n 2 -w 1";
  auto b = run_cli(bench);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(b.err, "");
  std::string tty = on_a_terminal(bench);
  if (tty.empty()) GTEST_SKIP() << "no `script` to run a command on a terminal";
  EXPECT_NE(tty.find("\rbench: measurements: 47/47\033[K\r\033[K"), std::string::npos) << tty;
  tty = on_a_terminal(bench + " --quiet");
  EXPECT_EQ(tty.find("bench: measurements"), std::string::npos) << tty;
}

}  // namespace linkwise::testing
