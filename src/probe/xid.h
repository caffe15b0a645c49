// XID events: the NVIDIA driver's error reports, read once from the kernel log for `probe --check`.
//
// The driver writes each as a kernel message, "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234,
// name=python, GPU has fallen off the bus." (as dmesg, journalctl -k and /dev/kmsg show it). A
// one-shot check reads the kernel's ring buffer through /dev/kmsg (dev/kmsg below the root given
// to --sysfs-root: a plain file there is read the same way); NVML's XID event wait is for a
// watcher that runs while the error happens, not for a check after it.
#pragma once

#include <string>
#include <vector>

#include "linkwise/probe/check.h"
#include "linkwise/probe/machine.h"
#include "linkwise/probe/sysfs.h"

namespace linkwise::probe::detail {

/// The XID events in kernel log text, in dmesg ("[  12.3] NVRM: Xid ..."), journalctl ("Oct 01
/// 13:00:00 host kernel: NVRM: Xid ...") or /dev/kmsg ("4,1234,5678,-;NVRM: Xid ...") lines.
/// Lines that do not hold one are skipped.
std::vector<XidEvent> parse_xid_events(const std::string& log);

/// Reads the kernel log at dev/kmsg beside the reader's proc folder (at most 8 MiB) into
/// m.xids; when it cannot, says why in m.kernel_log_why_not.
void read_xids(const SysfsReader& sys, Machine& m);

/// What an XID means and what to do, from NVIDIA's Xid catalog ("XID Errors", docs.nvidia.com/
/// deploy/xid-errors, the catalog's description and Resolution Bucket (Immediate Action)).
struct XidMeaning {
  Severity severity;
  const char* what;
  const char* action;
};
XidMeaning xid_meaning(int xid);

}  // namespace linkwise::probe::detail
