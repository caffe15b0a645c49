#include "linkwise/measure/nccl_tests_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

#include "linkwise/comm/sweep.h"

namespace linkwise::measure {

namespace {

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// A line without its carriage return and mpirun's "[1,0]<stdout>:" tag.
std::string clean_line(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (!line.empty() && line.front() == '[') {
    auto tag = line.find("]<stdout>:");
    if (tag != std::string::npos) line = line.substr(tag + 10);
  }
  return line;
}

// The words after a leading '#', or nothing when the line is not a comment.
std::vector<std::string> comment_words(const std::string& line) {
  auto start = line.find_first_not_of(" \t");
  if (start == std::string::npos || line[start] != '#') return {};
  return words(line.substr(start + 1));
}

bool is_time(const std::string& w) { return w == "time" || w == "cputime"; }

bool is_column_header(const std::vector<std::string>& w) {
  return std::find(w.begin(), w.end(), "size") != w.end() &&
         std::find(w.begin(), w.end(), "busbw") != w.end() &&
         std::find_if(w.begin(), w.end(), is_time) != w.end();
}

bool all_digits(const std::string& w) {
  return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}

// The columns as the header names them: the leading ones (size, count, ...) and each group's.
struct Layout {
  std::vector<std::string> lead;
  std::vector<std::vector<std::string>> groups;
};

Layout layout_of(const std::vector<std::string>& header) {
  Layout l;
  for (const auto& w : header) {
    if (is_time(w)) l.groups.emplace_back();
    (l.groups.empty() ? l.lead : l.groups.back()).push_back(w);
  }
  return l;
}

double number(const std::string& w, const SourceLocation& where, const std::string& column) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(w, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != w.size() || !(v >= 0))
    throw InputError(
        fmt::format("nccl-tests log: '{}' in the {} column is not a figure", w, column), where);
  return v;
}

NcclTestsFigures read_group(const std::vector<std::string>& names,
                            const std::vector<std::string>& values, std::size_t at,
                            const SourceLocation& where) {
  NcclTestsFigures f;
  for (std::size_t i = 0; i < names.size() && at + i < values.size(); ++i) {
    const std::string& n = names[i];
    const std::string& v = values[at + i];
    if (is_time(n)) f.time_us = number(v, where, n);
    if (n == "algbw") f.algbw_GBps = number(v, where, n);
    if (n == "busbw") f.busbw_GBps = number(v, where, n);
    if ((n == "#wrong" || n == "error") && v != "N/A") f.wrong = number(v, where, n);
  }
  return f;
}

NcclTestsRow read_row(const Layout& l, const std::vector<std::string>& w,
                      const SourceLocation& where) {
  if (w.size() < l.lead.size() + 3)
    throw InputError(fmt::format("nccl-tests log: a row of {} columns; the header names {}",
                                 w.size(), l.lead.size() + l.groups.front().size()),
                     where);
  NcclTestsRow row;
  row.line = where.line;
  for (std::size_t i = 0; i < l.lead.size(); ++i) {
    const auto& n = l.lead[i];
    if (n == "size") row.bytes = static_cast<std::uint64_t>(number(w[i], where, n));
    if (n == "count") row.count = static_cast<std::uint64_t>(number(w[i], where, n));
    if (n == "type") row.type = w[i];
    if (n == "redop") row.redop = w[i];
    if (n == "root") row.root = w[i] == "-1" ? -1 : static_cast<int>(number(w[i], where, n));
  }
  const std::size_t rest = w.size() - l.lead.size();
  const std::size_t first = l.groups[0].size();
  if (l.groups.size() >= 2 && rest >= first + 3) {
    row.out_of_place = read_group(l.groups[0], w, l.lead.size(), where);
    row.in_place = read_group(l.groups[1], w, l.lead.size() + first, where);
  } else if (l.groups.size() >= 2) {  // the out-of-place group left blank: in-place only
    row.in_place = read_group(l.groups[1], w, l.lead.size(), where);
  } else {
    row.out_of_place = read_group(l.groups[0], w, l.lead.size(), where);
  }
  return row;
}

// The collective a test binary or file name stands for ("all_reduce_perf", "allgather.log"), or "".
std::string op_named_in(std::string name) {
  for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::vector<std::pair<std::string, std::string>> names = {
      {"all_reduce", "all_reduce"},
      {"allreduce", "all_reduce"},
      {"all_gather", "all_gather"},
      {"allgather", "all_gather"},
      {"reduce_scatter", "reduce_scatter"},
      {"reducescatter", "reduce_scatter"},
      {"alltoall", "alltoall"},
      {"sendrecv", "sendrecv"},
      {"broadcast", "broadcast"},
      {"reduce", "reduce"}};
  for (const auto& [n, op] : names)
    if (name.find(n) != std::string::npos) return op;
  return "";
}

}  // namespace

