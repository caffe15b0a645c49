// Small text helpers: closest-name suggestions, byte sizes as nccl-tests reads them, atomic file
// output.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace linkwise {

/// Levenshtein distance between two strings (case-sensitive).
int edit_distance(std::string_view a, std::string_view b);

/// Up to `max` candidates closest to `name` by edit distance (case-insensitive), best first;
/// candidates further than about half of the name's length are left out unless `name` is a prefix
/// of them.
std::vector<std::string> closest_names(std::string_view name,
                                       const std::vector<std::string>& candidates,
                                       std::size_t max = 3);

/// "did you mean 'a', 'b'?" or "" when there is nothing to suggest.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

/// Parses a byte size as nccl-tests does: "8", "64K", "8M", "8G", "1T" (powers of 1024), optional
/// "B". Throws InputError naming the flag and the value for anything else, 0, or sizes above 2^40.
std::uint64_t parse_size_bytes(std::string_view text, std::string_view what = "size");

/// Formats a byte count the way nccl-tests' users read it: 8, 64K, 8M, 8G (exact powers), else
/// bytes.
std::string format_size_bytes(std::uint64_t bytes);

/// Writes `contents` to `path` atomically: a temporary file in the same folder, fsynced, then
/// rename() and an fsync of the folder. Throws InputError when `path` exists and is not a regular
/// file (a directory, FIFO or device is never replaced), RuntimeError naming the path if it cannot
/// be written; never leaves a partial file at `path`.
void write_file_atomic(const std::string& path, std::string_view contents);

/// Writes several files, all or none: every target is checked and every file written to a temporary
/// first; the renames happen only when all are on disk. Same errors as write_file_atomic.
void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files);

/// Reads a whole regular file of at most limits::kMaxInputBytes; throws InputError naming the path
/// if it cannot be read, is not a regular file (a directory, FIFO, /dev/zero: refused before
/// reading) or is larger.
std::string read_file(const std::string& path);

}  // namespace linkwise
