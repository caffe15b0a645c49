// Every `build/linkwise ...` example of README.md run as written, so that an example whose
// command, flag or file no longer exists fails here. The commands are read from README.md at run
// time (its indented code blocks, a trailing `\` joining lines), each run by the shell in a fresh
// folder holding `build/linkwise` (the built CLI), `examples/` and `data/` of the source tree and
// the input files the examples name but do not make (a chassis file, measurement files, an
// nccl-tests log, nvbandwidth output). Lines the suite cannot run as written are left out and
// named in kNotRun: `mpirun` (the CTest `design_mpi` runs `design` under mpirun) and the GPU
// check script (it builds and needs GPUs). `sudo` is dropped (the suite already has the rights
// it needs or the command reports what it cannot read).
// Beside them: each example's flags are in its command's --help, every subcommand has an
// example, and the docs' lists of chassis and model presets are whole.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_runner.h"

namespace linkwise::testing {
namespace {

namespace fs = std::filesystem;

struct Example {
  int line = 0;         ///< README.md line of its first line
  std::string command;  ///< as written, continuation lines joined
};

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// The commands of README.md's indented code blocks that run the CLI.
std::vector<Example> readme_examples() {
  std::istringstream in(read_text(source_dir() + "/README.md"));
  std::vector<Example> out;
  std::string l;
  int n = 0;
  Example* open = nullptr;  // an example continued by a trailing backslash
  while (std::getline(in, l)) {
    ++n;
    std::string t = trim(l);
    if (open) {
      bool more = !t.empty() && t.back() == '\\';
      open->command += " " + trim(more ? t.substr(0, t.size() - 1) : t);
      if (!more) open = nullptr;
      continue;
    }
    if (l.rfind("    ", 0) != 0) continue;
    if (t.rfind("build/linkwise ", 0) != 0 && t.rfind("sudo build/linkwise ", 0) != 0 &&
        t.rfind("mpirun ", 0) != 0 && t.rfind("scripts/", 0) != 0)
      continue;
    bool more = t.back() == '\\';
    out.push_back({n, trim(more ? t.substr(0, t.size() - 1) : t)});
    if (more) open = &out.back();
  }
  return out;
}

/// Lines the suite does not run, by how they start, and why.
const std::map<std::string, std::string> kNotRun = {
    {"mpirun ", "the CTest design_mpi runs design under mpirun"},
    {"scripts/gpu-check.sh", "builds linkwise and needs GPUs"},
};

bool not_run(const std::string& command) {
  for (const auto& [start, why] : kNotRun)
    if (command.rfind(start, 0) == 0) return true;
  return false;
}

/// A fresh folder laid out as the examples expect the checkout to be.
std::string example_folder() {
  std::string dir = temp_dir();
  fs::create_directories(dir + "/build");
  fs::create_symlink(LINKWISE_CLI, dir + "/build/linkwise");
  fs::create_directory_symlink(source_dir() + "/examples", dir + "/examples");
  fs::create_directory_symlink(source_dir() + "/data", dir + "/data");
  // Inputs the examples name without making them in the same line.
  fs::copy_file(source_dir() + "/examples/two-gpu-pcie.yaml", dir + "/my-box.yaml");
  fs::copy_file(source_dir() + "/examples/two-gpu-pcie.yaml", dir + "/box.yaml");
  fs::copy_file(source_dir() + "/data/measured/public-reference.json", dir + "/measured.json");
  fs::copy_file(source_dir() + "/tests/data/nccl-tests/all_reduce_perf_dgx-h100.log",
                dir + "/all_reduce_perf.log");
  // nvbandwidth output as printed (the tool-log fuzzer's seed of one H100 box).
  fs::copy_file(source_dir() + "/fuzz/corpus/tool_log/seed-nvbandwidth.txt", dir + "/nvb.txt");
  return dir;
}

CliResult run_in(const std::string& dir, const std::string& command) {
  std::string cmd = "cd '" + dir + "' && { " + command + "\n} >out.txt 2>err.txt </dev/null";
  int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_text(dir + "/out.txt");
  r.err = read_text(dir + "/err.txt");
  return r;
}

/// Whether an exit other than 0 is what the example means on a machine like the test's: a health
/// check that finds the machine unhealthy (no GPUs, no NVLinks), a measurement without a GPU, PNG
/// output without rsvg-convert.
bool allowed_failure(const std::string& command, const CliResult& r) {
  if (command.find(" probe --check") != std::string::npos) return r.exit_code == 1;
  if (command.find(" bench") != std::string::npos)
    return r.exit_code == 1 && r.err.find("no GPU found") != std::string::npos;
  if (command.find(".png") != std::string::npos)
    return r.exit_code == 1 && r.err.find("needs rsvg-convert") != std::string::npos;
  return false;
}

TEST(ReadmeCli, EveryExampleRunsAsWritten) {
  auto examples = readme_examples();
  // The README has about 40 such lines: far fewer means the reader above lost them.
  ASSERT_GE(examples.size(), 30u);
  int ran = 0;
  for (const auto& e : examples) {
    if (not_run(e.command)) continue;
    std::string command = e.command;
    if (command.rfind("sudo ", 0) == 0) command = command.substr(5);
    auto r = run_in(example_folder(), command);
    ++ran;
    if (r.exit_code == 0 || allowed_failure(command, r)) continue;
    ADD_FAILURE() << "README.md:" << e.line << ": `" << e.command << "` exited " << r.exit_code
                  << "\n"
                  << r.err;
  }
  EXPECT_GE(ran, 30);
}

TEST(ReadmeCli, EveryFlagOfTheExamplesIsInItsCommandsHelp) {
  std::map<std::string, std::string> help;
  std::regex sub(R"(build/linkwise (\w+))");
  std::regex flag(R"((^|\s)(--?[A-Za-z][\w-]*))");
  for (const auto& e : readme_examples()) {
    std::smatch m;
    if (!std::regex_search(e.command, m, sub)) continue;
    std::string name = m[1];
    if (!help.count(name)) {
      auto r = run_cli(name + " --help");
      ASSERT_EQ(r.exit_code, 0) << name;
      help[name] = r.out;
    }
    // The flags of the command itself, not those of the training job `--job "..."` hands on
    // (train's own flags, checked where train is run).
    std::string args = std::regex_replace(m.suffix().str(), std::regex(R"(--job "[^"]*")"), "");
    args = args.substr(0, args.find('#'));
    for (std::sregex_iterator it(args.begin(), args.end(), flag), end; it != end; ++it) {
      std::string f = (*it)[2];
      std::regex listed("(^|[\\s,])" + f + "([\\s,=]|$)");
      EXPECT_TRUE(std::regex_search(help[name], listed))
          << "README.md:" << e.line << ": " << name << " --help does not list " << f;
    }
  }
}

// The lists of presets in the docs name every preset the CLI has: docs/chassis-format.md's table
// of machines and docs/training.md's list of model presets (data/models/).
TEST(ReadmeCli, DocsListEveryPreset) {
  auto r = run_cli("presets --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string chassis_doc = read_text(source_dir() + "/docs/chassis-format.md");
  auto presets = nlohmann::json::parse(r.out)["presets"];
  ASSERT_GT(presets.size(), 0u);
  for (const auto& p : presets) {
    std::string row = "| `" + p["id"].get<std::string>() + "` |";
    EXPECT_NE(chassis_doc.find(row), std::string::npos) << "docs/chassis-format.md lacks " << row;
  }
  std::string training_doc = read_text(source_dir() + "/docs/training.md");
  int models = 0;
  for (const auto& f : fs::directory_iterator(source_dir() + "/data/models")) {
    if (f.path().extension() != ".yaml") continue;
    ++models;
    std::string id = "`" + f.path().stem().string() + "`";
    EXPECT_NE(training_doc.find(id), std::string::npos) << "docs/training.md lacks " << id;
  }
  EXPECT_GT(models, 0);
}

// Every subcommand `linkwise --help` lists has an example in README.md.
TEST(ReadmeCli, EverySubcommandHasAnExample) {
  auto r = run_cli("--help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string listed = r.out.substr(r.out.find("Subcommands:"));
  std::set<std::string> shown;
  for (const auto& e : readme_examples()) {
    std::smatch m;
    if (std::regex_search(e.command, m, std::regex(R"(build/linkwise (\w+))"))) shown.insert(m[1]);
  }
  std::regex sub(R"(\n  (\w+) )");
  int n = 0;
  for (std::sregex_iterator it(listed.begin(), listed.end(), sub), end; it != end; ++it, ++n)
    EXPECT_TRUE(shown.count((*it)[1])) << "README.md has no example of " << (*it)[1];
  EXPECT_GE(n, 10);
}

}  // namespace
}  // namespace linkwise::testing
