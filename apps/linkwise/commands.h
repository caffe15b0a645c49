// The subcommand table of the linkwise executable. Each command lives in its own cmd_*.cc: it
// declares its flags on a CLI11 subcommand, fills an options struct, and returns a handler that
// calls the library.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "linkwise/topo/chassis_options.h"
#include "linkwise/util/option_spec.h"
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

/// Declares one described option on `sub`, bound to its field of `target` (util/option_spec.h).
template <class S>
CLI::Option* add_option(CLI::App& sub, const OptionSpec<S>& spec, S& target) {
  auto declare = [&](auto field) -> CLI::Option* {
    auto& value = field(target);
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_same_v<T, bool>) {
      return sub.add_flag(spec.flags, value, spec.help);
    } else {
      CLI::Option* o = sub.add_option(spec.flags, value, spec.help);
      if constexpr (std::is_same_v<T, int> || std::is_same_v<T, double>) {
        // Not a number at all ("abc", or "1.5" for a count): said so before CLI::Range would call
        // it "not in range".
        o->check(CLI::Validator(
            [](std::string& s) {
              T x{};
              return CLI::detail::lexical_cast(s, x)
                         ? std::string()
                         : std::string(std::is_same_v<T, int> ? "must be a whole number, not '"
                                                              : "must be a number, not '") +
                               s + "'";
            },
            ""));  // no description: --help shows the type and range as before
      }
      if constexpr (std::is_same_v<T, int>) {
        if (spec.lo < spec.hi) o->check(CLI::Range(int(spec.lo), int(spec.hi)));
      } else if constexpr (std::is_same_v<T, double>) {
        if (spec.lo < spec.hi) o->check(CLI::Range(spec.lo, spec.hi));
      }
      return o;
    }
  };
  CLI::Option* opt = std::visit(declare, spec.field);
  if (spec.positive)  // CLI::PositiveNumber would print its range, up to DBL_MAX, in full
    opt->check(CLI::Validator(
        [](std::string& s) {
          double x = 0;
          return CLI::detail::lexical_cast(s, x) && x > 0 && std::isfinite(x)
                     ? std::string()
                     : "must be a positive finite number, not " + s;
        },
        "POSITIVE"));
  if (spec.has(OptionSpec<S>::kRequired)) opt->required();
  if (spec.has(OptionSpec<S>::kLast)) opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  if (spec.has(OptionSpec<S>::kOneArg)) opt->allow_extra_args(false);
  if (!spec.type_name.empty()) opt->type_name(spec.type_name);
  if (!spec.needs.empty()) opt->needs(sub.get_option(spec.needs));
  return opt;
}
/// Declares every option of `specs`, in order.
template <class S>
void add_options(CLI::App& sub, const std::vector<OptionSpec<S>>& specs, S& target) {
  for (const auto& spec : specs) add_option(sub, spec, target);
}
/// --json, and the output file option (`names`, "-o,--output" unless the command uses -o itself).
void add_json_output_flags(CLI::App& sub, bool& json, std::string& output,
                           const std::string& names = "-o,--output");
/// Applies the `nccl:` settings of `chassis` (a preset or a file; nothing when empty) as
/// `collective` does (comm::nccl_options), for the commands that read the chassis without applying
/// them: a setting NCCL does not have or a value it does not take exits 2 with file:line and the
/// value.
void check_nccl_settings(const std::string& chassis);

/// The names of the options given on the command line ("CHASSIS" for a positional).
std::vector<std::string> given_options(const CLI::App& sub);

/// train's flags in one string ("--model llama3-70b --mode lora", "train" in front optional) as
/// options for a job on `chassis`; throws InputError naming the flag.
work::TrainOptions train_job_options(std::string job, const std::string& chassis, int nodes);

}  // namespace linkwise::cli
