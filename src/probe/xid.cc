#include "xid.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>

namespace linkwise::probe::detail {

namespace {

constexpr std::size_t kMaxLogBytes = 8u << 20;

// "0000:3b:00" (the driver leaves the function out) -> "0000:3b:00.0", lower case.
std::string pci_address(std::string a) {
  for (auto& c : a) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (a.size() == 10) a += ".0";
  return a;
}

bool is_address(const std::string& a) {
  if (a.size() != 12 || a[4] != ':' || a[7] != ':' || a[10] != '.') return false;
  for (std::size_t i : {0u, 1u, 2u, 3u, 5u, 6u, 8u, 9u, 11u})
    if (!std::isxdigit(static_cast<unsigned char>(a[i]))) return false;
  return true;
}

}  // namespace

std::vector<XidEvent> parse_xid_events(const std::string& log) {
  static const std::string kTag = "NVRM: Xid (PCI:";
  std::vector<XidEvent> out;
  std::size_t pos = 0;
  while ((pos = log.find(kTag, pos)) != std::string::npos) {
    std::size_t eol = log.find('\n', pos);
    if (eol == std::string::npos) eol = log.size();
    std::string line = log.substr(pos + kTag.size(), eol - pos - kTag.size());
    pos = eol;
    auto close = line.find("):");
    if (close == std::string::npos) continue;
    XidEvent e;
    e.address = pci_address(line.substr(0, close));
    if (!is_address(e.address)) continue;
    std::size_t p = close + 2;
    while (p < line.size() && line[p] == ' ') ++p;
    auto [end, ec] = std::from_chars(line.data() + p, line.data() + line.size(), e.xid);
    if (ec != std::errc() || e.xid <= 0) continue;
    std::string rest = line.substr(static_cast<std::size_t>(end - line.data()));
    // ", pid=1234, name=python, GPU has fallen off the bus." -> the driver's words.
    for (const char* skip : {", pid=", ", name="}) {
      if (rest.rfind(skip, 0) == 0) {
        auto comma = rest.find(',', 1);
        rest = comma == std::string::npos ? "" : rest.substr(comma);
      }
    }
    if (rest.rfind(", ", 0) == 0) rest = rest.substr(2);
    while (!rest.empty() && (rest.back() == '\r' || rest.back() == ' ')) rest.pop_back();
    e.text = printable(rest, 120);
    out.push_back(std::move(e));
  }
  return out;
}

void read_xids(const SysfsReader& sys, Machine& m) {
  if (sys.proc_dir().empty()) {
    m.kernel_log_why_not = "no root folder for dev/kmsg (a copy of /sys alone)";
    return;
  }
  const std::string root = sys.proc_dir().substr(0, sys.proc_dir().rfind('/'));
  const std::string path = root + "/dev/kmsg";
  // /dev/kmsg hands out one record per read() and EAGAIN at the end when opened non-blocking; a
  // plain file (a copy) ends with 0.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    m.kernel_log_why_not = errno == EACCES || errno == EPERM
                               ? path + ": no permission (run as root to read XID events)"
                           : errno == ENOENT ? path + ": not present"
                                             : path + ": cannot be opened";
    return;
  }
  std::string log;
  char buf[8192];
  while (log.size() < kMaxLogBytes) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      log.append(buf, static_cast<std::size_t>(n));
      if (log.back() != '\n') log += '\n';
      continue;
    }
    if (n < 0 && (errno == EPIPE || errno == EINTR)) continue;  // a record overwritten meanwhile
    break;                                                      // end, EAGAIN or an error
  }
  ::close(fd);
  m.xids = parse_xid_events(log);
}

XidMeaning xid_meaning(int xid) {
  switch (xid) {
    case 13:
      return {Severity::kWarning, "graphics engine exception",
              "usually the application (an illegal access): restart it, check it with "
              "compute-sanitizer; across many applications, run the GPU's diagnostics"};
    case 31:
      return {Severity::kWarning, "GPU memory page fault",
              "usually the application (an illegal address): restart it; across many "
              "applications, run the GPU's diagnostics"};
    case 43:
      return {Severity::kInfo, "GPU stopped processing (a channel was reset)",
              "the application that faulted was stopped; nothing to do unless it recurs"};
    case 45:
      return {Severity::kInfo, "preemptive cleanup after earlier errors",
              "follows other XIDs or a killed process: read the XIDs before it"};
    case 48:
      return {Severity::kFault, "double-bit ECC error",
              "reset the GPU (`nvidia-smi -r`) so the row is remapped; replace it if it recurs"};
    case 61:
      return {Severity::kWarning, "internal micro-controller breakpoint/warning",
              "reset the GPU; update the driver if it recurs"};
    case 62:
      return {Severity::kFault, "internal micro-controller halt",
              "reset the GPU or reboot; update the driver, contact support if it recurs"};
    case 63:
      return {Severity::kWarning, "row remapping (ECC page retirement) recorded",
              "reset the GPU to apply the remapping"};
    case 64:
      return {Severity::kFault, "row remapping (ECC page retirement) failed",
              "reset the GPU; if it recurs the GPU has no spare rows left: replace it"};
    case 74:
      return {Severity::kFault, "NVLink error",
              "reset the GPU; check the NVLink bridges/baseboard seating; read `nvidia-smi nvlink "
              "-e`; replace the part if it recurs"};
    case 79:
      return {Severity::kFault, "GPU has fallen off the bus",
              "reboot; check the slot, riser, power cables and cooling, and this GPU's PCIe AER "
              "findings; replace the GPU if it recurs"};
    case 92:
      return {Severity::kWarning, "high single-bit ECC error rate",
              "watch the counts (`nvidia-smi -q -d ECC`); contact support if it persists"};
    case 94:
      return {Severity::kWarning, "contained ECC error",
              "restart the affected application; reset the GPU to remap the row"};
    case 95:
      return {Severity::kFault, "uncontained ECC error",
              "every application on the GPU is affected: reset the GPU"};
    case 119:
      return {Severity::kFault, "GSP RPC timeout",
              "reset the GPU or reboot; update the driver; contact support if it recurs"};
    case 120:
      return {Severity::kFault, "GSP error",
              "reset the GPU or reboot; update the driver; contact support if it recurs"};
    default:
      return {Severity::kWarning, "driver-reported error",
              "look the XID up in NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors)"};
  }
}

}  // namespace linkwise::probe::detail
