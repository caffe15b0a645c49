#include "linkwise/measure/fake_gpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "linkwise/measure/nccl_bench.h"
#include "linkwise/util/error.h"
#include "linkwise/util/limits.h"
#include "linkwise/util/text.h"

namespace linkwise::measure {

namespace {

double number(const std::string& key, const std::string& v) {
  try {
    std::size_t used = 0;
    double x = std::stod(v, &used);
    if (used == v.size() && std::isfinite(x)) return x;
  } catch (const std::exception&) {
  }
  throw InputError(
      fmt::format("fake GPU spec: '{}' needs a number, not '{}'", key, limits::quote_value(v)));
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

FakeGpuSpec parse_fake_spec(const std::string& text) {
  FakeGpuSpec f;
  if (text.empty()) return f;
  static const std::vector<std::string> keys = {"gpus",   "name",     "h2d",   "d2h",     "sm",
                                                "p2p",    "staged",   "local", "latency", "bus",
                                                "jitter", "slowdown", "none",  "delay"};
  for (const auto& item : split(text, ',')) {
    auto eq = item.find('=');
    std::string k = item.substr(0, eq), v = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (k == "gpus") {
      // Checked as a number before it becomes an int (1e20 cast to int is undefined; it printed
      // -2147483648).
      double g = number(k, v);
      if (g < 0 || g > 64 || g != std::floor(g))
        throw InputError(
            fmt::format("fake GPU spec: 'gpus' must be a whole number from 0 to 64, not '{}'",
                        limits::quote_value(v)));
      f.gpus = static_cast<int>(g);
    } else if (k == "name")
      f.name = v;
    else if (k == "h2d")
      f.h2d_GBps = number(k, v);
    else if (k == "d2h")
      f.d2h_GBps = number(k, v);
    else if (k == "sm")
      f.sm_factor = number(k, v);
    else if (k == "p2p")
      f.p2p_GBps = number(k, v);
    else if (k == "staged")
      f.staged_GBps = number(k, v);
    else if (k == "local")
      f.local_GBps = number(k, v);
    else if (k == "latency")
      f.latency_us = number(k, v);
    else if (k == "bus")
      f.bus_GBps = number(k, v);
    else if (k == "delay")
      f.delay_ms = number(k, v);
    else if (k == "none")
      f.no_gpu_reason = v.empty() ? "fake machine without GPUs" : v;
    else if (k == "jitter") {
      for (const auto& x : split(v, ':')) f.jitter.push_back(number(k, x));
    } else if (k == "slowdown") {
      auto parts = split(v, ':');
      if (parts.size() != 2) throw InputError("fake GPU spec: 'slowdown' takes SECONDS:FACTOR");
      f.slowdown_after_s = number(k, parts[0]);
      f.slowdown_factor = number(k, parts[1]);
    } else {
      throw InputError(
          fmt::format("fake GPU spec: unknown key '{}'; {}", k, did_you_mean(k, keys)));
    }
  }
  if (f.gpus < 0 || f.gpus > 64) throw InputError("fake GPU spec: 'gpus' must be 0 to 64");
  if (f.delay_ms < 0 || f.delay_ms > 60000)
    throw InputError("fake GPU spec: 'delay' must be 0 to 60000 milliseconds");
  return f;
}

FakeCuda::FakeCuda(FakeGpuSpec spec)
    : spec_(std::move(spec)), busy_s_(std::max(spec_.gpus, 1), 0.0) {}

void FakeCuda::synchronize(Stream) {
  if (spec_.delay_ms > 0)
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(spec_.delay_ms));
}

int FakeCuda::device_count(std::string* reason) {
  if (!spec_.no_gpu_reason.empty() || spec_.gpus == 0) {
    if (reason)
      *reason = spec_.no_gpu_reason.empty() ? "fake machine without GPUs" : spec_.no_gpu_reason;
    return 0;
  }
  return spec_.gpus;
}

DeviceInfo FakeCuda::device_info(int d) {
  if (d < 0 || d >= spec_.gpus) throw RuntimeError(fmt::format("fake: no device {}", d));
  return {d, spec_.name, fmt::format("0000:{:02x}:00.0", 0x18 + d), 132, 150'000'000'000ull, 9, 0};
}

bool FakeCuda::can_access_peer(int d, int p) { return d != p && spec_.p2p_GBps > 0; }

void FakeCuda::set_peer_access(int d, int p, bool enable) {
  peer_[{d, p}] = enable && can_access_peer(d, p);
}

CudaApi::Buffer FakeCuda::alloc(MemoryKind kind, int device, std::size_t bytes) {
  if (device < 0 || device >= spec_.gpus)
    throw RuntimeError(fmt::format("fake: no device {}", device));
  bufs_[next_] = {kind, device, bytes, {}};
  return next_++;
}
void FakeCuda::free(Buffer b) { bufs_.erase(b); }

CudaApi::Stream FakeCuda::create_stream(int device) {
  if (device < 0 || device >= spec_.gpus)
    throw RuntimeError(fmt::format("fake: no device {}", device));
  // A new stream starts at the device's latest time, as a real stream starts now.
  double t = 0;
  for (const auto& [id, s] : streams_) t = std::max(t, s.second);
  for (const auto& [id, e] : events_) t = std::max(t, e);
  streams_[next_] = {device, t};
  return next_++;
}
void FakeCuda::destroy_stream(Stream s) { streams_.erase(s); }
int FakeCuda::stream_device(Stream s) const { return streams_.at(s).first; }

CudaApi::Event FakeCuda::create_event(int) {
  events_[next_] = 0;
  return next_++;
}
void FakeCuda::destroy_event(Event e) { events_.erase(e); }
void FakeCuda::record(Event e, Stream s) { events_.at(e) = streams_.at(s).second; }
void FakeCuda::wait(Stream s, Event e) {
  auto& t = streams_.at(s).second;
  t = std::max(t, events_.at(e));
}
double FakeCuda::elapsed_s(Event a, Event b) { return events_.at(b) - events_.at(a); }
void FakeCuda::advance(Stream s, double seconds) { streams_.at(s).second += seconds; }
double FakeCuda::now(Stream s) const { return streams_.at(s).second; }

double FakeCuda::rate_GBps(const Buf& dst, const Buf& src, CopyEngine engine, int dev) const {
  bool dh = src.kind == MemoryKind::kPinnedHost, hh = dst.kind == MemoryKind::kPinnedHost;
  double r;
  if (dh || hh) {
    r = dh ? spec_.h2d_GBps : spec_.d2h_GBps;
    if (engine == CopyEngine::kSm) r *= spec_.sm_factor;
  } else if (src.device == dst.device) {
    r = spec_.local_GBps;
  } else {
    int other = src.device == dev ? dst.device : src.device;
    auto it = peer_.find({dev, other});
    r = it != peer_.end() && it->second ? spec_.p2p_GBps : spec_.staged_GBps;
  }
  return r;
}

void FakeCuda::copy(Buffer dst, Buffer src, std::size_t bytes, CopyEngine engine, Stream s) {
  auto& st = streams_.at(s);
  double r = rate_GBps(bufs_.at(dst), bufs_.at(src), engine, st.first);
  if (!spec_.jitter.empty()) r *= spec_.jitter[copies_ % spec_.jitter.size()];
  ++copies_;
  double& busy = busy_s_.at(st.first);
  if (spec_.slowdown_after_s > 0 && busy > spec_.slowdown_after_s) r *= spec_.slowdown_factor;
  double dt = spec_.latency_us * 1e-6 + static_cast<double>(bytes) / (r * 1e9);
  st.second += dt;
  busy += dt;
}

std::vector<float>& FakeCuda::data(Buffer b) {
  auto& buf = bufs_.at(b);
  if (buf.data.empty()) buf.data.assign(buf.bytes / sizeof(float), 0.0f);
  return buf.data;
}

void FakeCuda::fill(Buffer b, std::size_t offset, std::size_t count, float value, Stream) {
  auto& d = data(b);
  if (offset + count > d.size()) throw RuntimeError("fake: fill past the end of a buffer");
  std::fill(d.begin() + offset, d.begin() + offset + count, value);
  auto& buf = bufs_.at(b);
  buf.filled = true;
  if (offset == 0 && count == d.size()) buf.stale = false;
}

void FakeCuda::collective_io(Buffer send, Buffer recv, bool computed) {
  bufs_.at(send).filled = false;
  auto& out = bufs_.at(recv);
  out.filled = false;
  if (!computed) out.stale = true;
}

std::uint64_t FakeCuda::count_mismatches(Buffer b, std::size_t offset, std::size_t count,
                                         float expected, Stream) {
  if (bufs_.at(b).stale)
    throw RuntimeError(
        "fake: reading a buffer a collective wrote without moving data (fill its "
        "inputs before a collective whose result is read)");
  auto& d = data(b);
  if (offset + count > d.size()) throw RuntimeError("fake: check past the end of a buffer");
  return std::count_if(d.begin() + offset, d.begin() + offset + count,
                       [&](float x) { return x != expected; });
}

int FakeCuda::live_handles() const {
  return static_cast<int>(bufs_.size() + streams_.size() + events_.size());
}

// ---- NCCL ----

std::vector<NcclApi::Comm> FakeNccl::init_all(const std::vector<int>& devices) {
  std::vector<Comm> out;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    comms_[next_] = static_cast<int>(i);
    out.push_back(next_++);
  }
  return out;
}

NcclApi::Comm FakeNccl::init_rank(int, const std::string&, int rank, int) {
  comms_[next_] = rank;
  return next_++;
}

void FakeNccl::destroy(Comm c) { comms_.erase(c); }

void FakeNccl::group_end() {
  in_group_ = false;
  flush();
}

void FakeNccl::run(Comm c, const Call& call, CudaApi::Stream s) {
  if (!comms_.count(c)) throw RuntimeError("fake NCCL: unknown communicator");
  pending_.push_back({call, s});
  if (!in_group_) flush();
}

namespace {

// Moves data as NCCL would for one collective whose ranks' calls are all in `calls` (rank order).
void move_data(FakeCuda& cuda, const std::vector<NcclApi::Call>& calls) {
  int n = static_cast<int>(calls.size());
  const auto& c0 = calls[0];
  std::size_t cnt = c0.count;
  for (const auto& c : calls)
    if (cuda.stale(c.send))
      throw RuntimeError("fake NCCL: input written by a collective that moved no data");
  // Each rank's input, looked up once (not once per element).
  std::vector<const float*> input(n);
  for (int r = 0; r < n; ++r) input[r] = cuda.data(calls[r].send).data() + calls[r].send_offset / 4;
  auto in = [&](int r, std::size_t i) { return input[r][i]; };
  // all_reduce and reduce: the sum over ranks, the same for every rank that receives it.
  std::vector<float> sum;
  if (c0.op == comm::Op::kAllReduce || c0.op == comm::Op::kReduce) {
    sum.assign(cnt, 0.0f);
    for (int j = 0; j < n; ++j)
      for (std::size_t i = 0; i < cnt; ++i) sum[i] += in(j, i);
  }
  std::vector<std::vector<float>> out(n);
  for (int r = 0; r < n; ++r) {
    auto& o = out[r];
    switch (c0.op) {
      case comm::Op::kAllReduce:
      case comm::Op::kReduce:
        if (c0.op == comm::Op::kAllReduce || r == c0.root) o = sum;
        break;
      case comm::Op::kAllGather:
        for (int j = 0; j < n; ++j)
          for (std::size_t i = 0; i < cnt; ++i) o.push_back(in(j, i));
        break;
      case comm::Op::kReduceScatter:
        o.assign(cnt, 0.0f);
        for (int j = 0; j < n; ++j)
          for (std::size_t i = 0; i < cnt; ++i) o[i] += in(j, r * cnt + i);
        break;
      case comm::Op::kBroadcast:
        for (std::size_t i = 0; i < cnt; ++i) o.push_back(in(c0.root, i));
        break;
      case comm::Op::kAllToAll:
        for (int j = 0; j < n; ++j)
          for (std::size_t i = 0; i < cnt; ++i) o.push_back(in(j, r * cnt + i));
        break;
      case comm::Op::kSendRecv:
        for (std::size_t i = 0; i < cnt; ++i) o.push_back(in((r + n - 1) % n, i));
        break;
    }
  }
  for (int r = 0; r < n; ++r) {
    auto& d = cuda.data(calls[r].recv);
    std::size_t off = calls[r].recv_offset / 4;
    if (off + out[r].size() > d.size()) throw RuntimeError("fake NCCL: receive buffer too small");
    std::copy(out[r].begin(), out[r].end(), d.begin() + off);
  }
}

}  // namespace

void FakeNccl::flush() {
  if (pending_.empty()) return;
  std::vector<Pending> p;
  p.swap(pending_);
  std::sort(p.begin(), p.end(),
            [](const Pending& a, const Pending& b) { return a.call.rank < b.call.rank; });
  const Call& c = p[0].call;
  int n = c.nranks;
  // Data moves when every rank's input was filled since a collective last used it, as in a data
  // check; timing runs (inputs not refilled) only take time and leave their output stale. With
  // only some of the ranks here (one process of several) nothing moves and nothing is marked.
  if (static_cast<int>(p.size()) == n) {
    bool filled = true;
    for (const auto& x : p) filled = filled && cuda_.filled(x.call.send);
    if (filled) {
      std::vector<Call> calls;
      for (const auto& x : p) calls.push_back(x.call);
      move_data(cuda_, calls);
    }
    for (const auto& x : p) cuda_.collective_io(x.call.send, x.call.recv, filled);
  }
  // nccl-tests' size for this call, then the time that makes busbw equal the bus rate.
  double per_rank = static_cast<double>(c.count) * 4;
  bool times_n = c.op == comm::Op::kAllGather || c.op == comm::Op::kReduceScatter ||
                 c.op == comm::Op::kAllToAll;
  double size = times_n ? per_rank * n : per_rank;
  const auto& f = cuda_.spec();
  double bus = f.bus_GBps > 0 ? f.bus_GBps : f.p2p_GBps > 0 ? f.p2p_GBps : f.staged_GBps;
  double factor = bus_factor(c.op, n);
  double dt = f.nccl_latency_us * 1e-6 +
              (n > 1 ? size * factor / (bus * 1e9) : size / (f.local_GBps * 1e9));
  double start = 0;
  for (const auto& x : p) start = std::max(start, cuda_.now(x.stream));
  for (const auto& x : p) cuda_.advance(x.stream, start + dt - cuda_.now(x.stream));
}

std::optional<TelemetrySample> FakeTelemetry::sample(const DeviceInfo&) {
  ++calls_;
  double t = 35 + c_per_reading_ * calls_;
  bool hot = t > 85;
  return TelemetrySample{t, hot ? 1750.0 : 1980.0, 3201.0, hot ? 600.0 : 700.0};
}

}  // namespace linkwise::measure
