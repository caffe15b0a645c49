// A simulated GPU machine for tests and demonstrations: CudaApi, NcclApi and GpuTelemetry on a
// simulated clock. Each stream keeps its own time; a copy takes latency + bytes / rate, where the
// rate comes from the spec below (scaled by an optional jitter sequence and a slowdown once the GPU
// has been busy for a while); events read the stream's time. Nothing touches a device.
//
//   auto spec = linkwise::measure::parse_fake_spec("gpus=2,h2d=55,d2h=50,p2p=370");
//   linkwise::measure::FakeCuda cuda(spec);
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "linkwise/measure/cuda_api.h"
#include "linkwise/measure/nccl_api.h"
#include "linkwise/measure/sustained.h"

namespace linkwise::measure {

struct FakeGpuSpec {
  int gpus = 1;
  std::string name = "Fake GPU";
  double h2d_GBps = 55, d2h_GBps = 52;  ///< copy engine, per direction
  double sm_factor = 0.65;              ///< copy-kernel rate / copy-engine rate, host copies
  double p2p_GBps = 0;                  ///< peer rate with access on; 0 = GPUs cannot access peers
  double staged_GBps = 20;              ///< peer rate with access off (through host memory)
  double local_GBps = 2000;             ///< d2d_local copy rate
  double latency_us = 2;                ///< per copy
  double bus_GBps = 0;                  ///< NCCL bus bandwidth; 0 = p2p_GBps, or staged_GBps
  double nccl_latency_us = 10;          ///< per collective call
  std::vector<double> jitter;           ///< rate factors applied to successive copies, cycling
  double slowdown_after_s = 0;          ///< busy seconds after which copies slow down (0 = never)
  double slowdown_factor = 1;           ///< rate factor after that
  std::string no_gpu_reason;            ///< when set, device_count() returns 0 with this reason
  double delay_ms = 0;  ///< real (wall-clock) milliseconds each synchronize() takes: a slow run
};

/// "gpus=2,h2d=55,d2h=50,p2p=370,jitter=1:0.9:1.1,slowdown=30:0.8,none=no driver": keys as in
/// FakeGpuSpec (h2d, d2h, sm, p2p, staged, local, latency, bus, name, gpus, jitter, slowdown,
/// none, delay). Throws InputError for an unknown key or a bad number.
FakeGpuSpec parse_fake_spec(const std::string& text);

class FakeCuda : public CudaApi {
 public:
  explicit FakeCuda(FakeGpuSpec spec);
  int device_count(std::string* reason) override;
  DeviceInfo device_info(int device) override;
  bool can_access_peer(int device, int peer) override;
  void set_peer_access(int device, int peer, bool enable) override;
  Buffer alloc(MemoryKind kind, int device, std::size_t bytes) override;
  void free(Buffer b) override;
  Stream create_stream(int device) override;
  void destroy_stream(Stream s) override;
  int stream_device(Stream s) const override;
  Event create_event(int device) override;
  void destroy_event(Event e) override;
  void record(Event e, Stream s) override;
  void wait(Stream s, Event e) override;
  void copy(Buffer dst, Buffer src, std::size_t bytes, CopyEngine engine, Stream s) override;
  void block(Stream) override {}
  void release_blocks() override {}
  void synchronize(Stream) override;
  double elapsed_s(Event start, Event stop) override;
  void fill(Buffer b, std::size_t offset, std::size_t count, float value, Stream s) override;
  std::uint64_t count_mismatches(Buffer b, std::size_t offset, std::size_t count, float expected,
                                 Stream s) override;
  void* native_pointer(Buffer) override { return nullptr; }
  void* native_stream(Stream) override { return nullptr; }

  /// For FakeNccl and tests.
  const FakeGpuSpec& spec() const { return spec_; }
  void advance(Stream s, double seconds);
  double now(Stream s) const;
  /// Live buffers, streams and events (tests check that benchmarks free what they take).
  int live_handles() const;
  /// Reads and writes of float data (for FakeNccl's data movement).
  std::vector<float>& data(Buffer b);
  /// Whether a buffer's data was ever read or written (untouched buffers hold no data).
  bool has_data(Buffer b) const { return !bufs_.at(b).data.empty(); }
  /// For FakeNccl, which moves a collective's data only when every input was written by fill()
  /// since a collective last read or wrote it (as a data check does: fill, run, read), so timing
  /// runs cost no data movement. filled(): that condition. collective_io(): a collective read
  /// `send` and wrote `recv`, computing its data or not; a buffer written without its data is
  /// stale: count_mismatches() on it, or a collective moving data from it, throws until a fill
  /// covers it whole.
  bool filled(Buffer b) const { return bufs_.at(b).filled; }
  void collective_io(Buffer send, Buffer recv, bool computed);
  bool stale(Buffer b) const { return bufs_.at(b).stale; }

 private:
  struct Buf {
    MemoryKind kind;
    int device;
    std::size_t bytes;
    std::vector<float> data;
    bool filled = false, stale = false;  ///< see filled() and collective_io()
  };
  double rate_GBps(const Buf& dst, const Buf& src, CopyEngine engine, int stream_device) const;
  FakeGpuSpec spec_;
  std::map<int, Buf> bufs_;
  std::map<int, std::pair<int, double>> streams_;  ///< device, time
  std::map<int, double> events_;
  std::map<std::pair<int, int>, bool> peer_;
  std::vector<double> busy_s_;  ///< per device
  std::size_t copies_ = 0;
  int next_ = 1;
};

/// Collectives on FakeCuda's clock: the ranks of a call start together (at the latest of their
/// streams' times) and each takes nccl_latency + S × bus_factor / bus_rate for the op's size S, so
/// the measured busbw approaches bus_rate. When every rank's input was freshly filled (a data
/// check, FakeCuda::filled) the data moves as NCCL would move it, so data checks pass; timing runs
/// move none and leave their output stale (reading it throws).
class FakeNccl : public NcclApi {
 public:
  explicit FakeNccl(FakeCuda& cuda) : cuda_(cuda) {}
  std::string version() override { return "fake"; }
  std::string unique_id() override { return std::string(128, '\0'); }
  std::vector<Comm> init_all(const std::vector<int>& devices) override;
  Comm init_rank(int nranks, const std::string& id, int rank, int device) override;
  void destroy(Comm c) override;
  void group_start() override { in_group_ = true; }
  void group_end() override;
  void run(Comm c, const Call& call, CudaApi::Stream s) override;

 private:
  FakeCuda& cuda_;
  struct Pending {
    Call call;
    CudaApi::Stream stream;
  };
  void flush();
  std::vector<Pending> pending_;
  bool in_group_ = false;
  std::map<int, int> comms_;  ///< comm -> rank
  int next_ = 1;
};

/// Telemetry that warms up: the temperature starts at 35 C and rises by `c_per_reading` with each
/// reading; above 85 C the SM clock drops from 1980 to 1750 MHz and the power from 700 to 600 W.
class FakeTelemetry : public GpuTelemetry {
 public:
  explicit FakeTelemetry(double c_per_reading = 2) : c_per_reading_(c_per_reading) {}
  std::optional<TelemetrySample> sample(const DeviceInfo& device) override;

 private:
  double c_per_reading_;
  int calls_ = 0;
};

}  // namespace linkwise::measure
