#include "linkwise/report/table.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace linkwise::report {

namespace {
// A cell that is a whole number (strtod reads it to the end) is right-aligned.
bool numeric(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}
}  // namespace

std::size_t display_width(std::string_view s) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    // The code point and its length in bytes; a stray or truncated byte counts as one column.
    std::uint32_t cp = c;
    std::size_t len = c < 0x80           ? 1
                      : (c >> 5) == 0x6  ? 2
                      : (c >> 4) == 0xE  ? 3
                      : (c >> 3) == 0x1E ? 4
                                         : 1;
    if (len > 1 && i + len <= s.size()) {
      cp = c & (0x7F >> len);
      for (std::size_t k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xC0) != 0x80) {
          len = 1;
          cp = c;
          break;
        }
        cp = (cp << 6) | (b & 0x3F);
      }
    } else {
      len = 1;
    }
    i += len;
    const bool combining = (cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x200B && cp <= 0x200F) ||
                           (cp >= 0xFE00 && cp <= 0xFE0F);
    const bool wide = (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
                      (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
                      (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
                      (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) ||
                      (cp >= 0x1F900 && cp <= 0x1F9FF) || (cp >= 0x20000 && cp <= 0x3FFFD);
    width += combining ? 0 : wide ? 2 : 1;
  }
  return width;
}

std::string Table::render() const {
  std::size_t cols = header_.size();
  for (const auto& r : rows_) cols = std::max(cols, r.size());
  std::vector<std::size_t> width(cols, 0);
  auto measure = [&](const std::vector<std::string>& r) {
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], display_width(r[i]));
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  auto line = [&](const std::vector<std::string>& r) {
    std::string out;
    for (std::size_t i = 0; i < cols; ++i) {
      std::string cell = i < r.size() ? r[i] : "";
      std::string pad(width[i] - display_width(cell), ' ');
      out += numeric(cell) ? pad + cell : cell + (i + 1 < cols ? pad : "");
      if (i + 1 < cols) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out;
  if (!header_.empty()) out += line(header_);
  for (const auto& r : rows_) out += line(r);
  return out;
}

namespace {

// The byte offset of display column `col` in `line` (or its size).
std::size_t offset_of_column(const std::string& line, std::size_t col) {
  std::size_t pos = 0;
  while (pos < line.size() && display_width(std::string_view(line).substr(0, pos)) < col) {
    ++pos;
    while (pos < line.size() && (static_cast<unsigned char>(line[pos]) & 0xC0) == 0x80) ++pos;
  }
  return pos;
}

void fit_line(std::string line, std::size_t width, std::string& out) {
  const bool comment = !line.empty() && line[0] == '#';
  const std::size_t indent = std::min(line.size(), line.find_first_not_of(comment ? "# " : " "));
  std::size_t hang = 0;  // the continuation's indent, fixed by the first line
  bool first = true;
  while (display_width(line) > width) {
    const std::size_t from = first ? indent : hang;
    const std::size_t limit = offset_of_column(line, width);
    std::size_t cut = line.rfind(' ', limit);
    if (cut == std::string::npos || cut <= from) cut = line.find(' ', limit);
    if (cut == std::string::npos) break;
    if (first) {
      // A table row continues under its last column; prose four columns in.
      hang = indent + 4;
      std::size_t column = line.rfind("  ", cut);
      if (column != std::string::npos && column > indent) {
        column = line.find_first_not_of(' ', column);
        if (column < cut && column < width / 2)
          hang = display_width(std::string_view(line).substr(0, column));
      }
      first = false;
    }
    out += line.substr(0, cut) + "\n";
    const std::size_t next = line.find_first_not_of(' ', cut);
    const std::string rest = next == std::string::npos ? "" : line.substr(next);
    line =
        (comment ? "#" + std::string(hang > 1 ? hang - 1 : 1, ' ') : std::string(hang, ' ')) + rest;
  }
  out += line;
}

}  // namespace

std::string fit_width(const std::string& text, std::size_t width) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    const bool last = nl == std::string::npos;
    fit_line(text.substr(pos, last ? std::string::npos : nl - pos), width, out);
    if (last) break;
    out += '\n';
    pos = nl + 1;
  }
  return out;
}

}  // namespace linkwise::report
