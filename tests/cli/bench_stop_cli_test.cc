// `linkwise bench` stopped by Ctrl-C (SIGINT) or SIGTERM part-way: it keeps what finished in a
// valid measurement file marked "complete": false, says so on stderr and exits 128 + the signal.
// The simulated GPUs are slowed (delay=: real milliseconds per synchronize) so that the run is
// still going when the first measurement reaches the file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/cli_runner.h"
#include "linkwise/measure/measurement.h"

namespace linkwise::testing {

namespace {

struct Stopped {
  int exit_code = -1;
  std::string out, err, file;
};

// Starts a slow bench writing `dir`/m.json, waits for the file to appear (the first measurement
// finished), sends `sig` and waits for the process to end.
Stopped stop_bench_with(int sig) {
  std::string dir = temp_dir();
  std::string file = dir + "/m.json", out = dir + "/out.txt", err = dir + "/err.txt";
  pid_t pid = fork();
  if (pid == 0) {
    int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    execl(LINKWISE_CLI, LINKWISE_CLI, "bench", "--fake-gpus", "gpus=2,delay=10", "--sizes",
          "1M,2M,4M", "--samples", "10", "--skip", "local,peer,latency,nccl", "-o", file.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  Stopped s;
  if (pid < 0) return s;
  int status = 0;
  bool ended = false;
  // Wait for the file, not for a fixed time. Should the run end first, the checks below say so.
  while (!std::filesystem::exists(file)) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      ended = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!ended) {
    kill(pid, sig);
    waitpid(pid, &status, 0);
  }
  s.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  s.out = read_text(out);
  s.err = read_text(err);
  s.file = file;
  return s;
}

void expect_kept(const Stopped& s, const std::string& signal) {
  ASSERT_TRUE(std::filesystem::exists(s.file)) << s.err;
  // A valid measurement file that calibrate reads, holding what finished and saying it stopped.
  auto parsed = measure::load_measurements(s.file);
  EXPECT_GE(parsed.measurements.size(), 1u);
  EXPECT_LT(parsed.measurements.size(), 18u);  // 2 GPUs x 3 sizes x 2 engines x 3 kinds: not all
  auto j = nlohmann::json::parse(read_text(s.file));
  EXPECT_EQ(j.at("complete"), false);
  // One line on stderr, and the tables of what finished on stdout.
  EXPECT_EQ(s.err.rfind("linkwise: stopped by " + signal + ": ", 0), 0u) << s.err;
  EXPECT_EQ(std::count(s.err.begin(), s.err.end(), '\n'), 1) << s.err;
  EXPECT_NE(s.err.find(std::to_string(parsed.measurements.size()) + " measurement"),
            std::string::npos)
      << s.err;
  EXPECT_NE(s.out.find("Host <-> device, pinned memory"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("note: stopped before the end"), std::string::npos) << s.out;
}

}  // namespace

TEST(BenchStopCli, CtrlCKeepsWhatFinishedAndExits130) {
  auto s = stop_bench_with(SIGINT);
  EXPECT_EQ(s.exit_code, 130) << s.err;
  expect_kept(s, "SIGINT");
}

TEST(BenchStopCli, SigtermKeepsWhatFinishedAndExits143) {
  auto s = stop_bench_with(SIGTERM);
  EXPECT_EQ(s.exit_code, 143) << s.err;
  expect_kept(s, "SIGTERM");
}

}  // namespace linkwise::testing
