// probe::read_this_machine: sysfs (or a copy of it) and NVML, discovered into a chassis.
#include <fmt/format.h>

#include <filesystem>

#include "linkwise/probe/discover.h"
#include "linkwise/probe/nvml.h"
#include "linkwise/probe/sysfs.h"
#include "linkwise/util/error.h"
#include "linkwise/util/text.h"
#include "nvml_snapshot.h"

namespace linkwise::probe {

std::pair<Machine, Discovery> read_this_machine(const std::string& sysfs_root, bool no_nvml,
                                                const std::string& name) {
  std::unique_ptr<NvmlApi> nvml;
  std::string why;
  if (no_nvml) {
    why = "--no-nvml given";
  } else if (!sysfs_root.empty()) {
    // An NVML snapshot taken with the copy stands in for NVML; this machine's would not describe
    // it.
    const std::string snapshot = sysfs_root + "/nvml.json";
    std::error_code ec;
    if (std::filesystem::is_regular_file(snapshot, ec))
      nvml = detail::parse_nvml_snapshot(read_file(snapshot), snapshot);
    else
      why = "--sysfs-root reads a copy of sysfs, and NVML would describe this machine instead";
  } else {
    nvml = open_nvml(&why);
    if (!nvml) why = "cannot load libnvidia-ml.so.1 (" + why + ")";
  }
  SysfsReader sys;
  if (!sysfs_root.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(sysfs_root, ec))
      throw InputError(fmt::format("--sysfs-root '{}' is not a folder", sysfs_root));
    sys = SysfsReader::for_copy(sysfs_root);
  }
  auto m = read_machine(sys, nvml.get(), why);
  auto d = discover(m, name);
  return {std::move(m), std::move(d)};
}

}  // namespace linkwise::probe
