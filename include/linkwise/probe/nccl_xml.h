// NCCL's topology XML: import NCCL's own dump as a chassis, export a chassis for NCCL to use.
//
// NCCL writes the topology it detected to the file named by NCCL_TOPO_DUMP_FILE and reads one from
// NCCL_TOPO_FILE (NCCL src/graph/xml.cc). The format:
//
//   <system version="1">
//     <cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
//       <pci busid="0000:18:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
//       switch
//         <pci busid="0000:1b:00.0" class="0x030200" vendor="0x10de" device="0x2330" link_speed=...
//         >
//           <gpu dev="0" sm="90" rank="0" gdr="1">
//             <nvlink target="0000:05:00.0" count="5" tclass="0x068000"/> to an NVSwitch
//           </gpu>
//         </pci>
//         <pci busid="0000:1c:00.0" class="0x020700" ...><nic><net name="mlx5_0" speed="400000"
//         .../></nic></pci>
//       </pci>
//     </cpu>
//   </system>
//
// NCCL skips each switch's downstream ports (a <pci> bridge is the switch, its children the devices
// below it) and the root ports (the top <pci> elements sit under <cpu>). It does not record host
// bridges: imported devices under one CPU are each given their own (NODE to each other) unless the
// element carries `linkwise_rc`, the root_complex number export writes (NCCL ignores attributes it
// does not know). link_speed/link_width are the lesser of the device's and its port's maxima, as
// NCCL reads them.
#pragma once

#include <string>
#include <vector>

#include "linkwise/topo/chassis.h"
#include "linkwise/topo/spec.h"

namespace linkwise::probe {

/// Reads an NCCL topology XML as a chassis spec named `name` (default: the file name). Throws
/// InputError with file:line for malformed XML, a missing <system>, no CPU, or a link_width that is
/// not a PCIe width. What it reads but cannot model (an NVLink to a GPU the file does not list, as
/// in a dump of a job that used some of the box's GPUs; an NVLink to a CPU) is left out and said in
/// `notes`.
topo::ChassisSpec import_nccl_topology(const std::string& xml_text, const std::string& filename,
                                       const std::string& name = "",
                                       std::vector<std::string>* notes = nullptr);

/// Writes the first box of a chassis as an NCCL topology file. Nodes without a pci_address get
/// made-up bus ids ("0000:10:00.0" upward). Retimers are left out (NCCL has no such node).
/// Devices without a `pci_address` get a made-up bus ID, marked `linkwise_busid="synthetic"` (NCCL
/// ignores attributes it does not know) and listed in `synthetic` ("GPU0 0000:10:00.0") when given:
/// NCCL matches the machine's GPUs and NICs to the file by bus ID, so such a file needs the
/// machine's IDs put in.
std::string export_nccl_topology(const topo::Chassis& chassis,
                                 std::vector<std::string>* synthetic = nullptr);

}  // namespace linkwise::probe
