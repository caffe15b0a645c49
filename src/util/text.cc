#include "linkwise/util/text.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "linkwise/util/error.h"
#include "util/embedded.h"

namespace linkwise {

int edit_distance(std::string_view a, std::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (std::size_t j = 1; j <= b.size(); ++j) {
      int sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& candidates,
                                       std::size_t max) {
  const std::string key = lower(name);
  std::vector<std::pair<int, std::string>> scored;
  for (const auto& c : candidates) {
    const std::string lc = lower(c);
    int d = edit_distance(key, lc);
    bool prefix = !key.empty() && (lc.rfind(key, 0) == 0 || lc.find(key) != std::string::npos);
    int limit = std::max<int>(2, static_cast<int>(key.size()) / 2);
    if (prefix) d = std::min(d, 1);
    if (d <= limit) scored.emplace_back(d, c);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  // Only the nearest: every candidate at the best distance found.
  std::vector<std::string> out;
  for (const auto& [d, c] : scored) {
    if (out.size() >= max || d > scored.front().first) break;
    out.push_back(c);
  }
  return out;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  auto best = closest_names(name, candidates);
  if (best.empty()) return "";
  std::vector<std::string> quoted;
  for (auto& b : best) quoted.push_back("'" + b + "'");
  return "did you mean " + join(quoted, ", ") + "?";
}

std::uint64_t parse_size_bytes(std::string_view text, std::string_view what) {
  std::string s(text);
  auto fail = [&](const std::string& why) {
    throw InputError(fmt::format("bad {} '{}': {}", what, s, why));
  };
  if (s.empty()) fail("empty");
  std::size_t pos = 0;
  while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) ++pos;
  if (pos == 0) fail("expected a number such as 8, 64K, 8M or 8G");
  if (pos > 15) fail("too large (the most is 2^40 bytes, 1T)");
  std::uint64_t value = std::stoull(s.substr(0, pos));
  std::string suffix = lower(s.substr(pos));
  if (!suffix.empty() && suffix.back() == 'b') suffix.pop_back();
  std::uint64_t mult = 1;
  if (suffix == "") mult = 1;
  else if (suffix == "k") mult = 1ull << 10;
  else if (suffix == "m") mult = 1ull << 20;
  else if (suffix == "g") mult = 1ull << 30;
  else if (suffix == "t") mult = 1ull << 40;
  else fail("unknown suffix (use K, M, G or T)");
  if (value == 0) fail("must be at least 1 byte");
  constexpr std::uint64_t kMax = 1ull << 40;
  if (value > kMax / mult) fail("too large (the most is 2^40 bytes, 1T)");
  return value * mult;
}

std::string format_size_bytes(std::uint64_t bytes) {
  const char* suffixes[] = {"", "K", "M", "G", "T"};
  int i = 0;
  while (i < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++i;
  }
  return fmt::format("{}{}", bytes, suffixes[i]);
}

void write_file_atomic(const std::string& path, std::string_view contents) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw RuntimeError(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw RuntimeError(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    throw RuntimeError(fmt::format("cannot write '{}': {}", path, std::strerror(err)));
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

namespace detail {
const EmbeddedFile* find_embedded(std::string_view path) {
  for (const auto& f : embedded_files())
    if (f.path == path) return &f;
  return nullptr;
}
}  // namespace detail

}  // namespace linkwise
