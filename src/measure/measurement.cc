#include "linkwise/measure/measurement.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "linkwise/comm/collective.h"
#include "linkwise/hw/catalog.h"
#include "linkwise/util/limits.h"
#include "linkwise/util/text.h"
#include "measure/nvbandwidth_log.h"
#include "measure/p2p_matrix_log.h"

namespace linkwise::measure {

const std::vector<std::string>& measurement_kinds() {
  static const std::vector<std::string> k = {"h2d",       "d2h",       "bidir",      "p2p",
                                             "p2p_bidir", "d2d_local", "collective", "link"};
  return k;
}

namespace {

using nlohmann::json;

const std::set<std::string> kKnownKeys = {
    "kind",          "gpus",   "op",   "algo",  "engine",  "peer_access", "bytes",
    "measured_GBps", "metric", "tech", "width", "chassis", "source",      "note"};

// The 1-based line of each element of the top-level "measurements" array, found by a scan of the
// text that skips strings (nlohmann::json keeps no positions). Empty when the text has no such
// array.
std::vector<int> entry_lines(const std::string& text) {
  std::vector<int> lines;
  int line = 1, depth = 0;
  bool in_array = false, want_element = false, after_key = false;
  std::string last_string;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') continue;
    if (in_array && want_element && depth == 2 && c != ']') {
      lines.push_back(line);
      want_element = false;
    }
    if (c == '"') {
      std::size_t start = ++i;
      while (i < text.size() && text[i] != '"') {
        if (text[i] == '\\')
          ++i;
        else if (text[i] == '\n')
          ++line;
        ++i;
      }
      if (depth == 1 && !in_array) last_string = text.substr(start, i - start);
      continue;
    }
    if (c == ':' && depth == 1)
      after_key = last_string == "measurements";
    else if (c == '{' || c == '[') {
      if (c == '[' && depth == 1 && after_key && lines.empty()) {
        in_array = true;
        want_element = true;
      }
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
      if (in_array && depth == 1) return lines;
    } else if (c == ',' && in_array && depth == 2) {
      want_element = true;
    } else if (c == ',' && depth == 1) {
      after_key = false;
    }
  }
  return lines;
}

// The file being read and its entries' lines, for messages.
thread_local const std::vector<int>* g_entry_lines = nullptr;

[[noreturn]] void bad(const std::string& file, std::size_t i, const std::string& msg) {
  int line = g_entry_lines && i < g_entry_lines->size() ? (*g_entry_lines)[i] : 0;
  throw InputError(fmt::format("measurements[{}]: {}", i, msg), SourceLocation{file, line, 0});
}

// A JSON value for a message, cut to a readable length.
std::string shown(const json& v) { return limits::quote_value(v.dump()); }

template <typename T>
T get(const json& e, const char* key, const std::string& file, std::size_t i, T fallback) {
  if (!e.contains(key)) return fallback;
  try {
    return e.at(key).get<T>();
  } catch (const json::exception&) {
    bad(file, i, fmt::format("'{}' has the wrong type: {}", key, shown(e.at(key))));
  }
}

// No figure a GPU takes part in comes near this: 12.5 x the fastest memory in the catalog (B200,
// 8 TB/s, data/catalog.yaml). derived: a larger figure is a wrong unit or a typo.
constexpr double kMaxGBps = 1e5;

// 'bytes', when given: a whole, positive number of bytes (0 in Measurement means "not given").
std::uint64_t get_bytes(const json& e, const std::string& file, std::size_t i) {
  if (!e.contains("bytes")) return 0;
  const json& b = e.at("bytes");
  double v = b.is_number() ? b.get<double>() : -1;
  bool whole = b.is_number_unsigned() || (b.is_number_float() && v == std::floor(v) && v < 1.8e19);
  if (!whole || v <= 0)
    bad(file, i, fmt::format("'bytes' must be a positive whole number of bytes, not {}", shown(b)));
  return b.is_number_unsigned() ? b.get<std::uint64_t>() : static_cast<std::uint64_t>(v);
}

// The GPU numbers each kind needs: exactly one or two, or at least two for collectives; all
// different.
void check_gpus(const Measurement& m, const std::string& file, std::size_t i) {
  if (m.kind == "link") return;
  bool pair = m.kind == "p2p" || m.kind == "p2p_bidir";
  std::size_t need = m.kind == "collective" || pair ? 2 : 1;
  if (m.kind == "collective" ? m.gpus.size() < need : m.gpus.size() != need)
    bad(file, i,
        fmt::format("kind '{}' needs {}{} GPU number(s) in 'gpus', not {}", m.kind,
                    m.kind == "collective" ? "at least " : "", need, json(m.gpus).dump()));
  for (std::size_t k = 0; k < m.gpus.size(); ++k) {
    if (m.gpus[k] < 0)
      bad(file, i, fmt::format("'gpus' has GPU {}: GPU numbers start at 0", m.gpus[k]));
    for (std::size_t j = 0; j < k; ++j)
      if (m.gpus[j] == m.gpus[k])
        bad(file, i, fmt::format("'gpus' lists GPU {} twice: {}", m.gpus[k], json(m.gpus).dump()));
  }
}

// comm::Op op and algorithm, link technology and width: the names and widths the model knows.
void check_names(const Measurement& m, const std::string& file, std::size_t i) {
  auto known = [&](const char* key, auto parse, const std::string& value) {
    try {
      parse(value);
    } catch (const InputError& e) {
      bad(file, i, fmt::format("'{}': {}", key, e.bare_message()));
    }
  };
  if (m.kind == "collective") {
    if (m.op.empty()) bad(file, i, "a collective needs 'op'");
    known("op", comm::parse_op, m.op);
    if (!m.algo.empty()) known("algo", comm::parse_algo, m.algo);
    if (m.metric != "busbw")
      bad(file, i, fmt::format("only the busbw metric is read, not '{}'", m.metric));
  }
  if (m.kind != "link") return;
  if (m.tech.empty() || m.width <= 0) bad(file, i, "a link needs 'tech' and a positive 'width'");
  const auto& cat = hw::Catalog::builtin();
  const hw::LinkTech* t = cat.find_link_tech(m.tech);
  if (!t) {
    std::string hint = did_you_mean(m.tech, cat.link_tech_ids());
    bad(file, i,
        fmt::format("'tech': unknown link technology '{}'{}", m.tech,
                    hint.empty() ? "" : "; " + hint));
  }
  if (!t->widths.empty() &&
      std::find(t->widths.begin(), t->widths.end(), m.width) == t->widths.end()) {
    std::vector<std::string> ws;
    for (int w : t->widths) ws.push_back(fmt::format("x{}", w));
    bad(file, i,
        fmt::format("'width' {} is not allowed for {} (allowed: {})", m.width, t->id,
                    fmt::to_string(fmt::join(ws, ", "))));
  }
}

Measurement parse_entry(const json& e, const std::string& file, std::size_t i) {
  if (!e.is_object()) bad(file, i, "each entry must be an object");
  Measurement m;
  m.where = {file, g_entry_lines && i < g_entry_lines->size() ? (*g_entry_lines)[i] : 0,
             static_cast<int>(i) + 1};
  m.kind = get<std::string>(e, "kind", file, i, "");
  const auto& kinds = measurement_kinds();
  if (m.kind.empty()) bad(file, i, "'kind' is missing");
  if (std::find(kinds.begin(), kinds.end(), m.kind) == kinds.end())
    bad(file, i,
        fmt::format("unknown kind '{}'; valid: {}", m.kind,
                    fmt::to_string(fmt::join(kinds, ", "))));
  if (e.contains("gpus")) {
    // GPU numbers: whole numbers from 0 below limits::kMaxGpuNumber (json's own conversion to int
    // would wrap 3e10 to -2147483648).
    const json& g = e.at("gpus");
    if (!g.is_array()) bad(file, i, fmt::format("'gpus' has the wrong type: {}", shown(g)));
    if (g.size() > static_cast<std::size_t>(limits::kMaxGpuNumber))
      bad(file, i,
          fmt::format("'gpus' lists {} GPUs, more than {}", g.size(), limits::kMaxGpuNumber));
    for (const auto& x : g) {
      const double v = x.is_number() ? x.get<double>() : 0.5;
      if (v != std::floor(v)) bad(file, i, fmt::format("'gpus' has the wrong type: {}", shown(g)));
      if (v < 0) bad(file, i, fmt::format("'gpus' has GPU {}: GPU numbers start at 0", shown(x)));
      if (v >= limits::kMaxGpuNumber)
        bad(file, i,
            fmt::format("'gpus' has GPU {}: GPU numbers are below {}", shown(x),
                        limits::kMaxGpuNumber));
      m.gpus.push_back(static_cast<int>(v));
    }
  }
  m.op = get<std::string>(e, "op", file, i, "");
  m.algo = get<std::string>(e, "algo", file, i, "");
  m.engine = get<std::string>(e, "engine", file, i, "ce");
  m.peer_access = get<bool>(e, "peer_access", file, i, true);
  m.bytes = get_bytes(e, file, i);
  m.metric = get<std::string>(e, "metric", file, i, m.kind == "collective" ? "busbw" : "");
  m.tech = get<std::string>(e, "tech", file, i, "");
  if (e.contains("width")) {
    const json& w = e.at("width");
    if (!w.is_number_integer() || w.get<long long>() < 1 ||
        w.get<long long>() > limits::kMaxNetworkPorts)
      bad(file, i,
          fmt::format("'width' must be a whole number from 1 to {}, not {}",
                      limits::kMaxNetworkPorts, shown(w)));
    m.width = w.get<int>();
  }
  m.chassis = get<std::string>(e, "chassis", file, i, "");
  m.source = get<std::string>(e, "source", file, i, "");
  m.note = get<std::string>(e, "note", file, i, "");
  if (!e.contains("measured_GBps")) bad(file, i, "'measured_GBps' is missing");
  m.measured_GBps = get<double>(e, "measured_GBps", file, i, 0);
  if (!(m.measured_GBps > 0))
    bad(file, i, fmt::format("'measured_GBps' must be positive, not {}", m.measured_GBps));
  if (!(m.measured_GBps <= kMaxGBps))
    bad(file, i,
        fmt::format(
            "'measured_GBps' {:.4g} is not a plausible figure (above {:g} GB/s): check the unit",
            m.measured_GBps, kMaxGBps));
  if (m.engine != "ce" && m.engine != "sm")
    bad(file, i, fmt::format("'engine' must be ce or sm, not '{}'", m.engine));
  check_names(m, file, i);
  check_gpus(m, file, i);
  for (auto it = e.begin(); it != e.end(); ++it)
    if (!kKnownKeys.count(it.key())) m.extra[it.key()] = it.value();
  return m;
}

}  // namespace

