// CudaApi over the CUDA runtime (linked statically: the driver is loaded at the first call).
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <map>

#include "linkwise/measure/cuda_api.h"
#include "linkwise/util/error.h"
#include "measure/kernels.h"

namespace linkwise::measure {

namespace {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw RuntimeError(
        fmt::format("{} failed: {} ({})", what, cudaGetErrorString(err), cudaGetErrorName(err)));
}

class RealCuda : public CudaApi {
 public:
  ~RealCuda() override {
    for (auto& [id, e] : events_) cudaEventDestroy(e.event);
    for (auto& [id, s] : streams_) cudaStreamDestroy(s.stream);
    for (auto& [id, b] : bufs_) b.kind == MemoryKind::kDevice ? cudaFree(b.p) : cudaFreeHost(b.p);
    if (flag_) cudaFreeHost(const_cast<int*>(flag_));
  }

  int device_count(std::string* reason) override {
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
      if (reason) *reason = fmt::format("{} ({})", cudaGetErrorString(err), cudaGetErrorName(err));
      cudaGetLastError();
      return 0;
    }
    if (n == 0 && reason) *reason = "the CUDA runtime sees no device";
    return n;
  }

  DeviceInfo device_info(int d) override {
    cudaDeviceProp p{};
    check(cudaGetDeviceProperties(&p, d), "cudaGetDeviceProperties");
    DeviceInfo i;
    i.index = d;
    i.name = p.name;
    i.pci_bus_id = fmt::format("{:04x}:{:02x}:{:02x}.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
    i.sm_count = p.multiProcessorCount;
    i.memory_bytes = p.totalGlobalMem;
    i.cc_major = p.major;
    i.cc_minor = p.minor;
    sm_count_[d] = p.multiProcessorCount;
    return i;
  }

  bool can_access_peer(int d, int peer) override {
    int can = 0;
    check(cudaDeviceCanAccessPeer(&can, d, peer), "cudaDeviceCanAccessPeer");
    return can != 0;
  }

  void set_peer_access(int d, int peer, bool enable) override {
    check(cudaSetDevice(d), "cudaSetDevice");
    cudaError_t err =
        enable ? cudaDeviceEnablePeerAccess(peer, 0) : cudaDeviceDisablePeerAccess(peer);
    if (err == cudaErrorPeerAccessAlreadyEnabled || err == cudaErrorPeerAccessNotEnabled) {
      cudaGetLastError();
      return;
    }
    check(err, enable ? "cudaDeviceEnablePeerAccess" : "cudaDeviceDisablePeerAccess");
  }

  Buffer alloc(MemoryKind kind, int d, std::size_t bytes) override {
    check(cudaSetDevice(d), "cudaSetDevice");
    void* p = nullptr;
    if (kind == MemoryKind::kDevice)
      check(cudaMalloc(&p, bytes), "cudaMalloc");
    else
      check(cudaHostAlloc(&p, bytes, cudaHostAllocPortable | cudaHostAllocMapped), "cudaHostAlloc");
    bufs_[next_] = {p, kind, d};
    return next_++;
  }
  void free(Buffer b) override {
    auto it = bufs_.find(b);
    if (it == bufs_.end()) return;
    Buf x = it->second;
    bufs_.erase(it);
    check(x.kind == MemoryKind::kDevice ? cudaFree(x.p) : cudaFreeHost(x.p), "cudaFree");
  }

  Stream create_stream(int d) override {
    check(cudaSetDevice(d), "cudaSetDevice");
    cudaStream_t s;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    streams_[next_] = {s, d};
    return next_++;
  }
  void destroy_stream(Stream s) override {
    auto it = streams_.find(s);
    if (it == streams_.end()) return;
    cudaStream_t x = it->second.stream;
    streams_.erase(it);
    check(cudaStreamDestroy(x), "cudaStreamDestroy");
  }
  int stream_device(Stream s) const override { return streams_.at(s).device; }

  Event create_event(int d) override {
    check(cudaSetDevice(d), "cudaSetDevice");
    cudaEvent_t e;
    check(cudaEventCreate(&e), "cudaEventCreate");
    events_[next_] = {e, d};
    return next_++;
  }
  void destroy_event(Event e) override {
    auto it = events_.find(e);
    if (it == events_.end()) return;
    cudaEvent_t x = it->second.event;
    events_.erase(it);
    check(cudaEventDestroy(x), "cudaEventDestroy");
  }

  void record(Event e, Stream s) override {
    check(cudaSetDevice(streams_.at(s).device), "cudaSetDevice");
    check(cudaEventRecord(events_.at(e).event, streams_.at(s).stream), "cudaEventRecord");
  }
  void wait(Stream s, Event e) override {
    check(cudaStreamWaitEvent(streams_.at(s).stream, events_.at(e).event, 0),
          "cudaStreamWaitEvent");
  }

  void copy(Buffer dst, Buffer src, std::size_t bytes, CopyEngine engine, Stream s) override {
    const Buf& d = bufs_.at(dst);
    const Buf& sr = bufs_.at(src);
    const auto& st = streams_.at(s);
    check(cudaSetDevice(st.device), "cudaSetDevice");
    if (engine == CopyEngine::kSm) {
      check(detail::launch_copy(d.p, sr.p, bytes, sm_count(st.device), st.stream),
            "copy kernel launch");
    } else if (d.kind == MemoryKind::kDevice && sr.kind == MemoryKind::kDevice &&
               d.device != sr.device) {
      check(cudaMemcpyPeerAsync(d.p, d.device, sr.p, sr.device, bytes, st.stream),
            "cudaMemcpyPeerAsync");
    } else {
      check(cudaMemcpyAsync(d.p, sr.p, bytes, cudaMemcpyDefault, st.stream), "cudaMemcpyAsync");
    }
  }

  void block(Stream s) override {
    if (!flag_) {
      int* f = nullptr;
      check(cudaHostAlloc(reinterpret_cast<void**>(&f), sizeof(int),
                          cudaHostAllocPortable | cudaHostAllocMapped),
            "cudaHostAlloc");
      *f = 0;
      flag_ = f;
    }
    const auto& st = streams_.at(s);
    check(cudaSetDevice(st.device), "cudaSetDevice");
    check(detail::launch_spin(flag_, generation_ + 1, st.stream), "spin kernel launch");
    blocked_ = true;
  }
  void release_blocks() override {
    if (!blocked_) return;
    blocked_ = false;
    *flag_ = ++generation_;
    __sync_synchronize();
  }
  void synchronize(Stream s) override {
    check(cudaStreamSynchronize(streams_.at(s).stream), "cudaStreamSynchronize");
  }

  double elapsed_s(Event a, Event b) override {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, events_.at(a).event, events_.at(b).event),
          "cudaEventElapsedTime");
    return ms / 1e3;
  }

  void fill(Buffer b, std::size_t offset, std::size_t count, float value, Stream s) override {
    const auto& st = streams_.at(s);
    check(cudaSetDevice(st.device), "cudaSetDevice");
    check(detail::launch_fill(static_cast<float*>(bufs_.at(b).p) + offset, count, value, st.stream),
          "fill kernel");
  }
  std::uint64_t count_mismatches(Buffer b, std::size_t offset, std::size_t count, float expected,
                                 Stream s) override {
    const auto& st = streams_.at(s);
    check(cudaSetDevice(st.device), "cudaSetDevice");
    unsigned long long* counter = nullptr;
    check(cudaMalloc(reinterpret_cast<void**>(&counter), sizeof(*counter)), "cudaMalloc");
    unsigned long long host = 0;
    cudaError_t err = cudaMemsetAsync(counter, 0, sizeof(*counter), st.stream);
    if (err == cudaSuccess)
      err = detail::launch_count_ne(static_cast<const float*>(bufs_.at(b).p) + offset, count,
                                    expected, counter, st.stream);
    if (err == cudaSuccess)
      err = cudaMemcpyAsync(&host, counter, sizeof(host), cudaMemcpyDeviceToHost, st.stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(st.stream);
    cudaFree(counter);
    check(err, "data check");
    return host;
  }

  void* native_pointer(Buffer b) override { return bufs_.at(b).p; }
  void* native_stream(Stream s) override { return streams_.at(s).stream; }

 private:
  int sm_count(int d) {
    if (!sm_count_.count(d)) device_info(d);
    return sm_count_[d];
  }
  struct Buf {
    void* p;
    MemoryKind kind;
    int device;
  };
  struct St {
    cudaStream_t stream;
    int device;
  };
  struct Ev {
    cudaEvent_t event;
    int device;
  };
  std::map<int, Buf> bufs_;
  std::map<int, St> streams_;
  std::map<int, Ev> events_;
  std::map<int, int> sm_count_;
  volatile int* flag_ = nullptr;
  int generation_ = 0;
  bool blocked_ = false;
  int next_ = 1;
};

}  // namespace

bool built_with_cuda() { return true; }
std::unique_ptr<CudaApi> make_cuda_api() { return std::make_unique<RealCuda>(); }

}  // namespace linkwise::measure
