// NCCL as the collective benchmark uses it, behind an interface with a real and a fake
// implementation.
//
// The real implementation (src/measure/nccl_real.cc, built when nccl.h is found) loads libnccl.so.2
// with dlopen at first use, so the linkwise binary starts where NCCL is not installed;
// make_nccl_api() then returns null with the loader's message. Data type float and reduction sum,
// as nccl-tests runs by default (-d float -o sum).
//
// Operations are comm::Op, named as nccl-tests names them (all_reduce_perf, all_gather_perf, ...):
// all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "linkwise/comm/collective.h"
#include "linkwise/measure/cuda_api.h"

namespace linkwise::measure {

// Collectives are comm::Op, with comm's names, parsing, bus factor, reduces() and rooted().

class NcclApi {
 public:
  using Comm = int;

  /// One rank's call. Offsets are in bytes from the start of the buffers; counts in elements.
  struct Call {
    comm::Op op = comm::Op::kAllReduce;
    CudaApi::Buffer send = -1, recv = -1;
    std::size_t send_offset = 0, recv_offset = 0;
    std::size_t count =
        0;  ///< the count NCCL's call takes (per-rank count for all-gather and the like)
    int root = 0;
    int rank = 0, nranks = 1;
  };

  virtual ~NcclApi() = default;
  virtual std::string version() = 0;  ///< "2.27.3"
  /// An ncclUniqueId as bytes, for init_rank() in several processes.
  virtual std::string unique_id() = 0;
  /// One communicator per device, all in this process (nccl-tests -g N).
  virtual std::vector<Comm> init_all(const std::vector<int>& devices) = 0;
  /// One rank of a communicator spread over processes (nccl-tests under mpirun).
  virtual Comm init_rank(int nranks, const std::string& unique_id, int rank, int device) = 0;
  virtual void destroy(Comm c) = 0;
  virtual void group_start() = 0;
  virtual void group_end() = 0;
  virtual void run(Comm c, const Call& call, CudaApi::Stream s) = 0;
};

/// Whether this build has the real NCCL implementation.
bool built_with_nccl();
/// The real implementation over `cuda` (which must outlive it), or null with `reason` set when
/// linkwise was built without NCCL or libnccl.so.2 cannot be loaded.
std::unique_ptr<NcclApi> make_nccl_api(CudaApi& cuda, std::string* reason);

}  // namespace linkwise::measure
