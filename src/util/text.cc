#include "linkwise/util/text.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "linkwise/util/error.h"
#include "linkwise/util/limits.h"
#include "linkwise/util/verbosity.h"
#include "util/embedded.h"

namespace linkwise {

namespace {
std::atomic<bool> g_quiet{false};
}  // namespace

void set_quiet(bool quiet) { g_quiet = quiet; }
bool quiet() { return g_quiet; }

namespace {
std::atomic<bool> g_progress_drawing{false};  // one Progress draws at a time (threads share stderr)
}  // namespace

Progress::Progress(std::string what, std::size_t total)
    : what_(std::move(what)), total_(total), on_(total > 0 && !quiet() && isatty(2) == 1) {
  if (on_) on_ = !g_progress_drawing.exchange(true);
}

Progress::~Progress() {
  if (drawn_) fmt::print(stderr, "\r\033[K");
  if (on_) g_progress_drawing = false;
}

void Progress::update(std::size_t done) {
  if (!on_) return;
  auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total_ && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  drawn_ = true;
  fmt::print(stderr, "\r{}: {}/{}\033[K", what_, done, total_);
  std::fflush(stderr);
}

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

std::vector<std::string> closest_names(std::string_view name,
                                       const std::vector<std::string>& candidates,
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
  return "did you mean " + fmt::to_string(fmt::join(quoted, ", ")) + "?";
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
  if (suffix == "")
    mult = 1;
  else if (suffix == "k")
    mult = 1ull << 10;
  else if (suffix == "m")
    mult = 1ull << 20;
  else if (suffix == "g")
    mult = 1ull << 30;
  else if (suffix == "t")
    mult = 1ull << 40;
  else
    fail("unknown suffix (use K, M, G or T)");
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

namespace {

// What a path is, for messages: "a directory", "a FIFO", ...
std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string folder_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// An output target: a regular file or nothing yet. A symbolic link is followed, so the file it
// names is replaced and the link stays. Throws InputError for anything else.
std::string output_target(const std::string& path) {
  if (path.empty()) throw InputError("an output path is empty");
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    std::error_code ec;
    auto real = std::filesystem::weakly_canonical(path, ec);
    if (!ec) return output_target(real.string());
  }
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw InputError(fmt::format("cannot write '{}': it is {}; outputs are regular files only",
                                 path, kind_of(st.st_mode)));
  return path;
}

struct TempFile {
  std::string target, tmp;
};

// Writes `contents` into a new temporary file beside `target`, fsynced; throws RuntimeError.
TempFile write_temp(const std::string& target, std::string_view contents) {
  std::string tmp = target + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    throw RuntimeError(fmt::format("cannot write '{}': {}", target, std::strerror(errno)));
  auto fail = [&](int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw RuntimeError(fmt::format("cannot write '{}': {}", target, std::strerror(err)));
  };
  // mkstemp makes the file 0600: give it the mode of the file it replaces, else 0666 less the
  // umask.
  struct stat st {};
  mode_t mode;
  if (::stat(target.c_str(), &st) == 0) {
    mode = st.st_mode & 07777;
  } else {
    mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(fd, mode) != 0) fail(errno);
  const char* p = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(n < 0 ? errno : EIO);
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) fail(errno);
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw RuntimeError(fmt::format("cannot write '{}': {}", target, std::strerror(err)));
  }
  return {target, tmp};
}

void sync_folder(const std::string& path) {
  int dfd = ::open(folder_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return;
  ::fsync(dfd);  // best effort: some file systems refuse fsync on a directory
  ::close(dfd);
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view contents) {
  write_files_atomic({{path, std::string(contents)}});
}

void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files) {
  // Every target is checked, then every file written to a temporary beside it; only when all of
  // them are on disk are they renamed into place.
  std::vector<std::string> targets;
  for (const auto& [path, text] : files) targets.push_back(output_target(path));
  std::vector<TempFile> temps;
  try {
    for (std::size_t i = 0; i < files.size(); ++i)
      temps.push_back(write_temp(targets[i], files[i].second));
  } catch (...) {
    for (const auto& t : temps) ::unlink(t.tmp.c_str());
    throw;
  }
  for (std::size_t i = 0; i < temps.size(); ++i) {
    if (std::rename(temps[i].tmp.c_str(), temps[i].target.c_str()) != 0) {
      int err = errno;
      for (std::size_t j = i; j < temps.size(); ++j) ::unlink(temps[j].tmp.c_str());
      throw RuntimeError(fmt::format("cannot write '{}': {}", temps[i].target, std::strerror(err)));
    }
    sync_folder(temps[i].target);
  }
}

std::string read_file(const std::string& path) {
  // Opened without blocking (a FIFO would wait for a writer), then refused unless a regular file,
  // and read no further than the size limit (a file that grows while read is cut there and
  // refused).
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw InputError(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(fmt::format("cannot read '{}': it is {}; inputs are regular files only", path,
                                 kind_of(st.st_mode)));
  }
  auto too_big = [&] {
    ::close(fd);
    return InputError(fmt::format("cannot read '{}': larger than the {} MiB input limit", path,
                                  limits::kMaxInputBytes >> 20));
  };
  if (static_cast<std::uintmax_t>(st.st_size) > limits::kMaxInputBytes) throw too_big();
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw InputError(fmt::format("cannot read '{}': {}", path, std::strerror(err)));
    }
    if (n == 0) break;
    if (out.size() + static_cast<std::size_t>(n) > limits::kMaxInputBytes) throw too_big();
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

namespace limits {
std::string quote_value(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  return fmt::format("{}... ({} characters)", text.substr(0, max), text.size());
}
}  // namespace limits

namespace detail {
const EmbeddedFile* find_embedded(std::string_view path) {
  for (const auto& f : embedded_files())
    if (f.path == path) return &f;
  return nullptr;
}

bool looks_like_path(std::string_view name) {
  auto ends = [&](std::string_view sfx) {
    return name.size() > sfx.size() && name.substr(name.size() - sfx.size()) == sfx;
  };
  return name.find('/') != std::string_view::npos || ends(".yaml") || ends(".yml");
}
}  // namespace detail

}  // namespace linkwise
