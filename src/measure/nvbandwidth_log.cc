#include "measure/nvbandwidth_log.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "measure/text_matrix.h"

namespace linkwise::measure::detail {

namespace {

struct Case {
  const char* name;
  const char* kind;
  bool doubled;  ///< one direction of a bidirectional run: doubled for linkwise's sum
};

// nvbandwidth testcase.h: the testcases that measure one copy (or one pair of opposite copies).
constexpr Case kCases[] = {
    {"host_to_device_memcpy_ce", "h2d", false},
    {"host_to_device_memcpy_sm", "h2d", false},
    {"device_to_host_memcpy_ce", "d2h", false},
    {"device_to_host_memcpy_sm", "d2h", false},
    {"host_to_device_bidirectional_memcpy_ce", "bidir", true},
    {"host_to_device_bidirectional_memcpy_sm", "bidir", true},
    {"device_to_host_bidirectional_memcpy_ce", "bidir", true},
    {"device_to_host_bidirectional_memcpy_sm", "bidir", true},
    {"device_to_device_memcpy_read_ce", "p2p", false},
    {"device_to_device_memcpy_write_ce", "p2p", false},
    {"device_to_device_memcpy_read_sm", "p2p", false},
    {"device_to_device_memcpy_write_sm", "p2p", false},
    {"device_to_device_bidirectional_memcpy_read_ce", "p2p_bidir", true},
    {"device_to_device_bidirectional_memcpy_write_ce", "p2p_bidir", true},
    {"device_to_device_bidirectional_memcpy_read_sm", "p2p_bidir", false},
    {"device_to_device_bidirectional_memcpy_write_sm", "p2p_bidir", false},
};

// "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)" (older releases: "GPU(columns) <-
// CPU(rows)"): which side is the CPU, and which way data moves between row and column.
struct Header {
  bool row_is_cpu = false, col_is_cpu = false;
  int arrow = 0;  ///< 1: row -> column, -1: row <- column, 0: both ways
};

std::optional<Header> parse_header(const std::string& line) {
  auto w = words(line);
  if (w.size() != 7 || w[0] != "memcpy" || (w[1] != "CE" && w[1] != "SM") || w[5] != "bandwidth" ||
      w[6] != "(GB/s)")
    return std::nullopt;
  auto side = [](const std::string& s, bool* cpu, bool* row) {
    auto p = s.find('(');
    if (p == std::string::npos || s.back() != ')') return false;
    std::string who = s.substr(0, p), role = s.substr(p + 1, s.size() - p - 2);
    if ((who != "CPU" && who != "GPU") ||
        (role != "row" && role != "rows" && role != "column" && role != "columns"))
      return false;
    *cpu = who == "CPU";
    *row = role.rfind("row", 0) == 0;
    return true;
  };
  bool lcpu = false, lrow = false, rcpu = false, rrow = false;
  if (!side(w[2], &lcpu, &lrow) || !side(w[4], &rcpu, &rrow) || lrow == rrow) return std::nullopt;
  int arrow = w[3] == "->" ? 1 : w[3] == "<-" ? -1 : w[3] == "<->" ? 0 : 2;
  if (arrow == 2) return std::nullopt;
  Header h;
  if (!lrow) arrow = -arrow;  // written column first: turn it round
  h.arrow = arrow;
  h.row_is_cpu = lrow ? lcpu : rcpu;
  h.col_is_cpu = lrow ? rcpu : lcpu;
  return h;
}

const Case* find_case(const std::string& name) {
  for (const auto& c : kCases)
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace

bool is_nvbandwidth_log(const std::string& text) {
  bool running = false;
  for (const auto& l : split_lines(text)) {
    if (l.rfind("Running ", 0) == 0) running = true;
    if (running && parse_header(l)) return true;
  }
  return false;
}

MeasurementFile parse_nvbandwidth_log(const std::string& text, const std::string& filename) {
  MeasurementFile f;
  f.tool = "nvbandwidth";
  const auto lines = split_lines(text);
  std::string testcase;
  std::vector<std::string> skipped;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.rfind("nvbandwidth Version: ", 0) == 0) f.tool = "nvbandwidth " + l.substr(21);
    if (l.rfind("Running ", 0) == 0 && l.size() > 9 && l.back() == '.') {
      testcase = l.substr(8, l.size() - 9);
      continue;
    }
    auto h = parse_header(l);
    if (!h) continue;
    Matrix m = read_matrix(lines, i + 1, filename, "");
    i = m.end - 1;
    const Case* c = find_case(testcase);
    if (!c) {
      if (!testcase.empty() && std::find(skipped.begin(), skipped.end(), testcase) == skipped.end())
        skipped.push_back(testcase);
      continue;
    }
    const bool host = std::string(c->kind) == "h2d" || std::string(c->kind) == "d2h" ||
                      std::string(c->kind) == "bidir";
    for (const auto& cell : m.cells) {
      if (host == (h->row_is_cpu == h->col_is_cpu)) break;  // not the shape this testcase prints
      if (!host && cell.row == cell.col) continue;
      Measurement e;
      e.kind = c->kind;
      e.engine = testcase.substr(testcase.size() - 2);
      if (host) {
        e.gpus = {h->row_is_cpu ? cell.col : cell.row};
      } else {
        e.gpus = h->arrow >= 0 ? std::vector<int>{cell.row, cell.col}
                               : std::vector<int>{cell.col, cell.row};
      }
      e.measured_GBps = c->doubled ? 2 * cell.value : cell.value;
      e.source = "nvbandwidth " + testcase;
      if (c->doubled)
        e.note = fmt::format(
            "nvbandwidth printed {:.2f} GB/s for the measured direction while the opposite copy "
            "ran; doubled for the sum of both directions (taken as alike)",
            cell.value);
      e.where = {filename, cell.line, 0};
      f.measurements.push_back(std::move(e));
    }
  }
  if (!skipped.empty()) f.extra["skipped_testcases"] = skipped;
  if (f.measurements.empty())
    throw InputError(
        skipped.empty()
            ? std::string("nvbandwidth output without a bandwidth matrix")
            : fmt::format("nvbandwidth output holds no testcase calibrate reads (skipped: {}); "
                          "run e.g. -t host_to_device_memcpy_ce device_to_device_memcpy_write_ce",
                          fmt::join(skipped, ", ")),
        {filename, 0, 0});
  return f;
}

}  // namespace linkwise::measure::detail
