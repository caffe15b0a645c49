#include "linkwise/measure/copy_bench.h"

#include <algorithm>
#include <optional>
#include <string>

#include "linkwise/util/error.h"
#include "measure/handles.h"

namespace linkwise::measure {

const char* to_string(CopyEngine e) { return e == CopyEngine::kCe ? "ce" : "sm"; }

namespace {
struct Timed {
  CudaApi::Event start, end;
};
}  // namespace

CopySample time_copies(CudaApi& cuda, const std::vector<CopyJob>& jobs, int loops, int warmup) {
  if (jobs.empty()) return {};
  detail::Handles h(cuda);
  // Each event is recorded on one stream, so it lives on that stream's device.
  std::vector<Timed> t;
  for (const auto& j : jobs) {
    int d = cuda.stream_device(j.stream);
    t.push_back({h.event(d), h.event(d)});
  }
  CudaApi::Event total_end = h.event(cuda.stream_device(jobs[0].stream));
  for (const auto& j : jobs) {
    cuda.block(j.stream);
    for (int w = 0; w < warmup; ++w) cuda.copy(j.dst, j.src, j.bytes, j.engine, j.stream);
  }
  cuda.record(t[0].start, jobs[0].stream);
  for (std::size_t i = 1; i < jobs.size(); ++i) {
    cuda.wait(jobs[i].stream, t[0].start);
    cuda.record(t[i].start, jobs[i].stream);
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    for (int l = 0; l < loops; ++l)
      cuda.copy(jobs[i].dst, jobs[i].src, jobs[i].bytes, jobs[i].engine, jobs[i].stream);
    cuda.record(t[i].end, jobs[i].stream);
    if (i > 0) cuda.wait(jobs[0].stream, t[i].end);
  }
  cuda.record(total_end, jobs[0].stream);
  cuda.release_blocks();
  for (const auto& j : jobs) cuda.synchronize(j.stream);

  CopySample s;
  double total_bytes = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    double bytes = static_cast<double>(jobs[i].bytes) * loops;
    s.job_GBps.push_back(gbps(bytes, cuda.elapsed_s(t[i].start, t[i].end)));
    total_bytes += bytes;
  }
  s.total_s = cuda.elapsed_s(t[0].start, total_end);
  s.total_GBps = gbps(total_bytes, s.total_s);
  return s;
}

namespace {

// Adds a finished result to `out` and hands it to `hooks`.
template <class Result>
bool keep(std::vector<Result>& out, const Result& r, const Hooks<Result>& hooks) {
  out.push_back(r);
  hooks.done(r);
  return true;
}

// Runs `samples` samples of a set of jobs; the figure is the total for several jobs, the job's own
// bandwidth for one. Keeps the result; false (nothing kept) when a stop was requested before a
// sample.
bool sample_jobs(CudaApi& cuda, const std::vector<CopyJob>& jobs, const CopyOptions& o,
                 CopyResult r, std::vector<CopyResult>& out, const Hooks<CopyResult>& hooks) {
  std::vector<double> figure;
  std::vector<std::vector<double>> dirs(jobs.size());
  for (int n = 0; n < std::max(1, o.samples); ++n) {
    if (hooks.stopping()) return false;
    CopySample s = time_copies(cuda, jobs, o.loops, o.warmup);
    figure.push_back(jobs.size() == 1 ? s.job_GBps[0] : s.total_GBps);
    for (std::size_t i = 0; i < jobs.size(); ++i) dirs[i].push_back(s.job_GBps[i]);
  }
  r.GBps = summarize(figure);
  if (jobs.size() > 1)
    for (auto& d : dirs) r.direction_GBps.push_back(median(d));
  return keep(out, r, hooks);
}

// Whether GPUs a and b can reach each other's memory both ways.
bool both_can_access(CudaApi& cuda, int a, int b) {
  return cuda.can_access_peer(a, b) && cuda.can_access_peer(b, a);
}

// The buffers and streams of one GPU (host kinds, d2d_local) or pair (peer kinds) and size, which
// the results planned for it share. Host kinds: x = pinned host memory near the GPU, y = the GPU's
// memory, both streams on the GPU. d2d_local: y only, one stream. Peer kinds: x on the source GPU
// with stream s0, y on the destination GPU with stream s1.
struct CopyGroup {
  enum Family { kHost, kLocal, kPeer };
  static Family family(const std::string& kind) {
    if (kind == "h2d" || kind == "d2h" || kind == "bidir") return kHost;
    if (kind == "d2d_local") return kLocal;
    if (kind == "p2p" || kind == "p2p_bidir") return kPeer;
    throw InputError("copy benchmark: unknown kind '" + kind + "'");
  }
  Family fam;
  int a, b;  // the GPU (twice), or the pair
  std::uint64_t bytes;
  bool peer_access;

