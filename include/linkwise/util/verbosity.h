// Process-wide output verbosity: the CLI's --quiet.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace linkwise {

/// Quiet output: text renderers leave out known warnings and notes (topo's Warnings section,
/// probe's and collective's notes); JSON keeps them. Default off.
void set_quiet(bool quiet);
bool quiet();

/// Progress of a long loop on stderr, "what: done/total", redrawn at most every 0.2 s and cleared
/// at the end; shown only when stderr is a terminal (isatty) and output is not quiet, so pipes,
/// files and tests see nothing. One Progress draws at a time: one made while another draws is
/// silent (threads share stderr).
class Progress {
 public:
  Progress(std::string what, std::size_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  /// `done` items of `total` finished.
  void update(std::size_t done);
  bool shown() const { return on_; }

 private:
  std::string what_;
  std::size_t total_;
  bool on_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace linkwise
