// A chassis text shared by tests: four A100 PCIe cards under one Gen4 PCIe switch, every GPU link
// x16, the switch's one x16 uplink to a single CPU. Peer-to-peer between the GPUs is PIX. A test
// may append a top-level list (e.g. `nccl:`) to it; the text's last line is line 9 of the file.
#pragma once

namespace linkwise::topo::testing {

inline constexpr const char* kFourUnderSwitch = R"(
name: four-under-switch
nodes:
  - {id: cpu0, kind: cpu, part: xeon-w9-3495x}
  - {id: sw0, kind: pcie_switch, part: pex88096}
  - {id: "gpu{0..3}", kind: gpu, part: a100-pcie}
links:
  - {a: sw0, b: cpu0, tech: pcie4, width: 16}
  - {a: "gpu{0..3}", b: sw0, tech: pcie4, width: 16}
)";

}  // namespace linkwise::topo::testing
