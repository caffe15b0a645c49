// NCCL's choice of transport between two GPUs of one host (private; see linkwise/comm/transport.h).
#pragma once

#include <optional>
#include <string>

#include "linkwise/comm/transport.h"
#include "linkwise/topo/paths.h"

namespace linkwise::hw {
struct LinkTech;
}

namespace linkwise::comm::detail {

/// "LOC", "NVL", "PIX", "PXB", "PHB", "NODE", "SYS" as NCCL names path types; nullopt otherwise.
std::optional<topo::PathType> parse_path_level(const std::string& name);

/// What NCCL knows about a pair of GPUs in one host when it picks a transport.
struct PairFacts {
  bool nvlink = false;                         ///< they share an NVLink fabric (path type NVL)
  topo::PathType path = topo::PathType::kSys;  ///< the PCIe path class between them
  bool peer_access = true;  ///< both GPUs support peer access (NVML P2P status OK)
  bool amd_cpu = false;     ///< the host's CPUs are AMD x86
  int host_gpus = 0;        ///< GPUs in the host
};

/// The transport NCCL uses (src/transport.cc order p2p, shm, net; rules in transport.h).
Transport choose_transport(const PairFacts& facts, const CommOptions& options);

/// How NCCL's P2P and SHM transports move data over PCIe: with the GPU's SMs, not its copy engines.
/// By default the sender's SMs store into the peer's buffer (src/transport/p2p.cc: the copy-engine
/// path only with NCCL_P2P_USE_CUDA_MEMCPY=1, default 0; P2P reads only for Ampere over NVLink,
/// p2pUseRead) or into the host buffer (src/transport/shm.cc). "SMs are limited to 128B payload
/// size, when Copy Engines can use 256B" (NVIDIA, nccl-tests issue 149, on what an SM copy
/// reaches). Every write TLP carries the same overhead whatever its payload.
struct PcieWritePayload {
  static constexpr double kSmBytes = 128;  ///< NVIDIA, nccl-tests issue 149
  static constexpr double kCeBytes = 256;  ///< same; the catalog's PCIe efficiencies are CE copies
  /// Per TLP at 2.5-32 GT/s: a 16 B header (4 DW with a 64-bit address: GPU BARs and host buffers
  /// lie above 4 GiB; PCI Express Base Specification Rev 3.0, chapter 2), a 4 B LCRC (chapter 3)
  /// and 4 B of framing carrying the sequence number (chapter 4: the STP token at 8 GT/s and up;
  /// STP, sequence number and END, 1 + 2 + 1 B, at 2.5 and 5 GT/s).
  static constexpr double kTlpOverheadBytes = 24;
};

/// The share of a PCIe link's rate (catalog efficiency: copy-engine copies) that SM-issued writes
/// keep: (128 / 152) / (256 / 280) = 0.921 on Gen1-5. nvbandwidth issue 24 measured it on H100 Gen5
/// x16: device_to_host_memcpy_sm 52.77 GB/s against 57.0 for copy-engine copies (0.926). 1 for
/// links that are not PCIe and for PCIe from Gen6 on (FLIT mode frames differently; not modelled).
double sm_write_share(const hw::LinkTech& tech);

}  // namespace linkwise::comm::detail
