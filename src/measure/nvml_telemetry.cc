// GPU telemetry from NVML, loaded with dlopen so that linkwise runs where the driver is absent.
// Minimal on purpose: the probe module's NVML interface is the one to share once both are merged.
#include <dlfcn.h>
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "linkwise/measure/sustained.h"

namespace linkwise::measure {

namespace {

// NVML's C interface (nvml.h): the few calls and constants used here.
using nvmlDevice_t = void*;
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
constexpr int kNvmlClockSm = 1;         // NVML_CLOCK_SM
constexpr int kNvmlClockMem = 2;        // NVML_CLOCK_MEM

class NvmlTelemetry : public GpuTelemetry {
 public:
  bool open(std::string* reason) {
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) {
      if (reason) *reason = fmt::format("cannot load libnvidia-ml.so.1: {}", dlerror());
      return false;
    }
    auto sym = [&](const char* name) { return dlsym(lib_, name); };
    init_ = reinterpret_cast<int (*)()>(sym("nvmlInit_v2"));
    shutdown_ = reinterpret_cast<int (*)()>(sym("nvmlShutdown"));
    by_bus_ = reinterpret_cast<int (*)(const char*, nvmlDevice_t*)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
    temp_ = reinterpret_cast<int (*)(nvmlDevice_t, int, unsigned*)>(sym("nvmlDeviceGetTemperature"));
    clock_ = reinterpret_cast<int (*)(nvmlDevice_t, int, unsigned*)>(sym("nvmlDeviceGetClockInfo"));
    power_ = reinterpret_cast<int (*)(nvmlDevice_t, unsigned*)>(sym("nvmlDeviceGetPowerUsage"));
    if (!init_ || !shutdown_ || !by_bus_ || !temp_ || !clock_ || !power_) {
      if (reason) *reason = "libnvidia-ml.so.1 lacks a needed function";
      return false;
    }
    if (int rc = init_(); rc != kNvmlSuccess) {
      if (reason) *reason = fmt::format("nvmlInit failed (NVML error {})", rc);
      return false;
    }
    inited_ = true;
    return true;
  }
  ~NvmlTelemetry() override {
    if (inited_) shutdown_();
    if (lib_) dlclose(lib_);
  }
  std::optional<TelemetrySample> sample(const DeviceInfo& d) override {
    nvmlDevice_t h = nullptr;
    if (by_bus_(d.pci_bus_id.c_str(), &h) != kNvmlSuccess) return std::nullopt;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    TelemetrySample s{nan, nan, nan, nan};
    unsigned v = 0;
    if (temp_(h, kNvmlTemperatureGpu, &v) == kNvmlSuccess) s.temp_c = v;
    if (clock_(h, kNvmlClockSm, &v) == kNvmlSuccess) s.sm_clock_mhz = v;
    if (clock_(h, kNvmlClockMem, &v) == kNvmlSuccess) s.mem_clock_mhz = v;
    if (power_(h, &v) == kNvmlSuccess) s.power_w = v / 1000.0;  // milliwatts
    return s;
  }

 private:
  void* lib_ = nullptr;
  bool inited_ = false;
  int (*init_)() = nullptr;
  int (*shutdown_)() = nullptr;
  int (*by_bus_)(const char*, nvmlDevice_t*) = nullptr;
  int (*temp_)(nvmlDevice_t, int, unsigned*) = nullptr;
  int (*clock_)(nvmlDevice_t, int, unsigned*) = nullptr;
  int (*power_)(nvmlDevice_t, unsigned*) = nullptr;
};

}  // namespace

std::unique_ptr<GpuTelemetry> make_nvml_telemetry(std::string* reason) {
  auto t = std::make_unique<NvmlTelemetry>();
  if (!t->open(reason)) return nullptr;
  return t;
}

}  // namespace linkwise::measure
