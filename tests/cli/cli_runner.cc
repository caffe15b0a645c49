#include "cli/cli_runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace linkwise::testing {

namespace {
std::vector<std::string>& made_dirs() {
  static std::vector<std::string> dirs;
  return dirs;
}
}  // namespace

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string source_dir() { return LINKWISE_SOURCE_DIR; }

std::string temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "linkwise-test-XXXXXX").string();
  char* made = mkdtemp(tmpl.data());
  if (!made) std::abort();
  made_dirs().push_back(made);
  static bool registered = false;
  if (!registered) {
    registered = true;
    std::atexit([] {
      std::error_code ec;
      for (const auto& d : made_dirs()) std::filesystem::remove_all(d, ec);
    });
  }
  return made;
}

CliResult run_cli(const std::string& args) {
  static const std::string dir = temp_dir();
  static int counter = 0;
  std::string out = dir + "/out" + std::to_string(counter) + ".txt";
  std::string err = dir + "/err" + std::to_string(counter++) + ".txt";
  std::string cmd =
      std::string(LINKWISE_CLI) + " " + args + " >" + out + " 2>" + err + " </dev/null";
  int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

std::string flat(const std::string& text) {
  // A wrapped comment continues as "#" and three or more spaces; a new comment line has one.
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n' && text.compare(i + 1, 4, "#   ") == 0) ++i;
    if (c == '\n' || c == ' ') {
      if (out.empty() || out.back() != ' ') out += ' ';
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace linkwise::testing
