#include "measure/text_matrix.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "linkwise/util/error.h"
#include "linkwise/util/limits.h"

namespace linkwise::measure::detail {

namespace {

constexpr int kMaxGpuNumber = 4095;

std::optional<int> gpu_number(const std::string& w) {
  int v = -1;
  auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
  if (ec != std::errc() || end != w.data() + w.size() || v < 0 || v > kMaxGpuNumber)
    return std::nullopt;
  return v;
}

std::optional<double> figure(const std::string& w) {
  double v = 0;
  auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
  if (ec != std::errc() || end != w.data() + w.size() || !std::isfinite(v) || v < 0)
    return std::nullopt;
  return v;
}

bool starts_with_digit(const std::string& l) {
  auto p = l.find_first_not_of(" \t");
  return p != std::string::npos && l[p] >= '0' && l[p] <= '9';
}

}  // namespace

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t e = text.find('\n', start);
    if (e == std::string::npos) e = text.size();
    std::string l = text.substr(start, e - start);
    if (!l.empty() && l.back() == '\r') l.pop_back();
    out.push_back(std::move(l));
    start = e + 1;
  }
  return out;
}

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::size_t p = 0;
  while ((p = line.find_first_not_of(" \t", p)) != std::string::npos) {
    std::size_t e = line.find_first_of(" \t", p);
    if (e == std::string::npos) e = line.size();
    out.push_back(line.substr(p, e - p));
    p = e;
  }
  return out;
}

Matrix read_matrix(const std::vector<std::string>& lines, std::size_t from,
                   const std::string& filename, const std::string& corner) {
  std::size_t i = from;
  while (i < lines.size() && words(lines[i]).empty()) ++i;
  auto where = [&](std::size_t at) {
    return SourceLocation{filename, static_cast<int>(at + 1), 0};
  };
  if (i == lines.size()) throw InputError("a matrix header without its matrix", where(from - 1));
  auto head = words(lines[i]);
  if (!corner.empty()) {
    if (head.empty() || head.front() != corner)
      throw InputError(fmt::format("expected the matrix's '{}' line, not '{}'", corner,
                                   limits::quote_value(lines[i])),
                       where(i));
    head.erase(head.begin());
  }
  std::vector<int> cols;
  for (const auto& w : head) {
    auto c = gpu_number(w);
    if (!c)
      throw InputError(fmt::format("'{}' is not a GPU number in the matrix's column line",
                                   limits::quote_value(w)),
                       where(i));
    cols.push_back(*c);
  }
  if (cols.empty()) throw InputError("a matrix without columns", where(i));
  Matrix m;
  for (++i; i < lines.size() && starts_with_digit(lines[i]); ++i) {
    auto w = words(lines[i]);
    auto row = gpu_number(w[0]);
    if (!row)
      throw InputError(
          fmt::format("'{}' is not a GPU number starting a matrix row", limits::quote_value(w[0])),
          where(i));
    if (w.size() != cols.size() + 1)
      throw InputError(
          fmt::format("a matrix row of {} figure(s) under {} column(s)", w.size() - 1, cols.size()),
          where(i));
    for (std::size_t k = 0; k < cols.size(); ++k) {
      const std::string& s = w[k + 1];
      if (s == "N/A") continue;
      auto v = figure(s);
      if (!v)
        throw InputError(
            fmt::format("'{}' is neither a figure (GB/s) nor N/A", limits::quote_value(s)),
            where(i));
      if (*v > 0) m.cells.push_back({*row, cols[k], *v, static_cast<int>(i + 1)});
    }
  }
  m.end = i;
  return m;
}

}  // namespace linkwise::measure::detail
