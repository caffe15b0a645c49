#include "linkwise/util/error.h"

#include <fmt/format.h>

namespace linkwise {

std::string SourceLocation::prefix() const {
  if (file.empty() && line == 0) return "";
  std::string out = file.empty() ? std::string("<input>") : file;
  if (line > 0) out += fmt::format(":{}", line);
  if (line > 0 && column > 0) out += fmt::format(":{}", column);
  return out + ": ";
}

InputError::InputError(const std::string& message, SourceLocation where)
    : std::runtime_error(where.prefix() + message), where_(std::move(where)), bare_(message) {}

}  // namespace linkwise
