// The subcommand table of the linkwise executable. Each command lives in its own cmd_*.cc: it
// declares its flags on a CLI11 subcommand, fills an options struct, and returns a handler that
// calls the library.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "linkwise/work/train_run.h"

namespace linkwise::cli {

/// A command's handler; returns the process exit code (0 ok, 1 runtime failure or unhealthy, 2 bad
/// input).
using Handler = std::function<int()>;

struct Command {
  const char* name;
  const char* help;
  /// Declares the flags on `sub` and returns the handler that runs with them.
  Handler (*setup)(CLI::App& sub);
};

/// Every command, in the order `linkwise --help` lists them.
const std::vector<Command>& commands();

/// Prints `text` to stdout, or writes it atomically to `path` when it is not empty.
void emit(const std::string& text, const std::string& path);

/// The CHASSIS positional: a preset name or a chassis YAML file.
CLI::Option* add_chassis_arg(CLI::App& sub, std::string& chassis);
/// --json, and the output file option (`names`, "-o,--output" unless the command uses -o itself).
void add_json_output_flags(CLI::App& sub, bool& json, std::string& output,
                           const std::string& names = "-o,--output");
/// Common flag: --nodes N copies of the chassis joined by a network.
void add_nodes_flag(CLI::App& sub, int& nodes);
/// --as-designed: links at their design rate instead of the trained one the chassis records.
void add_as_designed_flag(CLI::App& sub, bool& as_designed);
/// The names of the options given on the command line ("CHASSIS" for a positional).
std::vector<std::string> given_options(const CLI::App& sub);

/// train's flags in one string ("--model llama3-70b --mode lora", "train" in front optional) as
/// options for a job on `chassis`; throws InputError naming the flag.
work::TrainOptions train_job_options(std::string job, const std::string& chassis, int nodes);

}  // namespace linkwise::cli
