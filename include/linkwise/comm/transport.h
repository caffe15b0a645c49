// NCCL's transports between two ranks and the settings users change, under NCCL's own names.
//
// Which transport NCCL uses between two GPUs (src/transport.cc tries them in order p2p, shm, net):
//   P2P  when the path class is at most the P2P level and both GPUs have peer access
//        (src/graph/paths.cc ncclTopoCheckP2p: level PXB by default; PATH_SYS on AMD x86 CPUs with
//        at most two GPUs; NCCL_P2P_LEVEL overrides; NVML's P2P status must be OK both ways, so
//        GPUs without peer access -- GeForce cards, or a host whose IOMMU/ACS blocks it -- never
//        use P2P); NCCL_P2P_DISABLE=1 turns it off (NVLink pairs included).
//   SHM  otherwise, between GPUs of one host (src/transport/shm.cc): the sender's SMs write into a
//        host buffer that lives with the receiver (NCCL_SHM_LOCALITY=2, the default) or with the
//        sender (1), the receiver's SMs read it; NCCL_SHM_DISABLE=1 turns it off.
//   NET  between hosts, or when neither P2P nor SHM may be used: through a NIC (GPUDirect RDMA).
//
//   linkwise::comm::CommOptions o;
//   linkwise::comm::apply_nccl_settings(o, "NCCL_P2P_LEVEL=PHB,NCCL_NVLS_ENABLE=0", "--nccl");
#pragma once

#include <string>
#include <vector>

namespace linkwise::topo {
class Chassis;
}

namespace linkwise::comm {

struct CommOptions;

enum class Transport { kP2pNvlink, kP2pPcie, kShm, kNet };
const char* to_string(Transport t);  ///< "P2P/NVLink", "P2P/PCIe", "SHM", "NET"

/// Applies one NCCL setting by its environment name (NCCL_P2P_LEVEL, NCCL_P2P_DISABLE,
/// NCCL_SHM_DISABLE, NCCL_SHM_LOCALITY, NCCL_NVLS_ENABLE, NCCL_ALGO, NCCL_PROTO,
/// NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS). An unknown name or a value NCCL does not take throws
/// InputError naming `where` (a flag or file:line), the setting and the value.
void apply_nccl_setting(CommOptions& options, const std::string& name, const std::string& value,
                        const std::string& where);
/// A comma-separated list of NAME=VALUE, each applied as apply_nccl_setting() does. NCCL_ALGO and
/// NCCL_PROTO take lists themselves: items without '=' after one of them continue its value
/// (`NCCL_ALGO=ring,tree,NCCL_PROTO=Simple`).
void apply_nccl_settings(CommOptions& options, const std::string& list, const std::string& where);

/// The options a chassis runs with: its file's `nccl:` settings (errors name file:line), then
/// `cli` (a --nccl list, applied the same way; errors name `--nccl`), later ones winning.
CommOptions nccl_options(const topo::Chassis& chassis, const std::vector<std::string>& cli = {});

/// The settings NCCL users change that this model honours, one line each, for --help and docs.
const char* nccl_settings_help();

}  // namespace linkwise::comm