  static CopyGroup of(const CopyResult& r) {
    Family f = family(r.kind);
    int g = r.kind == "h2d" ? r.dst : r.src;
    return f == kPeer ? CopyGroup{f, r.src, r.dst, r.bytes, r.peer_access}
                      : CopyGroup{f, g, g, r.bytes, r.peer_access};
  }
  bool operator==(const CopyGroup& o) const {
    return fam == o.fam && a == o.a && b == o.b && bytes == o.bytes && peer_access == o.peer_access;
  }

  CudaApi::Buffer x_src = -1, x_dst = -1, y_src = -1, y_dst = -1;
  CudaApi::Stream s0 = -1, s1 = -1;

  void allocate(CudaApi& cuda, detail::Handles& h) {
    if (fam == kHost) {
      x_src = h.buffer(MemoryKind::kPinnedHost, a, bytes);
      x_dst = h.buffer(MemoryKind::kPinnedHost, a, bytes);
    } else if (fam == kPeer) {
      if (both_can_access(cuda, a, b)) {
        cuda.set_peer_access(a, b, peer_access);
        cuda.set_peer_access(b, a, peer_access);
      }
      x_src = h.buffer(MemoryKind::kDevice, a, bytes);
      x_dst = h.buffer(MemoryKind::kDevice, a, bytes);
    }
    y_src = h.buffer(MemoryKind::kDevice, b, bytes);
    y_dst = h.buffer(MemoryKind::kDevice, b, bytes);
    s0 = h.stream(a);
    if (fam != kLocal) s1 = h.stream(b);
  }

  // The copies that measure `r`, run together.
  std::vector<CopyJob> jobs(const CopyResult& r) const {
    const CopyJob forth{y_dst, x_src, bytes, r.engine, s0};
    if (r.kind == "h2d" || r.kind == "p2p") return {forth};
    if (r.kind == "d2h") return {{x_dst, y_src, bytes, r.engine, s0}};
    if (r.kind == "d2d_local") return {{y_dst, y_src, bytes, r.engine, s0}};
    return {forth, {x_dst, y_src, bytes, r.engine, s1}};  // bidir, p2p_bidir
  }
};

}  // namespace

std::vector<CopyResult> plan_host_device(const std::vector<int>& gpus, const CopyOptions& o) {
  std::vector<CopyResult> plan;
  for (int g : gpus)
    for (auto bytes : o.sizes)
      for (auto engine : o.engines)
        for (const char* kind : {"h2d", "d2h", "bidir"}) {
          CopyResult r;
          r.kind = kind, r.engine = engine, r.bytes = bytes;
          r.src = r.kind == "h2d" ? -1 : g;
          r.dst = r.kind == "d2h" ? -1 : g;
          plan.push_back(r);
        }
  return plan;
}

std::vector<CopyResult> plan_peer(CudaApi& cuda, const std::vector<int>& gpus, bool peer_access,
                                  const CopyOptions& o) {
  std::vector<CopyResult> plan;
  for (int a : gpus)
    for (int b : gpus) {
      if (a == b || (peer_access && !both_can_access(cuda, a, b))) continue;
      for (auto bytes : o.sizes)
        for (auto engine : o.engines) {
          if (engine == CopyEngine::kSm && !peer_access) continue;
          CopyResult r;
          r.engine = engine, r.bytes = bytes, r.peer_access = peer_access;
          r.kind = "p2p", r.src = a, r.dst = b;
          plan.push_back(r);
          r.kind = "p2p_bidir";
          if (a < b) plan.push_back(r);
        }
    }
  return plan;
}

