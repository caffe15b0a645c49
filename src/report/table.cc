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

}  // namespace linkwise::report
