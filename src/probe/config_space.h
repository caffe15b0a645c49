// Decoding the bytes of a PCI device's config space (sysfs `config`): the PCI Express port type and
// whether ACS P2P Request Redirect is on. Register layout: PCI Express Base Specification, §7.5.3
// (PCI Express Capability) and §7.7.8 (ACS Extended Capability); constants as Linux names them in
// include/uapi/linux/pci_regs.h.
#pragma once

#include <optional>
#include <string>

#include "linkwise/probe/machine.h"

namespace linkwise::probe::detail {

struct ConfigFacts {
  PortType port_type = PortType::kUnknown;
  std::optional<bool>
      acs_p2p_redirect;  ///< nullopt: the extended space (bytes 256..4095) was not readable
  bool acs_present = false;
  std::optional<unsigned>
      link_status;   ///< PCI_EXP_LNKSTA, when the capability is in the bytes read
  std::string note;  ///< why something could not be decoded, or ""
};

/// Decodes config space bytes; any length (a non-root reader sees only 64 or 256 bytes).
ConfigFacts parse_config_space(const std::string& bytes);

}  // namespace linkwise::probe::detail