std::vector<CopyResult> plan_local(const std::vector<int>& gpus, const CopyOptions& o) {
  std::vector<CopyResult> plan;
  for (int g : gpus)
    for (auto bytes : o.sizes)
      for (auto engine : o.engines) {
        CopyResult r;
        r.kind = "d2d_local", r.src = g, r.dst = g, r.engine = engine, r.bytes = bytes;
        plan.push_back(r);
      }
  return plan;
}

std::vector<LatencyResult> plan_latency(CudaApi& cuda, const std::vector<int>& gpus,
                                        bool peer_access) {
  std::vector<LatencyResult> plan;
  for (int a : gpus)
    for (int b : gpus)
      if (a == b || !peer_access || both_can_access(cuda, a, b))
        plan.push_back({a, b, peer_access, 0});
  return plan;
}

std::vector<CopyResult> measure_copies(CudaApi& cuda, const std::vector<CopyResult>& plan,
                                       const CopyOptions& o, const Hooks<CopyResult>& hooks) {
  std::vector<CopyResult> out;
  std::optional<detail::Handles> h;
  std::optional<CopyGroup> group;
  for (const auto& r : plan) {
    CopyGroup next = CopyGroup::of(r);
    if (!group || !(*group == next)) {
      h.reset();  // frees the previous group's buffers and streams first
      h.emplace(cuda);
      group = next;
      group->allocate(cuda, *h);
    }
    if (!sample_jobs(cuda, group->jobs(r), o, r, out, hooks)) return out;
  }
  return out;
}

std::vector<LatencyResult> measure_latency(CudaApi& cuda, const std::vector<LatencyResult>& plan,
                                           int repeats, int samples,
                                           const Hooks<LatencyResult>& hooks) {
  std::vector<LatencyResult> out;
  for (auto r : plan) {
    const int a = r.src, b = r.dst;
    if (a != b && both_can_access(cuda, a, b)) {
      cuda.set_peer_access(a, b, r.peer_access);
      cuda.set_peer_access(b, a, r.peer_access);
    }
    detail::Handles h(cuda);
    auto src = h.buffer(MemoryKind::kDevice, a, 4), dst = h.buffer(MemoryKind::kDevice, b, 4);
    auto s = h.stream(a);
    std::vector<double> us;
    for (int n = 0; n < std::max(1, samples); ++n) {
      if (hooks.stopping()) return out;
      CopySample cs = time_copies(cuda, {{dst, src, 4, CopyEngine::kCe, s}}, repeats, 1);
      us.push_back(cs.total_s / repeats * 1e6);
    }
    r.us = median(us);
    keep(out, r, hooks);
  }
  return out;
}

std::vector<CopyResult> bench_host_device(CudaApi& cuda, const std::vector<int>& gpus,
                                          const CopyOptions& o, const Hooks<CopyResult>& hooks) {
  return measure_copies(cuda, plan_host_device(gpus, o), o, hooks);
}

std::vector<CopyResult> bench_peer(CudaApi& cuda, const std::vector<int>& gpus, bool peer_access,
                                   const CopyOptions& o, const Hooks<CopyResult>& hooks) {
  return measure_copies(cuda, plan_peer(cuda, gpus, peer_access, o), o, hooks);
}

std::vector<CopyResult> bench_local(CudaApi& cuda, const std::vector<int>& gpus,
                                    const CopyOptions& o, const Hooks<CopyResult>& hooks) {
  return measure_copies(cuda, plan_local(gpus, o), o, hooks);
}

std::vector<LatencyResult> bench_latency(CudaApi& cuda, const std::vector<int>& gpus,
                                         bool peer_access, int repeats, int samples,
                                         const Hooks<LatencyResult>& hooks) {
  return measure_latency(cuda, plan_latency(cuda, gpus, peer_access), repeats, samples, hooks);
}

}  // namespace linkwise::measure
