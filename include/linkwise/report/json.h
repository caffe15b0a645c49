// The one JSON convention of every command's --json (docs/json.md): an object at the top with
// "schema_version"; snake_case names with units in them (_s, _us, _GBps, _GiB, bytes); fractions as
// 0..1 (never percentages); ids as the tables print them; lists rather than counts.
#pragma once

#include <nlohmann/json.hpp>

namespace linkwise::report {

/// Raised when a key is renamed or removed, or a value changes meaning (docs/json.md keeps the
/// history).
inline constexpr int kSchemaVersion = 1;

/// `j` (an object) with "schema_version" set.
inline nlohmann::json with_schema(nlohmann::json j) {
  j["schema_version"] = kSchemaVersion;
  return j;
}

}  // namespace linkwise::report
