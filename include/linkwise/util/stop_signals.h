// Stopping a long run cleanly on Ctrl-C (SIGINT) or SIGTERM.
//
//   linkwise::StopSignals signals;            // from here on, SIGINT and SIGTERM set a flag
//   while (more() && !signals.requested()) run_one();
//   return signals.exit_code();               // 0, or 130 (SIGINT) / 143 (SIGTERM)
#pragma once

namespace linkwise {

/// While alive, SIGINT and SIGTERM set a flag (a `volatile sig_atomic_t`, the only thing the
/// handler touches) instead of ending the process, so a long run can finish the step in progress,
/// keep what finished and return. The handler is installed with sigaction(SA_RESETHAND): a second
/// SIGINT (or SIGTERM) ends the process at once, as it would have without it. The previous handlers
/// come back when it is destroyed. Make one at a time.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  /// The first signal received (SIGINT or SIGTERM), or 0.
  int received() const;
  bool requested() const { return received() != 0; }
  /// The status a shell shows for a process ended by that signal, 128 + its number (130 for
  /// SIGINT, 143 for SIGTERM); 0 when none came.
  int exit_code() const;
  /// "SIGINT", "SIGTERM", or "" when none came.
  const char* name() const;
};

}  // namespace linkwise
