// Reading the kernel's view of the machine: sysfs and a few /proc files, under a root folder.
//
// Every probe read goes through a SysfsReader, never through a hard-coded "/sys". The reader is
// given the folder that stands for /sys and the one that stands for /proc; tests and `--sysfs-root`
// point them at a copy (a folder tree). Reads never throw and never block: a missing file, a
// permission error, a folder where a file should be, a symlink loop or a FIFO each come back as a
// status, and the caller says what it could not read.
//
//   linkwise::probe::SysfsReader sys;                       // /sys and /proc
//   auto r = sys.read_sys("bus/pci/devices/0000:1b:00.0/vendor");
//   if (r.ok()) fmt::print("{}\n", r.text);                  // "0x10de" (trimmed)
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace linkwise::probe {

enum class ReadStatus {
  kOk,
  kMissing,       ///< no such file (ENOENT, or a symlink loop / dangling link on the way)
  kNoPermission,  ///< EACCES / EPERM
  kNotAFile,      ///< a folder, FIFO, socket or device where a regular file was expected
  kError,         ///< any other I/O error
};
const char* to_string(ReadStatus s);

/// `text` made safe to print: bytes outside printable ASCII become "\xNN" and text longer than
/// `max_chars` is cut with "...". Values read from sysfs or /proc go through it before they are
/// shown.
std::string printable(std::string_view text, std::size_t max_chars = 64);

struct ReadResult {
  ReadStatus status = ReadStatus::kMissing;
  std::string
      text;  ///< the contents, trailing whitespace removed (read_text) or raw bytes (read_bytes)
  bool ok() const { return status == ReadStatus::kOk; }
};

class SysfsReader {
 public:
  /// `sys_dir` stands for /sys, `proc_dir` for /proc; an empty `proc_dir` reads no /proc file.
  explicit SysfsReader(std::string sys_dir = "/sys", std::string proc_dir = "/proc");
  virtual ~SysfsReader() = default;

  /// A reader for a copy of sysfs at `dir`: when `dir/sys` exists, `dir` stands for "/" (sys/ and
  /// proc/ below it); otherwise `dir` stands for /sys and /proc is not read.
  static SysfsReader for_copy(const std::string& dir);

  /// A text file below /sys, e.g. "bus/pci/devices/0000:1b:00.0/class". At most 64 KiB are read.
  ReadResult read_sys(std::string_view rel) const;
  /// A text file below /proc, e.g. "cmdline".
  ReadResult read_proc(std::string_view rel) const;
  /// Up to `max_bytes` raw bytes of a file below /sys (PCI config space).
  ReadResult read_sys_bytes(std::string_view rel, std::size_t max_bytes) const;

  /// Names in a folder below /sys, sorted; empty when it is missing or unreadable.
  std::vector<std::string> list_sys(std::string_view rel) const;
  /// Whether a path below /sys exists (following links).
  bool exists_sys(std::string_view rel) const;
  /// Where a path below /sys leads once every symlink is followed, relative to the /sys folder
  /// ("devices/pci0000:17/0000:17:01.0/0000:18:00.0"); nullopt for loops, dangling links, or a
  /// target outside the /sys folder.
  std::optional<std::string> resolve_sys(std::string_view rel) const;

  const std::string& sys_dir() const { return sys_dir_; }
  const std::string& proc_dir() const { return proc_dir_; }

 protected:
  /// Reads at most `max_bytes` of the file at an absolute path. Tests override it to inject errors
  /// that file permissions cannot produce when they run as root.
  virtual ReadResult read_file(const std::string& path, std::size_t max_bytes) const;

 private:
  std::string sys_dir_, proc_dir_;
};

/// Removes trailing whitespace and NUL bytes.
std::string trim_right(std::string s);

}  // namespace linkwise::probe
