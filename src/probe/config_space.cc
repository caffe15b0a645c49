#include "config_space.h"

#include <set>

namespace linkwise::probe::detail {

namespace {

// Offsets and ids from Linux include/uapi/linux/pci_regs.h.
constexpr std::size_t kStatus = 0x06;             // PCI_STATUS
constexpr unsigned kStatusCapList = 0x10;         // PCI_STATUS_CAP_LIST
constexpr std::size_t kCapabilityList = 0x34;     // PCI_CAPABILITY_LIST
constexpr unsigned kCapIdExp = 0x10;              // PCI_CAP_ID_EXP
constexpr std::size_t kExpFlags = 0x02;           // PCI_EXP_FLAGS; bits 7:4 = PCI_EXP_FLAGS_TYPE
constexpr std::size_t kExpLinkStatus = 0x12;      // PCI_EXP_LNKSTA
constexpr std::size_t kExtStart = 0x100;          // first extended capability
constexpr std::size_t kExtEnd = 0x1000;           // PCI_CFG_SPACE_EXP_SIZE
constexpr unsigned kExtCapIdAcs = 0x000d;         // PCI_EXT_CAP_ID_ACS
constexpr std::size_t kAcsCtrl = 0x06;            // PCI_ACS_CTRL
constexpr unsigned kAcsRequestRedirect = 0x0004;  // PCI_ACS_RR

unsigned u8(const std::string& b, std::size_t at) { return static_cast<unsigned char>(b[at]); }
unsigned u16(const std::string& b, std::size_t at) { return u8(b, at) | u8(b, at + 1) << 8; }
unsigned u32(const std::string& b, std::size_t at) { return u16(b, at) | u16(b, at + 2) << 16; }

PortType port_type_of(unsigned type) {
  switch (type) {
    case 0x0:
    case 0x1:
      return PortType::kEndpoint;  // PCI_EXP_TYPE_ENDPOINT, _LEG_END
    case 0x4:
      return PortType::kRootPort;  // PCI_EXP_TYPE_ROOT_PORT
    case 0x5:
      return PortType::kUpstream;  // PCI_EXP_TYPE_UPSTREAM
    case 0x6:
      return PortType::kDownstream;  // PCI_EXP_TYPE_DOWNSTREAM
    case 0x7:
      return PortType::kPcieToPci;  // PCI_EXP_TYPE_PCI_BRIDGE
    case 0x9:
      return PortType::kRcEndpoint;  // PCI_EXP_TYPE_RC_END
    default:
      return PortType::kOther;
  }
}

void read_standard_caps(const std::string& b, ConfigFacts& f) {
  if (!(u16(b, kStatus) & kStatusCapList)) return;
  std::set<std::size_t> seen;
  std::size_t p = u8(b, kCapabilityList) & 0xfc;
  while (p >= 0x40 && p + 4 <= b.size() && p < 0x100 && seen.insert(p).second) {
    if (u8(b, p) == kCapIdExp) {
      f.port_type = port_type_of((u16(b, p + kExpFlags) >> 4) & 0xf);
      if (p + kExpLinkStatus + 2 <= b.size()) f.link_status = u16(b, p + kExpLinkStatus);
      return;
    }
    p = u8(b, p + 1) & 0xfc;
  }
}

void read_extended_caps(const std::string& b, ConfigFacts& f) {
  if (b.size() < kExtStart + 4) {
    f.note = "extended config space not readable (reading it needs root)";
    return;
  }
  f.acs_p2p_redirect = false;
  std::set<std::size_t> seen;
  std::size_t p = kExtStart;
  while (p + 8 <= b.size() && p < kExtEnd && seen.insert(p).second) {
    unsigned header = u32(b, p);
    if (header == 0 || header == 0xffffffffu) return;
    if ((header & 0xffff) == kExtCapIdAcs) {
      f.acs_present = true;
      f.acs_p2p_redirect = (u16(b, p + kAcsCtrl) & kAcsRequestRedirect) != 0;
      return;
    }
    std::size_t next = (header >> 20) & 0xffc;
    if (next < kExtStart) return;
    p = next;
  }
}

}  // namespace

ConfigFacts parse_config_space(const std::string& b) {
  ConfigFacts f;
  if (b.size() < 0x40) {
    f.note = b.empty() ? "config space empty" : "config space truncated";
    return f;
  }
  read_standard_caps(b, f);
  read_extended_caps(b, f);
  return f;
}

}  // namespace linkwise::probe::detail
