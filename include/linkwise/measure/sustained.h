// A transfer held for a while, with the GPU's temperature, clocks and power beside its bandwidth,
// to catch a sealed box that slows down as it warms up.
//
// The run is cut into windows of about `interval_s` of GPU time. Each window is one timed set of
// copies (copy_bench.h): the first runs 4 loops, each later one as many as the previous window's
// time per loop fits in `interval_s`; after each window the GPU's telemetry is read. The clock is
// the GPU's own (the sum of the windows' event times), so a run lasts `duration_s` of transfer
// time, whatever the host does meanwhile.
//
// Verdict: the median bandwidth of the last quarter of the windows (at least one window) against
// the first quarter, drop = (first - last) / first; with at least 4 windows, a drop of more than
// `slowdown_pct` (default 5%) reports "slows down". Fewer windows never do.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "linkwise/measure/cuda_api.h"

namespace linkwise::probe {
class NvmlApi;
}

namespace linkwise::measure {

/// One reading; a field the device does not report is NaN.
struct TelemetrySample {
  double temp_c;
  double sm_clock_mhz;
  double mem_clock_mhz;
  double power_w;
};

/// GPU temperature, clocks and power. The real one reads NVML through the probe module's NvmlApi
/// (libnvidia-ml.so.1 through dlopen), finding the device by PCI bus id so that CUDA and NVML
/// orderings need not agree.
class GpuTelemetry {
 public:
  virtual ~GpuTelemetry() = default;
  virtual std::optional<TelemetrySample> sample(const DeviceInfo& device) = 0;
};
/// NVML telemetry, or null with `reason` set when NVML cannot be loaded or initialised.
std::unique_ptr<GpuTelemetry> make_nvml_telemetry(std::string* reason);
/// The same over a given NVML (probe::FakeNvml in tests); takes ownership.
std::unique_ptr<GpuTelemetry> make_nvml_telemetry(std::unique_ptr<probe::NvmlApi> nvml,
                                                  std::string* reason);

struct SustainedOptions {
  std::string kind = "h2d";  ///< h2d, d2h, bidir, p2p, d2d_local
  int gpu = 0;
  int peer = -1;  ///< for p2p; default: gpu + 1
  std::uint64_t bytes = 64ull << 20;
  CopyEngine engine = CopyEngine::kCe;
  double duration_s = 60;
  double interval_s = 1;
  double slowdown_pct = 5;
};

struct SustainedPoint {
  double t_s = 0;  ///< end of the window, seconds of transfer from the start
  double GBps = 0;
  std::optional<TelemetrySample> telemetry;
};

struct SustainedResult {
  SustainedOptions options;
  std::string device;
  std::vector<SustainedPoint> points;
  double first_GBps = 0, last_GBps = 0;  ///< medians of the first and last quarter
  double drop_pct = 0;                   ///< (first − last) / first × 100
  bool slows_down = false;
  std::string telemetry_note;  ///< why there is no telemetry, or ""
};

/// Parses "90", "90s", "5m", "1h", "1.5m" into seconds. Throws InputError naming `what` otherwise.
/// The transfers a sustained run can hold: h2d, d2h, bidir, p2p, d2d_local.
const std::vector<std::string>& sustained_kinds();
/// Throws InputError ("--sustained-kind: unknown kind ...") when `kind` is not one of them.
void check_sustained_kind(const std::string& kind);

double parse_duration_s(const std::string& text, const std::string& what = "--sustained");

/// Holds the transfer. `stop`, when given, is polled before each window: once it returns true the
/// run ends with the windows finished (and its verdict over them).
SustainedResult run_sustained(CudaApi& cuda, GpuTelemetry* telemetry, const SustainedOptions& o,
                              const std::function<bool()>& stop = {});

}  // namespace linkwise::measure
