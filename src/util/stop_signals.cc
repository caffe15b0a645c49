#include "linkwise/util/stop_signals.h"

#include <csignal>

namespace linkwise {

namespace {

volatile std::sig_atomic_t g_received = 0;
struct sigaction g_old_int, g_old_term;

extern "C" void on_stop_signal(int sig) {
  if (g_received == 0) g_received = sig;
}

void install(int sig, struct sigaction* old) {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  // SA_RESETHAND: the signal's default action is back once the handler has run, so a second one
  // ends the process. SA_RESTART: a read or sleep interrupted by the first one carries on.
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  sigaction(sig, &sa, old);
}

}  // namespace

StopSignals::StopSignals() {
  g_received = 0;
  install(SIGINT, &g_old_int);
  install(SIGTERM, &g_old_term);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

int StopSignals::received() const { return g_received; }

int StopSignals::exit_code() const { return g_received ? 128 + g_received : 0; }

const char* StopSignals::name() const {
  return g_received == SIGINT ? "SIGINT" : g_received == SIGTERM ? "SIGTERM" : "";
}

}  // namespace linkwise
