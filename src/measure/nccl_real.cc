// NcclApi over libnccl.so.2, loaded with dlopen at first use (nccl.h supplies the types only), so
// that linkwise starts where NCCL is not installed.
#include <dlfcn.h>
#include <fmt/format.h>
#include <nccl.h>

#include <map>

#include "linkwise/measure/nccl_api.h"
#include "linkwise/util/error.h"

namespace linkwise::measure {

namespace {

struct Nccl {
  void* lib = nullptr;
  ncclResult_t (*get_version)(int*);
  ncclResult_t (*get_unique_id)(ncclUniqueId*);
  ncclResult_t (*comm_init_rank)(ncclComm_t*, int, ncclUniqueId, int);
  ncclResult_t (*comm_init_all)(ncclComm_t*, int, const int*);
  ncclResult_t (*comm_destroy)(ncclComm_t);
  ncclResult_t (*group_start)();
  ncclResult_t (*group_end)();
  ncclResult_t (*all_reduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                             cudaStream_t);
  ncclResult_t (*all_gather)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*reduce_scatter)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t,
                                 ncclComm_t, cudaStream_t);
  ncclResult_t (*broadcast)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t,
                            cudaStream_t);
  ncclResult_t (*reduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t,
                         cudaStream_t);
  ncclResult_t (*send)(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*recv)(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  const char* (*error_string)(ncclResult_t);
};

template <typename F>
bool load(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

class RealNccl : public NcclApi {
 public:
  RealNccl(CudaApi& cuda, Nccl n) : cuda_(cuda), n_(n) {}
  ~RealNccl() override {
    for (auto& [id, c] : comms_) n_.comm_destroy(c);
    // The library stays loaded: NCCL keeps threads that outlive its communicators.
  }
  std::string version() override {
    int v = 0;
    check(n_.get_version(&v), "ncclGetVersion");
    // NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9.
    return fmt::format("{}.{}.{}", v / 10000, v / 100 % 100, v % 100);
  }
  std::string unique_id() override {
    ncclUniqueId id;
    check(n_.get_unique_id(&id), "ncclGetUniqueId");
    return std::string(id.internal, sizeof(id.internal));
  }
  std::vector<Comm> init_all(const std::vector<int>& devices) override {
    std::vector<ncclComm_t> c(devices.size());
    check(n_.comm_init_all(c.data(), static_cast<int>(devices.size()), devices.data()),
          "ncclCommInitAll");
    std::vector<Comm> out;
    for (auto x : c) {
      comms_[next_] = x;
      out.push_back(next_++);
    }
    return out;
  }
  Comm init_rank(int nranks, const std::string& uid, int rank, int device) override {
    ncclUniqueId id;
    if (uid.size() != sizeof(id.internal)) throw RuntimeError("NCCL unique id of the wrong size");
    std::copy(uid.begin(), uid.end(), id.internal);
    if (cudaSetDevice(device) != cudaSuccess)
      throw RuntimeError(fmt::format("cudaSetDevice({}) failed", device));
    ncclComm_t c;
    check(n_.comm_init_rank(&c, nranks, id, rank), "ncclCommInitRank");
    comms_[next_] = c;
    return next_++;
  }
  void destroy(Comm c) override {
    auto it = comms_.find(c);
    if (it == comms_.end()) return;
    ncclComm_t x = it->second;
    comms_.erase(it);
    check(n_.comm_destroy(x), "ncclCommDestroy");
  }
  void group_start() override { check(n_.group_start(), "ncclGroupStart"); }
  void group_end() override { check(n_.group_end(), "ncclGroupEnd"); }

  void run(Comm comm, const Call& c, CudaApi::Stream s) override {
    ncclComm_t cm = comms_.at(comm);
    auto st = static_cast<cudaStream_t>(cuda_.native_stream(s));
    const char* sb = static_cast<const char*>(cuda_.native_pointer(c.send)) + c.send_offset;
    char* rb = static_cast<char*>(cuda_.native_pointer(c.recv)) + c.recv_offset;
    const std::size_t n = c.count;
    switch (c.op) {
      case comm::Op::kAllReduce:
        check(n_.all_reduce(sb, rb, n, ncclFloat, ncclSum, cm, st), "ncclAllReduce");
        break;
      case comm::Op::kAllGather:
        check(n_.all_gather(sb, rb, n, ncclFloat, cm, st), "ncclAllGather");
        break;
      case comm::Op::kReduceScatter:
        check(n_.reduce_scatter(sb, rb, n, ncclFloat, ncclSum, cm, st), "ncclReduceScatter");
        break;
      case comm::Op::kBroadcast:
        check(n_.broadcast(sb, rb, n, ncclFloat, c.root, cm, st), "ncclBroadcast");
        break;
      case comm::Op::kReduce:
        check(n_.reduce(sb, rb, n, ncclFloat, ncclSum, c.root, cm, st), "ncclReduce");
        break;
      case comm::Op::kAllToAll:
        check(n_.group_start(), "ncclGroupStart");
        for (int r = 0; r < c.nranks; ++r) {
          check(n_.send(sb + r * n * 4, n, ncclFloat, r, cm, st), "ncclSend");
          check(n_.recv(rb + r * n * 4, n, ncclFloat, r, cm, st), "ncclRecv");
        }
        check(n_.group_end(), "ncclGroupEnd");
        break;
      case comm::Op::kSendRecv:
        check(n_.group_start(), "ncclGroupStart");
        check(n_.send(sb, n, ncclFloat, (c.rank + 1) % c.nranks, cm, st), "ncclSend");
        check(n_.recv(rb, n, ncclFloat, (c.rank + c.nranks - 1) % c.nranks, cm, st), "ncclRecv");
        check(n_.group_end(), "ncclGroupEnd");
        break;
    }
  }

 private:
  void check(ncclResult_t r, const char* what) {
    if (r != ncclSuccess)
      throw RuntimeError(fmt::format("{} failed: {}", what, n_.error_string(r)));
  }
  CudaApi& cuda_;
  Nccl n_;
  std::map<int, ncclComm_t> comms_;
  int next_ = 1;
};

}  // namespace

