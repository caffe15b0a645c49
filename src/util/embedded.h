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

/// Whether a name given for a preset or a file (a chassis, a model) is written as a file path: it
/// holds a '/' or ends in .yaml or .yml, as no preset id does; a missing one is then reported as a
/// missing file (util/text.cc).
bool looks_like_path(std::string_view name);

}  // namespace linkwise::detail
