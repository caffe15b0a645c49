// `linkwise probe --check`: is the box wired and trained as designed?
//
// Faults (the box is not healthy; exit code 1):
//   link-below-max      a PCIe link trained below the lesser of its two ends' maximum width, or
//   below
//                       their maximum speed on a device that does not slow down on its own
//   acs-redirect        ACS P2P Request Redirect on a switch port: peer-to-peer traffic is sent up
//   to the
//                       root complex (and the IOMMU) instead of across the switch
//   iommu-translated    an IOMMU translating DMA addresses (not pass-through): GPUDirect P2P and
//   RDMA pay
//                       an address translation per page
//   nvlink-down         an NVLink down while other links of the same GPU are up
//   nvlink-errors       NVLink error counters above zero
//   differs-from-design with --expect: a device, part, link or path class unlike the designed
//   chassis
//                       (NVLinks not read, parts only guessed and link speeds/widths only assumed
//                       are design-not-checked infos instead)
// Warnings (reported; exit code 0 unless `strict`):
//   link-speed-idle     a GPU link below its maximum speed at full width: GPUs lower the link speed
//   when
//                       idle to save power; check again under load
//   nvlink-none         a GPU with NVLinks and none up (no bridge fitted?)
//   link-above-max      a link reading faster or wider now than both ends can do: the link state
//                       files contradict each other, so the link is not checked
//   gpu-nic-not-under-switch, iommu-unknown
// Infos: what could not be read and why (NVML absent, config space unreadable, files missing).
//
//   auto m = linkwise::probe::read_machine(sys, nvml.get(), why);
//   auto d = linkwise::probe::discover(m);
//   auto r = linkwise::probe::check(m, d, {});
//   return r.healthy() ? 0 : 1;
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "linkwise/probe/discover.h"

namespace linkwise::probe {

enum class Severity { kFault, kWarning, kInfo };
const char* to_string(Severity s);

struct Finding {
  Severity severity = Severity::kFault;
  std::string kind;       ///< see the list above
  std::string address;    ///< PCI address of the device concerned, or ""
  std::string slot_path;  ///< "pci0000:17/0000:17:01.0/...", or ""
  std::string message;    ///< what is wrong, with the figures
  std::string advice;     ///< what to do or check next, or ""
};

struct CheckOptions {
  const topo::ChassisSpec* expect = nullptr;  ///< the designed chassis, or null
  bool strict = false;                        ///< warnings count as faults
};

struct CheckReport {
  std::vector<Finding> findings;  ///< faults first, then warnings, then infos
  bool strict = false;
  int count(Severity s) const;
  /// No faults (and, when strict, no warnings).
  bool healthy() const {
    return count(Severity::kFault) == 0 && (!strict || count(Severity::kWarning) == 0);
  }
};

CheckReport check(const Machine& machine, const Discovery& discovery,
                  const CheckOptions& options = {});

/// What the probe could read, so that compare_with_design() reports the rest as not checked rather
/// than as faults.
struct DesignScope {
  bool nvlinks_read = true;     ///< false: NVLinks and NVSwitches are not compared (PCIe paths are)
  std::string nvlinks_why_not;  ///< the reason, for the report
};

/// The differences between a probed chassis and the designed one, as differs-from-design faults.
/// What cannot be compared (NVLinks that were not read, parts the probe only guessed, link speeds
/// or widths it only assumed) comes back as design-not-checked infos.
std::vector<Finding> compare_with_design(const Discovery& discovery,
                                         const topo::ChassisSpec& designed,
                                         const DesignScope& scope = {});

}  // namespace linkwise::probe
