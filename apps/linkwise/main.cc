// linkwise: model, analyse and verify the interconnect of multi-accelerator machines.
// One thin executable over linkwise::core: a table of subcommands (commands.cc), errors mapped to
// exit codes here and nowhere else: 0 ok, 1 runtime failure, 2 bad input.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string_view>

#include "commands.h"
#include "linkwise/util/error.h"
#include "linkwise/util/heap.h"
#include "linkwise/util/text.h"
#include "linkwise/util/verbosity.h"

int main(int argc, char** argv) {
  using namespace linkwise;
  use_large_heap_pages();
  CLI::App app{"linkwise: interconnect analysis for multi-accelerator machines"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "linkwise 0.1.0");
  std::vector<std::pair<CLI::App*, cli::Handler>> handlers;
  // Only the command named first declares its flags (all of them take about a millisecond); with
  // none first (--help, --help-all, --version) every command does.
  const bool one = argc > 1 && argv[1][0] != '-';
  for (const auto& cmd : cli::commands()) {
    CLI::App* sub = app.add_subcommand(cmd.name, cmd.help);
    sub->add_flag_callback(
        "--quiet", [] { set_quiet(true); }, "Leave out known warnings and notes");
    if (!one || cmd.name == std::string_view(argv[1])) handlers.emplace_back(sub, cmd.setup(*sub));
  }
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const auto& cmd : cli::commands()) names.emplace_back(cmd.name);
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      std::string hint = did_you_mean(argv[1], names);
      fmt::print(
          stderr, "linkwise: unknown command '{}'{}\n", argv[1],
          hint.empty() ? "; commands: " + fmt::to_string(fmt::join(names, ", ")) : "; " + hint);
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --help-all, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fflush(stdout);
    fmt::print(stderr, "linkwise: {}\n", e.what());
    if (!app.get_subcommands().empty())
      fmt::print(stderr, "run 'linkwise {} --help' for its flags\n",
                 app.get_subcommands().front()->get_name());
    return 2;
  }
  try {
    for (auto& [sub, handler] : handlers)
      if (sub->parsed()) return handler();
  } catch (const InputError& e) {
    std::fflush(stdout);
    fmt::print(stderr, "linkwise: error: {}\n", e.what());
    return 2;
  } catch (const RuntimeError& e) {
    std::fflush(stdout);
    fmt::print(stderr, "linkwise: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "linkwise: internal error: {}\n", e.what());
    return 1;
  }
  return 2;
}
