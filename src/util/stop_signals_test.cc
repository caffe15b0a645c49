#include "linkwise/util/stop_signals.h"

#include <gtest/gtest.h>

#include <csignal>

namespace linkwise {
namespace {

void (*handler_of(int sig))(int) {
  struct sigaction now {};
  sigaction(sig, nullptr, &now);
  return now.sa_handler;
}

TEST(StopSignals, FirstSignalSetsTheFlagAndASecondWouldEndTheProcess) {
  auto* before = handler_of(SIGINT);
  {
    StopSignals s;
    EXPECT_FALSE(s.requested());
    EXPECT_EQ(s.exit_code(), 0);
    EXPECT_STREQ(s.name(), "");
    std::raise(SIGINT);
    EXPECT_TRUE(s.requested());
    EXPECT_EQ(s.received(), SIGINT);
    EXPECT_EQ(s.exit_code(), 130);
    EXPECT_STREQ(s.name(), "SIGINT");
    // SA_RESETHAND: the next SIGINT takes the default action (ends the process) at once.
    EXPECT_EQ(handler_of(SIGINT), SIG_DFL);
    // A later SIGTERM does not replace the first signal.
    std::raise(SIGTERM);
    EXPECT_EQ(s.exit_code(), 130);
  }
  EXPECT_EQ(handler_of(SIGINT), before);  // the previous handler is back
}

TEST(StopSignals, SigtermExitsWith143) {
  StopSignals s;
  std::raise(SIGTERM);
  EXPECT_EQ(s.received(), SIGTERM);
  EXPECT_EQ(s.exit_code(), 143);
  EXPECT_STREQ(s.name(), "SIGTERM");
}

}  // namespace
}  // namespace linkwise
