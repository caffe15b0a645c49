// How a long measurement hands each finished result to its caller as it goes, and learns that it
// should stop (Ctrl-C in `linkwise bench`, measure/bench.h).
#pragma once

#include <functional>

namespace linkwise::measure {

template <class Result>
struct Hooks {
  /// Called with each result as it finishes, in order. May be empty.
  std::function<void(const Result&)> finished;
  /// Polled before each result and between its samples (iterations); once it returns true the
  /// measurement returns what finished and drops the result cut short. May be empty (never stop).
  std::function<bool()> stop;

  bool stopping() const { return stop && stop(); }
  void done(const Result& r) const {
    if (finished) finished(r);
  }
};

}  // namespace linkwise::measure
