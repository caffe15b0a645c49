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

/// `text` with runs of spaces and line breaks (and a wrapped comment's "#") made one space, so a
/// message is found whether or not the report wrapped it at 100 columns (report::fit_width).
std::string flat(const std::string& text);

/// The whole file at `path` as bytes; "" when it cannot be opened (a file a test expects to be
/// absent reads as empty).
std::string read_text(const std::string& path);

/// The source tree, for example inputs: LINKWISE_SOURCE_DIR.
std::string source_dir();

/// A fresh temporary folder for one test, removed at exit.
std::string temp_dir();

}  // namespace linkwise::testing
