#include "linkwise/probe/sysfs.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>

namespace linkwise::probe {

namespace fs = std::filesystem;

namespace {
constexpr std::size_t kMaxTextBytes = 64 * 1024;

ReadStatus status_from_errno(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
    case ELOOP:
      return ReadStatus::kMissing;
    case EACCES:
    case EPERM:
      return ReadStatus::kNoPermission;
    case EISDIR:
      return ReadStatus::kNotAFile;
    default:
      return ReadStatus::kError;
  }
}

std::string join_path(const std::string& dir, std::string_view rel) {
  if (dir.empty()) return {};
  std::string p = dir;
  if (!p.empty() && p.back() != '/') p += '/';
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  p += rel;
  return p;
}
}  // namespace

const char* to_string(ReadStatus s) {
  switch (s) {
    case ReadStatus::kOk:
      return "ok";
    case ReadStatus::kMissing:
      return "missing";
    case ReadStatus::kNoPermission:
      return "permission denied";
    case ReadStatus::kNotAFile:
      return "not a regular file";
    case ReadStatus::kError:
      return "read error";
  }
  return "?";
}

std::string printable(std::string_view text, std::size_t max_chars) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (out.size() >= max_chars) {
      out += "...";
      break;
    }
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f)
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  return out;
}

std::string trim_right(std::string s) {
  while (!s.empty() && (std::isspace(static_cast<unsigned char>(s.back())) || s.back() == '\0'))
    s.pop_back();
  return s;
}

SysfsReader::SysfsReader(std::string sys_dir, std::string proc_dir)
    : sys_dir_(std::move(sys_dir)), proc_dir_(std::move(proc_dir)) {}

SysfsReader SysfsReader::for_copy(const std::string& dir) {
  std::error_code ec;
  if (fs::is_directory(fs::path(dir) / "sys", ec)) return SysfsReader(dir + "/sys", dir + "/proc");
  return SysfsReader(dir, "");
}

ReadResult SysfsReader::read_file(const std::string& path, std::size_t max_bytes) const {
  ReadResult r;
  // O_NONBLOCK: a FIFO in a copied tree must not hang the probe.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    r.status = status_from_errno(errno);
    return r;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    r.status = ReadStatus::kNotAFile;
    return r;
  }
  std::string buf;
  char chunk[4096];
  while (buf.size() < max_bytes) {
    ssize_t n = ::read(fd, chunk, std::min(sizeof(chunk), max_bytes - buf.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      r.status = status_from_errno(errno);
      ::close(fd);
      return r;
    }
    if (n == 0) break;
    buf.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(fd);
  r.status = ReadStatus::kOk;
  r.text = std::move(buf);
  return r;
}

ReadResult SysfsReader::read_sys(std::string_view rel) const {
  ReadResult r = read_file(join_path(sys_dir_, rel), kMaxTextBytes);
  if (r.ok()) r.text = trim_right(std::move(r.text));
  return r;
}

ReadResult SysfsReader::read_proc(std::string_view rel) const {
  if (proc_dir_.empty()) return {ReadStatus::kMissing, {}};
  ReadResult r = read_file(join_path(proc_dir_, rel), kMaxTextBytes);
  if (r.ok()) r.text = trim_right(std::move(r.text));
  return r;
}

ReadResult SysfsReader::read_sys_bytes(std::string_view rel, std::size_t max_bytes) const {
  return read_file(join_path(sys_dir_, rel), max_bytes);
}

std::vector<std::string> SysfsReader::list_sys(std::string_view rel) const {
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(join_path(sys_dir_, rel), ec), end;
  for (; !ec && it != end; it.increment(ec)) names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool SysfsReader::exists_sys(std::string_view rel) const {
  std::error_code ec;
  return fs::exists(join_path(sys_dir_, rel), ec) && !ec;
}

std::optional<std::string> SysfsReader::resolve_sys(std::string_view rel) const {
  std::error_code ec;
  fs::path base = fs::canonical(sys_dir_, ec);
  if (ec) return std::nullopt;
  fs::path target =
      fs::canonical(join_path(sys_dir_, rel), ec);  // ELOOP and dangling links fail here
  if (ec) return std::nullopt;
  std::string b = base.string(), t = target.string();
  if (b == "/") return t.substr(1);
  if (t.size() <= b.size() || t.compare(0, b.size(), b) != 0 || t[b.size()] != '/')
    return std::nullopt;
  return t.substr(b.size() + 1);
}

}  // namespace linkwise::probe