MeasurementFile parse_measurements(const std::string& text, const std::string& filename) {
  json j;
  try {
    // Nesting deeper than limits::kMaxNestingDepth is refused while parsing.
    j = json::parse(text, [&](int depth, json::parse_event_t, json&) {
      if (depth > limits::kMaxNestingDepth)
        throw InputError(fmt::format("JSON nested deeper than {} levels", limits::kMaxNestingDepth),
                         {filename, 0, 0});
      return true;
    });
  } catch (const json::parse_error& e) {
    // e.byte is the 1-based offset where parsing stopped: its line.
    std::size_t at = std::min<std::size_t>(e.byte, text.size());
    int line = 1 + static_cast<int>(std::count(
                       text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    throw InputError(fmt::format("not valid JSON: {}", e.what()), {filename, line, 0});
  } catch (const json::exception& e) {
    // Other parse failures (a number beyond double's range: out_of_range 406) carry no offset.
    throw InputError(fmt::format("not valid JSON: {}", e.what()), {filename, 0, 0});
  }
  const std::vector<int> lines = entry_lines(text);
  g_entry_lines = &lines;
  struct Reset {
    ~Reset() { g_entry_lines = nullptr; }
  } reset;
  if (!j.is_object() || !j.contains("measurements") || !j["measurements"].is_array())
    throw InputError("expected an object with a 'measurements' array (docs/measure.md)",
                     {filename, 0, 0});
  MeasurementFile f;
  f.format = j.value("format", f.format);
  f.machine = j.value("machine", "");
  f.tool = j.value("tool", "");
  const auto& arr = j["measurements"];
  for (std::size_t i = 0; i < arr.size(); ++i)
    f.measurements.push_back(parse_entry(arr[i], filename, i));
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "format" && it.key() != "machine" && it.key() != "tool" &&
        it.key() != "measurements")
      f.extra[it.key()] = it.value();
  return f;
}

MeasurementFile load_measurements(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError("is a directory, not a measurement file (JSON, docs/measure.md)",
                     {path, 0, 0});
  std::string text = read_file(path);
  // Other tools' output as printed (docs/measure.md); anything else is read as JSON.
  if (detail::is_nvbandwidth_log(text)) return detail::parse_nvbandwidth_log(text, path);
  if (detail::is_p2p_matrix_log(text)) return detail::parse_p2p_matrix_log(text, path);
  return parse_measurements(text, path);
}

nlohmann::json to_json(const Measurement& m) {
  json e = {{"kind", m.kind}, {"gpus", m.gpus}, {"measured_GBps", m.measured_GBps}};
  if (!m.op.empty()) e["op"] = m.op;
  if (!m.algo.empty()) e["algo"] = m.algo;
  if (m.kind != "collective" && m.kind != "link") e["engine"] = m.engine;
  if (m.kind == "p2p" || m.kind == "p2p_bidir") e["peer_access"] = m.peer_access;
  if (m.bytes) e["bytes"] = m.bytes;
  if (!m.metric.empty()) e["metric"] = m.metric;
  if (!m.tech.empty()) e["tech"] = m.tech;
  if (m.width) e["width"] = m.width;
  if (!m.chassis.empty()) e["chassis"] = m.chassis;
  if (!m.source.empty()) e["source"] = m.source;
  if (!m.note.empty()) e["note"] = m.note;
  if (m.extra.is_object())
    for (auto it = m.extra.begin(); it != m.extra.end(); ++it) e[it.key()] = it.value();
  return e;
}

nlohmann::json to_json(const MeasurementFile& f) {
  json j = {{"format", f.format}, {"machine", f.machine}, {"tool", f.tool}};
  j["measurements"] = json::array();
  for (const auto& m : f.measurements) j["measurements"].push_back(to_json(m));
  for (auto it = f.extra.begin(); it != f.extra.end(); ++it) j[it.key()] = it.value();
  return j;
}

}  // namespace linkwise::measure
