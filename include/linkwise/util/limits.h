// Input limits: every bound hostile or mistaken input meets, in one place. docs/limits.md lists
// each with its reason. A value past a limit is an InputError (exit code 2) naming the file, line
// and value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace linkwise::limits {

/// Largest input file read whole (chassis/model YAML, measurement JSON, NCCL XML): 16 MiB.
inline constexpr std::uintmax_t kMaxInputBytes = 16u << 20;
/// Deepest nesting of maps/lists (YAML, JSON) or elements (XML) in an input file.
inline constexpr int kMaxNestingDepth = 64;
/// Most node names a chassis file's brace lists and `match: all` links expand to, all together
/// (node names plus link end pairs over the whole file), and most braces in one pattern.
inline constexpr long long kMaxExpandedNames = 100000;
inline constexpr int kMaxPatternBraces = 8;
/// Most nodes and links of a whole machine (all boxes together).
inline constexpr long long kMaxMachineNodes = 200000;
inline constexpr long long kMaxMachineLinks = 1000000;
/// Widths (lanes, or links for NVLink, socket and network) one link entry may have, by family.
/// PCIe: x32, the widest link the PCI Express Base Specification defines (and the catalog's widths
/// list). NVLink: 72, the most NVLink ports of any part in the catalog (NVSwitch gen4,
/// data/catalog.yaml). Socket: 8, twice the most UPI/xGMI links a CPU pair has (4th-gen Xeon: 4 UPI
/// links). Network: 1024 ports, a full leaf switch's uplinks several times over.
inline constexpr int kMaxPcieWidth = 32;
inline constexpr int kMaxNvlinkLinks = 72;
inline constexpr int kMaxSocketLinks = 8;
inline constexpr int kMaxNetworkPorts = 1024;
/// GPU numbers in measurement files: 0 to kMaxGpuNumber - 1 (a whole machine of kMaxGpusPerBox-GPU
/// boxes).
inline constexpr int kMaxGpuNumber = 1 << 20;
/// Largest parallel plan: tp·pp·dp, tp·ep, pp·vpp and mb·dp each at most 2^20 (a million GPUs).
inline constexpr std::int64_t kMaxPlanGpus = 1 << 20;
/// Largest override of a count figure (pcie_width, pcie_lanes, lanes, ports, nvlink_links).
inline constexpr int kMaxCountFigure = 65536;
/// Most nodes (GPUs, switches, CPUs, NICs, drives...) in one chassis box, and GPUs in one box.
inline constexpr int kMaxNodesPerBox = 4096;
inline constexpr int kMaxGpusPerBox = 1024;
/// Most characters of a rejected value quoted in a message.
inline constexpr std::size_t kMaxQuotedChars = 60;

/// `text` cut to `max` characters with "..." and the full length when longer, for quoting in
/// messages.
std::string quote_value(std::string_view text, std::size_t max = kMaxQuotedChars);

/// a * b, or nullopt when it does not fit in 64 bits (or either is negative).
inline std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace linkwise::limits
