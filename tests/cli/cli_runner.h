// Runs the built linkwise executable for CLI tests and captures what it prints.
#pragma once

#include <string>

namespace linkwise::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;  ///< standard output
  std::string err;  ///< standard error
};

/// Runs `linkwise <args>` (args as a shell would split them) with the built binary.
CliResult run_cli(const std::string& args);

/// The source tree, for example inputs: LINKWISE_SOURCE_DIR.
std::string source_dir();

/// A fresh temporary folder for one test, removed at exit.
std::string temp_dir();

}  // namespace linkwise::testing
