// Fuzz entry points: each feeds one input to a loader the way the CLI does and accepts only the
// documented outcomes (a result, or InputError/RuntimeError). Anything else (a crash, a sanitizer
// report, another exception) is a finding. The libFuzzer mains (fuzz_main.cc) and the corpus replay
// test (replay.cc) call the same functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace linkwise::fuzz {

using Entry = int (*)(const std::uint8_t* data, std::size_t size);

int chassis_yaml(const std::uint8_t* data, std::size_t size);
int model_yaml(const std::uint8_t* data, std::size_t size);
int measurement_json(const std::uint8_t* data, std::size_t size);
int nccl_xml(const std::uint8_t* data, std::size_t size);
/// Text other tools print: nvbandwidth and p2pBandwidthLatencyTest output, kernel log XID lines.
int tool_log(const std::uint8_t* data, std::size_t size);
/// The input is a file tree: records "path\0contents\0"; a path starting with '@' makes a symbolic
/// link whose target is the contents. It is written below a fresh temporary folder that stands for
/// "/".
int sysfs_tree(const std::uint8_t* data, std::size_t size);

/// The entry for a target name ("chassis_yaml", ...), or nullptr.
Entry find_entry(std::string_view name);

}  // namespace linkwise::fuzz
