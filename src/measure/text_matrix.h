// Matrices of figures as benchmark tools print them (nvbandwidth, p2pBandwidthLatencyTest): a line
// of column numbers, then one line per row, its number and a figure (or N/A) per column.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace linkwise::measure::detail {

std::vector<std::string> split_lines(const std::string& text);  ///< without '\r' and '\n'
std::vector<std::string> words(const std::string& line);        ///< split at blanks and tabs

struct MatrixCell {
  int row = 0, col = 0;
  double value = 0;  ///< > 0 (N/A and zero figures are left out)
  int line = 0;      ///< 1-based line of its row
};

struct Matrix {
  std::vector<MatrixCell> cells;
  std::size_t end = 0;  ///< index of the first line after the matrix
};

/// Reads the matrix whose column line is the first non-blank line at or after `from`; that line's
/// first word must be `corner` when `corner` is not empty (p2pBandwidthLatencyTest's "D\D"). Rows
/// run to the first line that does not start with a number. Throws InputError with file:line for a
/// row of the wrong length, a figure that is neither a number nor N/A, or a GPU number out of
/// range.
Matrix read_matrix(const std::vector<std::string>& lines, std::size_t from,
                   const std::string& filename, const std::string& corner);

}  // namespace linkwise::measure::detail