bool looks_like_nccl_tests_log(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (is_column_header(comment_words(clean_line(line)))) return true;
  return false;
}

NcclTestsLog parse_nccl_tests_log(const std::string& text, const std::string& filename) {
  NcclTestsLog log;
  log.file = filename;
  std::optional<Layout> layout;
  int threads = 0, gpus = 0, max_rank = -1;
  std::istringstream in(text);
  int number_of_line = 0;
  for (std::string raw; std::getline(in, raw);) {
    ++number_of_line;
    const std::string line = clean_line(raw);
    const SourceLocation where{filename, number_of_line, 0};
    auto c = comment_words(line);
    if (!c.empty()) {
      if (is_column_header(c)) {
        layout = layout_of(c);
      } else if (c[0] == "Rank" && c.size() >= 2 && all_digits(c[1])) {
        max_rank = std::max(max_rank, std::stoi(c[1]));
        auto close = line.find("] ");
        if (close != std::string::npos) log.devices.push_back(line.substr(close + 2));
      } else if (c[0] == "nThread" && c.size() >= 4 && c[2] == "nGpus" && all_digits(c[1]) &&
                 all_digits(c[3])) {
        threads = std::stoi(c[1]);
        gpus = std::stoi(c[3]);
      } else if (c.size() >= 4 && c[0] == "Collective" && c[1] == "test" && c[2] == "starting:") {
        log.test = c[3];
      } else if (c.size() >= 5 && c[0] == "Avg" && c[1] == "bus" && c[2] == "bandwidth") {
        log.avg_busbw_GBps = number(c[4], where, "Avg bus bandwidth");
      }
      continue;
    }
    auto w = words(line);
    if (w.empty() || !all_digits(w[0]) || !layout) continue;  // NCCL INFO lines, warnings
    log.rows.push_back(read_row(*layout, w, where));
  }
  if (!layout)
    throw InputError(
        "not an nccl-tests log: no '#  size  count  type ... busbw' column header found",
        {filename, 0, 0});
  if (log.rows.empty())
    throw InputError("nccl-tests log: a column header but no result row (did the run fail?)",
                     {filename, 0, 0});
  log.ranks = max_rank >= 0 ? max_rank + 1 : threads * gpus;
  log.op = op_named_in(log.test.empty() ? std::filesystem::path(filename).filename().string()
                                        : log.test);
  return log;
}

MeasurementFile nccl_tests_measurements(const NcclTestsLog& log) {
  const SourceLocation where{log.file, 0, 0};
  if (log.op.empty())
    throw InputError(
        log.test.empty()
            ? std::string("nccl-tests log: it does not name its test (no '# Collective test "
                          "starting:' line); name the file after it, e.g. all_reduce_perf.log")
            : fmt::format("nccl-tests log: linkwise does not model {}'s collective", log.test),
        where);
  if (log.ranks < 2)
    throw InputError(
        "nccl-tests log: it does not say how many ranks ran (no '#  Rank' or '# nThread ... nGpus' "
        "line)",
        where);
  MeasurementFile f;
  f.machine = log.devices.empty() ? "" : log.devices.front();
  f.tool = log.test.empty() ? "nccl-tests" : "nccl-tests " + log.test;
  for (const auto& row : log.rows) {
    const auto& fig = row.figures();
    if (fig.busbw_GBps <= 0) continue;  // below the log's 0.01 GB/s resolution
    Measurement m;
    m.kind = "collective";
    m.op = log.op;
    for (int g = 0; g < log.ranks; ++g) m.gpus.push_back(g);
    m.bytes = row.bytes;
    m.measured_GBps = fig.busbw_GBps;
    m.metric = "busbw";
    m.source =
        fmt::format("{} line {}", std::filesystem::path(log.file).filename().string(), row.line);
    m.note = row.out_of_place ? "out-of-place" : "in-place";
    m.where = {log.file, row.line, 0};
    f.measurements.push_back(std::move(m));
  }
  if (f.measurements.empty())
    throw InputError("nccl-tests log: every row's busbw is 0.00 (sizes too small to calibrate)",
                     where);
  return f;
}

}  // namespace linkwise::measure
