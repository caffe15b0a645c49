#include "linkwise/report/table.h"

#include <algorithm>
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

std::string Table::render() const {
  std::size_t cols = header_.size();
  for (const auto& r : rows_) cols = std::max(cols, r.size());
  std::vector<std::size_t> width(cols, 0);
  auto measure = [&](const std::vector<std::string>& r) {
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  auto line = [&](const std::vector<std::string>& r) {
    std::string out;
    for (std::size_t i = 0; i < cols; ++i) {
      std::string cell = i < r.size() ? r[i] : "";
      std::string pad(width[i] - cell.size(), ' ');
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
