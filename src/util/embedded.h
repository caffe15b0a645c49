// Data files compiled into the library (see cmake/LinkwiseHelpers.cmake).
#pragma once

#include <string_view>
#include <vector>

namespace linkwise::detail {

struct EmbeddedFile {
  std::string_view path;  ///< relative to the source tree, e.g. "data/presets/dgx-h100.yaml"
  std::string_view contents;
};

/// Every embedded file, sorted by path.
const std::vector<EmbeddedFile>& embedded_files();

/// The embedded file at `path`, or nullptr.
const EmbeddedFile* find_embedded(std::string_view path);

}  // namespace linkwise::detail
