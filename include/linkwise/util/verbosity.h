// Process-wide output verbosity: the CLI's --quiet.
#pragma once

namespace linkwise {

/// Quiet output: text renderers leave out known warnings and notes (topo's Warnings section,
/// probe's and collective's notes); JSON keeps them. Default off.
void set_quiet(bool quiet);
bool quiet();

}  // namespace linkwise
