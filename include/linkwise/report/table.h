// A plain text table with aligned columns, as every command prints by default.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "linkwise/util/text.h"

namespace linkwise::report {

/// Columns `s` takes in a terminal: UTF-8 code points, East Asian wide ones (CJK, emoji) two,
/// combining marks none (so "µs", "GB/s →" and "≤" line up as one column each).
std::size_t display_width(std::string_view s);

class Table {
 public:
  void header(std::vector<std::string> cells) { header_ = std::move(cells); }
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  /// Columns padded to their widest cell (in display columns), two spaces apart; numbers
  /// right-aligned, text left-aligned.
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace linkwise::report
