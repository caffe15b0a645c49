// Errors shared by every module.
//
// Invalid input and API misuse throw InputError, which carries where the bad value was (file, line,
// column) and the value itself; main() maps it to exit code 2. Failures of the machine or of a
// measurement at run time throw RuntimeError (exit code 1). Expected absences (no GPU, no NVML, a
// missing sysfs file) are not exceptions: the functions that meet them return a status.
#pragma once

#include <stdexcept>
#include <string>

namespace linkwise {

/// Where a value came from: a file and a 1-based line and column, any of which may be unknown.
struct SourceLocation {
  std::string file;  ///< empty when the value did not come from a file
  int line = 0;      ///< 1-based; 0 when unknown
  int column = 0;    ///< 1-based; 0 when unknown

  /// "file:line:column: " (only the known parts), or "" when nothing is known.
  std::string prefix() const;
};

/// Bad input: a malformed file, an unknown name, an impossible topology, a bad flag.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message, SourceLocation where = {});
  const SourceLocation& where() const { return where_; }
  /// The message without the location prefix.
  const std::string& bare_message() const { return bare_; }

 private:
  SourceLocation where_;
  std::string bare_;
};

/// A failure at run time that is not the user's input: a device call failed, a file could not be
/// written.
class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace linkwise
