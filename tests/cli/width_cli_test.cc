// Every command's text output fits 100 display columns on every preset, except the layouts other
// tools define: nvidia-smi's topology matrix (`topo`'s first block) and nccl-tests' header and rows
// (`collective`).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_runner.h"
#include "linkwise/report/table.h"

namespace linkwise::testing {
namespace {

// nccl-tests' own lines: its configuration line, column header and rows.
bool nccl_tests_layout(const std::string& line) {
  if (line.rfind("# nThread ", 0) == 0) return true;
  if (line.rfind("#  ", 0) == 0 &&
      (line.find("out-of-place") != std::string::npos || line.find("busbw") != std::string::npos ||
       line.find("(B)") != std::string::npos))
    return true;
  auto first = line.find_first_not_of(' ');
  return first != std::string::npos && std::isdigit(static_cast<unsigned char>(line[first])) &&
         line.find("N/A") != std::string::npos;
}

std::string too_wide(const std::string& command, const std::string& out, const std::string& name) {
  std::istringstream in(out);
  bool matrix = out.rfind("\t", 0) == 0;  // topo: the nvidia-smi block runs to the chassis line
  std::string wide;
  for (std::string line; std::getline(in, line);) {
    if (matrix && line.rfind(name + ":", 0) == 0) matrix = false;
    if (matrix || nccl_tests_layout(line)) continue;
    if (report::display_width(line) > report::kMaxColumns)
      wide += command + ": " + std::to_string(report::display_width(line)) + ": " + line + "\n";
  }
  return wide;
}

TEST(WidthCli, EveryCommandFits100ColumnsOnEveryPreset) {
  auto presets = nlohmann::json::parse(run_cli("presets --json").out)["presets"];
  ASSERT_GT(presets.size(), 5u);
  std::string wide;
  std::size_t checked = 0;
  for (const std::string command : {"presets", "catalog", "catalog h100-sxm"}) {
    auto r = run_cli(command);
    ASSERT_EQ(r.exit_code, 0) << command << r.err;
    wide += too_wide(command, r.out, "");
  }
  for (const auto& p : presets) {
    const std::string id = p["id"];
    for (const std::string command :
         {"topo " + id, "collective " + id, "train " + id + " --model llama3-8b",
          "serve " + id + " --model llama3.1-8b"}) {
      auto r = run_cli(command);
      if (r.exit_code == 2) continue;  // a job the preset cannot run (one GPU, too little memory)
      ASSERT_EQ(r.exit_code, 0) << command << r.err;
      wide += too_wide(command, r.out, id);
      ++checked;
    }
  }
  EXPECT_GE(checked, presets.size() * 4 - 4);
  EXPECT_EQ(wide, "");
}

}  // namespace
}  // namespace linkwise::testing
