// The CUDA runtime as the benchmarks use it, behind an interface with a real and a fake
// implementation.
//
// The real implementation (src/measure/cuda_real.cc, built when the CUDA toolkit is found) links
// the CUDA runtime statically (libcudart_static.a), which loads the driver (libcuda.so.1) only when
// first called: the linkwise binary therefore starts on machines with no driver, and device_count()
// reports why there is no GPU (cudaErrorInsufficientDriver, cudaErrorNoDevice, ...). The fake
// (measure/fake_gpu.h) runs the same calls on a simulated clock for tests.
//
// Handles (buffers, streams, events) are small integers owned by the implementation. Errors of a
// device call throw RuntimeError naming the call and CUDA's message.
//
//   std::string why;
//   auto cuda = linkwise::measure::make_cuda_api();
//   if (!cuda || cuda->device_count(&why) == 0) fmt::print("no GPU found: {}\n", why);
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace linkwise::measure {

enum class MemoryKind {
  kDevice,      ///< device memory of one GPU (cudaMalloc)
  kPinnedHost,  ///< page-locked host memory, mapped for every GPU (cudaHostAlloc portable | mapped)
};

/// What moves the bytes: a DMA copy engine (cudaMemcpyAsync) or a copy kernel on the SMs.
enum class CopyEngine { kCe, kSm };
const char* to_string(CopyEngine e);  ///< "ce", "sm"

struct DeviceInfo {
  int index = 0;
  std::string name;        ///< "NVIDIA H200"
  std::string pci_bus_id;  ///< "0000:1b:00.0"
  int sm_count = 0;
  std::uint64_t memory_bytes = 0;
  int cc_major = 0, cc_minor = 0;
};

class CudaApi {
 public:
  using Buffer = int;
  using Stream = int;
  using Event = int;

  virtual ~CudaApi() = default;

  /// Visible devices. Returns 0 and sets `reason` (when not null) when there are none or the driver
  /// cannot be used; never throws for that.
  virtual int device_count(std::string* reason) = 0;
  virtual DeviceInfo device_info(int device) = 0;
  virtual bool can_access_peer(int device, int peer) = 0;
  /// Enables or disables `device`'s direct access to `peer`'s memory; a no-op when already so.
  virtual void set_peer_access(int device, int peer, bool enable) = 0;

  /// `device` is the GPU holding the memory, or for pinned host memory the GPU whose NUMA node it
  /// should be near (a hint).
  virtual Buffer alloc(MemoryKind kind, int device, std::size_t bytes) = 0;
  virtual void free(Buffer b) = 0;
  virtual Stream create_stream(int device) = 0;
  virtual void destroy_stream(Stream s) = 0;
  /// The device a stream was created on.
  virtual int stream_device(Stream s) const = 0;
  virtual Event create_event(int device) = 0;
  virtual void destroy_event(Event e) = 0;

  virtual void record(Event e, Stream s) = 0;
  /// Work enqueued on `s` after this waits for `e`.
  virtual void wait(Stream s, Event e) = 0;
  /// Copies `bytes` from the start of `src` to the start of `dst`, enqueued on `s`.
  virtual void copy(Buffer dst, Buffer src, std::size_t bytes, CopyEngine engine, Stream s) = 0;
  /// Holds `s` until release_blocks() (nvbandwidth's spin kernel), so that work enqueued behind it
  /// is timed without the host's enqueue cost. The hold ends by itself after about 10 s.
  virtual void block(Stream s) = 0;
  virtual void release_blocks() = 0;
  virtual void synchronize(Stream s) = 0;
  /// Seconds between two recorded, completed events.
  virtual double elapsed_s(Event start, Event stop) = 0;

  /// Data checks on float elements: sets `count` elements from `offset` to `value`, and counts
  /// those that differ from `expected`.
  virtual void fill(Buffer b, std::size_t offset, std::size_t count, float value, Stream s) = 0;
  virtual std::uint64_t count_mismatches(Buffer b, std::size_t offset, std::size_t count,
                                         float expected, Stream s) = 0;

  /// Native handles for NCCL: the device pointer (void*) and the cudaStream_t; null in the fake.
  virtual void* native_pointer(Buffer b) = 0;
  virtual void* native_stream(Stream s) = 0;
};

/// Whether this build has the real CUDA implementation.
bool built_with_cuda();
/// The real implementation, or null when linkwise was built without CUDA.
std::unique_ptr<CudaApi> make_cuda_api();

}  // namespace linkwise::measure
