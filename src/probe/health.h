// Field health of a machine for `probe --check`: what a sealed box shows of marginal signal reach
// (PCIe AER error counters, links that retrained), whether it has GPUs at all, and what each link
// that trained below its design costs a workload.
#pragma once

#include <string>
#include <vector>

#include "linkwise/probe/check.h"
#include "linkwise/probe/discover.h"
#include "linkwise/probe/machine.h"

namespace linkwise::probe::detail {

/// Correctable AER errors since boot at or above which a device's count is a storm (warning); fewer
/// above zero are an info. Linux counts every correctable error it is told of
/// (drivers/pci/pcie/aer.c); a healthy link sees none or a handful over months, a marginal one
/// thousands under load.
inline constexpr unsigned long long kAerCorrectableStorm = 100;

/// Findings: `no-gpu` (fault), `pcie-aer-uncorrectable` (fault), `pcie-aer-correctable` (warning at
/// a storm, info below), `link-retrained` (warning: Link Bandwidth Management Status set),
/// `link-bandwidth-changed` (info: Link Autonomous Bandwidth Status set).
/// With NVML (check_gpu_health): `gpu-throttled` (fault for thermal, hardware slowdown or power
/// brake; warning for the software power cap), `gpu-hot` (warning: within 5 C of the slowdown
/// temperature), `gpu-power-at-limit` (info), `ecc-uncorrected` (fault), `ecc-corrected` (info),
/// `row-remap-failed` (fault), `row-remap-pending` (warning), `bar1-small` (warning: BAR1 of 256
/// MiB or less), and on a box with NVSwitches `fabric-not-ready` (fault: fabric registration not
/// completed).
void check_field_health(const Machine& m, const Discovery& d, std::vector<Finding>& out);
void check_gpu_health(const Machine& m, const Discovery& d, std::vector<Finding>& out);
/// XID events from the kernel log (xid.h): `gpu-xid`, one per GPU and XID, severity and action from
/// NVIDIA's Xid catalog; `xid-not-read` (info) when the kernel log could not be read.
void check_xid_events(const Machine& m, const Discovery& d, std::vector<Finding>& out);

/// What the PCIe link from `upper` to `lower` trained at costs a workload: a 1 GiB all-reduce over
/// all the probed chassis' GPUs with only that link at its trained rate, against the design
/// ("costs a 1 GiB all-reduce over 8 GPUs 2.00x (40.1 -> 80.2 ms)"); "" when the chassis does not
/// build, has fewer than 2 GPUs, or the link does not slow it.
std::string link_fault_cost(const Discovery& d, const std::string& upper, const std::string& lower);

}  // namespace linkwise::probe::detail
