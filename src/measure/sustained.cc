#include "linkwise/measure/sustained.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "linkwise/measure/copy_bench.h"
#include "linkwise/measure/stats.h"
#include "linkwise/util/error.h"
#include "linkwise/util/text.h"
#include "measure/handles.h"

namespace linkwise::measure {

double parse_duration_s(const std::string& text, const std::string& what) {
  double scale = 1;
  std::string num = text;
  if (!num.empty()) {
    char u = num.back();
    if (u == 's' || u == 'm' || u == 'h') {
      scale = u == 's' ? 1 : u == 'm' ? 60 : 3600;
      num.pop_back();
    }
  }
  try {
    std::size_t used = 0;
    double v = std::stod(num, &used);
    if (used == num.size() && std::isfinite(v) && v > 0 && v * scale <= 7 * 24 * 3600)
      return v * scale;
  } catch (const std::exception&) {
  }
  throw InputError(
      fmt::format("{}: '{}' is not a duration (for example 90, 90s, 5m, 1h)", what, text));
}

namespace {

struct Setup {
  std::vector<CopyJob> jobs;
};

}  // namespace

const std::vector<std::string>& sustained_kinds() {
  static const std::vector<std::string> k = {"h2d", "d2h", "bidir", "p2p", "d2d_local"};
  return k;
}

void check_sustained_kind(const std::string& kind) {
  const auto& k = sustained_kinds();
  if (std::find(k.begin(), k.end(), kind) == k.end())
    throw InputError(fmt::format("--sustained-kind: unknown kind '{}'; valid: {}", kind,
                                 fmt::to_string(fmt::join(k, ", "))));
}

namespace {

Setup make_jobs(CudaApi& cuda, detail::Handles& h, const SustainedOptions& o) {
  const auto bytes = o.bytes;
  int g = o.gpu;
  Setup s;
  if (o.kind == "h2d" || o.kind == "d2h" || o.kind == "bidir") {
    auto st = h.stream(g);
    auto host = h.buffer(MemoryKind::kPinnedHost, g, bytes),
         dev = h.buffer(MemoryKind::kDevice, g, bytes);
    if (o.kind != "d2h") s.jobs.push_back({dev, host, bytes, o.engine, st});
    if (o.kind != "h2d") {
      auto host2 = h.buffer(MemoryKind::kPinnedHost, g, bytes),
           dev2 = h.buffer(MemoryKind::kDevice, g, bytes);
      s.jobs.push_back({host2, dev2, bytes, o.engine, o.kind == "bidir" ? h.stream(g) : st});
    }
  } else if (o.kind == "p2p") {
    int p = o.peer >= 0 ? o.peer : g + 1;
    if (p >= cuda.device_count(nullptr) || p == g)
      throw InputError(fmt::format("--sustained p2p: GPU {} has no peer GPU {}", g, p));
    if (cuda.can_access_peer(g, p)) cuda.set_peer_access(g, p, true);
    s.jobs.push_back({h.buffer(MemoryKind::kDevice, p, bytes),
                      h.buffer(MemoryKind::kDevice, g, bytes), bytes, o.engine, h.stream(g)});
  } else if (o.kind == "d2d_local") {
    s.jobs.push_back({h.buffer(MemoryKind::kDevice, g, bytes),
                      h.buffer(MemoryKind::kDevice, g, bytes), bytes, o.engine, h.stream(g)});
  } else {
    check_sustained_kind(o.kind);
  }
  return s;
}

double quarter_median(const std::vector<SustainedPoint>& p, bool first) {
  std::size_t q = std::max<std::size_t>(1, p.size() / 4);
  std::vector<double> v;
  for (std::size_t i = 0; i < q; ++i) v.push_back(p[first ? i : p.size() - 1 - i].GBps);
  return median(v);
}

}  // namespace

SustainedResult run_sustained(CudaApi& cuda, GpuTelemetry* telemetry, const SustainedOptions& o,
                              const std::function<bool()>& stop) {
  if (o.duration_s <= 0 || o.interval_s <= 0)
    throw InputError("--sustained: duration and interval must be positive");
  SustainedResult r;
  r.options = o;
  DeviceInfo dev = cuda.device_info(o.gpu);
  r.device = dev.name;
  if (!telemetry) r.telemetry_note = "no telemetry (NVML not available)";
  detail::Handles h(cuda);
  auto setup = make_jobs(cuda, h, o);
  int loops = 4;
  double t = 0;
  // A cap on windows keeps a run bounded even if a window's time were reported as zero.
  const int max_windows = static_cast<int>(o.duration_s / o.interval_s) * 4 + 16;
  for (int w = 0; w < max_windows && t < o.duration_s; ++w) {
    if (stop && stop()) break;
    CopySample s = time_copies(cuda, setup.jobs, loops, 0);
    if (s.total_s <= 0) break;
    t += s.total_s;
    SustainedPoint p;
    p.t_s = t;
    p.GBps = s.total_GBps;
    if (telemetry) p.telemetry = telemetry->sample(dev);
    r.points.push_back(p);
    double per_loop = s.total_s / loops;
    loops = static_cast<int>(std::clamp(o.interval_s / per_loop, 1.0, 1e6));
  }
  if (!r.points.empty()) {
    r.first_GBps = quarter_median(r.points, true);
    r.last_GBps = quarter_median(r.points, false);
    r.drop_pct = r.first_GBps > 0 ? (r.first_GBps - r.last_GBps) / r.first_GBps * 100 : 0;
    if (std::abs(r.drop_pct) < 0.05) r.drop_pct = 0;  // prints 0.0, not -0.0
    r.slows_down = r.points.size() >= 4 && r.drop_pct > o.slowdown_pct;
  }
  return r;
}

}  // namespace linkwise::measure
