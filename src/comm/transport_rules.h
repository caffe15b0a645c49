// NCCL's choice of transport between two GPUs of one host (private; see linkwise/comm/transport.h).
#pragma once

#include <optional>
#include <string>

#include "linkwise/comm/transport.h"
#include "linkwise/topo/paths.h"

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

}  // namespace linkwise::comm::detail
