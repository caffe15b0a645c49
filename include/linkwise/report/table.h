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

/// The widest line every command's text output keeps to (README, "Output"), except layouts other
/// tools define: nvidia-smi's topology matrix and nccl-tests' result table.
inline constexpr std::size_t kMaxColumns = 100;

/// `text` with every line wider than `width` display columns wrapped at spaces. A continuation
/// starts under the line's last column (the text after its last run of two or more spaces, as in a
/// table row) or four columns in from the line's indent; a '#' comment line continues as "#" and
/// spaces (three or more). A single word wider than `width` stays whole.
std::string fit_width(const std::string& text, std::size_t width = kMaxColumns);

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
