// Each command's flags are declared from the library's description of its options
// (util/option_spec.h): every described option is in the command's help with its help text, and
// a described range is enforced on the command line.
#include <gtest/gtest.h>

#include "cli_runner.h"
#include "linkwise/comm/sweep.h"
#include "linkwise/measure/bench.h"
#include "linkwise/measure/calibrate_run.h"
#include "linkwise/probe/probe_run.h"
#include "linkwise/work/serve_run.h"
#include "linkwise/work/train_run.h"

namespace linkwise::testing {
namespace {

template <class S>
void expect_help_lists(const std::string& command, const std::vector<OptionSpec<S>>& specs) {
  auto r = run_cli(command + " --help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string help = flat(r.out);
  for (const auto& spec : specs) {
    EXPECT_NE(help.find(spec.cli_name()), std::string::npos) << command << ": " << spec.flags;
    EXPECT_NE(help.find(flat(spec.help)), std::string::npos) << command << ": " << spec.help;
  }
}

TEST(OptionsCli, HelpListsEveryDescribedOption) {
  expect_help_lists("collective", comm::sweep_options());
  expect_help_lists("train", work::train_options());
  expect_help_lists("serve", work::serve_options());
  expect_help_lists("probe", probe::probe_options());
  expect_help_lists("calibrate", measure::calibrate_options());
  expect_help_lists("bench", measure::bench_flags());
}

TEST(OptionsCli, DescribedRangesAreChecked) {
  auto r = run_cli("train dgx-h100 --model llama3-8b --seq 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--seq: Value 0 not in range 1 to 16777216"), std::string::npos) << r.err;
  r = run_cli("serve dgx-h100 --model llama3.1-8b --prefix-cache 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--prefix-cache: Value 1 not in range 0.000000 to 0.999999"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace linkwise::testing