bool built_with_nccl() { return true; }

std::unique_ptr<NcclApi> make_nccl_api(CudaApi& cuda, std::string* reason) {
  Nccl n;
  n.lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!n.lib) n.lib = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL);
  if (!n.lib) {
    if (reason) *reason = fmt::format("cannot load libnccl.so.2: {}", dlerror());
    return nullptr;
  }
  bool ok =
      load(n.lib, "ncclGetVersion", n.get_version) &&
      load(n.lib, "ncclGetUniqueId", n.get_unique_id) &&
      load(n.lib, "ncclCommInitRank", n.comm_init_rank) &&
      load(n.lib, "ncclCommInitAll", n.comm_init_all) &&
      load(n.lib, "ncclCommDestroy", n.comm_destroy) &&
      load(n.lib, "ncclGroupStart", n.group_start) && load(n.lib, "ncclGroupEnd", n.group_end) &&
      load(n.lib, "ncclAllReduce", n.all_reduce) && load(n.lib, "ncclAllGather", n.all_gather) &&
      load(n.lib, "ncclReduceScatter", n.reduce_scatter) &&
      load(n.lib, "ncclBroadcast", n.broadcast) && load(n.lib, "ncclReduce", n.reduce) &&
      load(n.lib, "ncclSend", n.send) && load(n.lib, "ncclRecv", n.recv) &&
      load(n.lib, "ncclGetErrorString", n.error_string);
  if (!ok) {
    if (reason)
      *reason = "libnccl.so.2 lacks a needed function (NCCL 2.7 or later is needed for send/recv)";
    return nullptr;
  }
  return std::make_unique<RealNccl>(cuda, n);
}

}  // namespace linkwise::measure
