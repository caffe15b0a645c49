#include "linkwise/measure/copy_bench.h"

#include <algorithm>

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

}  // namespace

std::vector<CopyResult> bench_host_device(CudaApi& cuda, const std::vector<int>& gpus,
                                          const CopyOptions& o, const Hooks<CopyResult>& hooks) {
  std::vector<CopyResult> out;
  for (int g : gpus) {
    for (auto bytes : o.sizes) {
      detail::Handles h(cuda);
      auto host_src = h.buffer(MemoryKind::kPinnedHost, g, bytes);
      auto host_dst = h.buffer(MemoryKind::kPinnedHost, g, bytes);
      auto dev_src = h.buffer(MemoryKind::kDevice, g, bytes);
      auto dev_dst = h.buffer(MemoryKind::kDevice, g, bytes);
      auto s0 = h.stream(g), s1 = h.stream(g);
      for (auto engine : o.engines) {
        CopyResult base;
        base.engine = engine;
        base.bytes = bytes;
        CopyJob up{dev_dst, host_src, bytes, engine, s0};
        CopyJob down{host_dst, dev_src, bytes, engine, s1};
        CopyResult r = base;
        r.kind = "h2d", r.src = -1, r.dst = g;
        if (!sample_jobs(cuda, {up}, o, r, out, hooks)) return out;
        r.kind = "d2h", r.src = g, r.dst = -1;
        down.stream = s0;
        if (!sample_jobs(cuda, {down}, o, r, out, hooks)) return out;
        down.stream = s1;
        r.kind = "bidir", r.src = g, r.dst = g;
        if (!sample_jobs(cuda, {up, down}, o, r, out, hooks)) return out;
      }
    }
  }
  return out;
}

std::vector<CopyResult> bench_peer(CudaApi& cuda, const std::vector<int>& gpus, bool peer_access,
                                   const CopyOptions& o, const Hooks<CopyResult>& hooks) {
  std::vector<CopyResult> out;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    for (std::size_t j = 0; j < gpus.size(); ++j) {
      int a = gpus[i], b = gpus[j];
      if (a == b) continue;
      bool can = cuda.can_access_peer(a, b) && cuda.can_access_peer(b, a);
      if (peer_access && !can) continue;
      if (can) {
        cuda.set_peer_access(a, b, peer_access);
        cuda.set_peer_access(b, a, peer_access);
      }
      for (auto bytes : o.sizes) {
        detail::Handles h(cuda);
        auto a_src = h.buffer(MemoryKind::kDevice, a, bytes),
             a_dst = h.buffer(MemoryKind::kDevice, a, bytes);
        auto b_src = h.buffer(MemoryKind::kDevice, b, bytes),
             b_dst = h.buffer(MemoryKind::kDevice, b, bytes);
        auto sa = h.stream(a), sb = h.stream(b);
        for (auto engine : o.engines) {
          if (engine == CopyEngine::kSm && !peer_access) continue;
          CopyResult r;
          r.engine = engine, r.bytes = bytes, r.peer_access = peer_access;
          r.kind = "p2p", r.src = a, r.dst = b;
          CopyJob ab{b_dst, a_src, bytes, engine, sa}, ba{a_dst, b_src, bytes, engine, sb};
          if (!sample_jobs(cuda, {ab}, o, r, out, hooks)) return out;
          if (a < b) {
            r.kind = "p2p_bidir";
            if (!sample_jobs(cuda, {ab, ba}, o, r, out, hooks)) return out;
          }
        }
      }
    }
  }
  return out;
}

std::vector<CopyResult> bench_local(CudaApi& cuda, const std::vector<int>& gpus,
                                    const CopyOptions& o, const Hooks<CopyResult>& hooks) {
  std::vector<CopyResult> out;
  for (int g : gpus) {
    for (auto bytes : o.sizes) {
      detail::Handles h(cuda);
      auto src = h.buffer(MemoryKind::kDevice, g, bytes),
           dst = h.buffer(MemoryKind::kDevice, g, bytes);
      auto s = h.stream(g);
      for (auto engine : o.engines) {
        CopyResult r;
        r.kind = "d2d_local", r.src = g, r.dst = g, r.engine = engine, r.bytes = bytes;
        if (!sample_jobs(cuda, {{dst, src, bytes, engine, s}}, o, r, out, hooks)) return out;
      }
    }
  }
  return out;
}

std::vector<LatencyResult> bench_latency(CudaApi& cuda, const std::vector<int>& gpus,
                                         bool peer_access, int repeats, int samples,
                                         const Hooks<LatencyResult>& hooks) {
  std::vector<LatencyResult> out;
  for (int a : gpus) {
    for (int b : gpus) {
      bool can = a != b && cuda.can_access_peer(a, b) && cuda.can_access_peer(b, a);
      if (a != b && peer_access && !can) continue;
      if (can) {
        cuda.set_peer_access(a, b, peer_access);
        cuda.set_peer_access(b, a, peer_access);
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
      keep(out, LatencyResult{a, b, peer_access, median(us)}, hooks);
    }
  }
  return out;
}

}  // namespace linkwise::measure
