// GPU telemetry through the probe module's NVML interface (probe/nvml.h: dlopen of
// libnvidia-ml.so.1, so that linkwise runs where the driver is absent). Devices are matched by PCI
// bus id, since CUDA's and NVML's orderings need not agree.
#include <fmt/format.h>

#include <limits>
#include <map>

#include "linkwise/measure/sustained.h"
#include "linkwise/probe/nvml.h"

namespace linkwise::measure {

namespace {

class NvmlTelemetry : public GpuTelemetry {
 public:
  explicit NvmlTelemetry(std::unique_ptr<probe::NvmlApi> api) : api_(std::move(api)) {}
  ~NvmlTelemetry() override { api_->shutdown(); }

  std::optional<TelemetrySample> sample(const DeviceInfo& d) override {
    auto h = handle(d.pci_bus_id);
    if (!h) return std::nullopt;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    TelemetrySample s{nan, nan, nan, nan};
    unsigned v = 0;
    if (api_->temperature_c(*h, &v) == probe::kNvmlSuccess) s.temp_c = v;
    if (api_->clock_mhz(*h, probe::NvmlClock::kSm, &v) == probe::kNvmlSuccess) s.sm_clock_mhz = v;
    if (api_->clock_mhz(*h, probe::NvmlClock::kMemory, &v) == probe::kNvmlSuccess)
      s.mem_clock_mhz = v;
    if (api_->power_mw(*h, &v) == probe::kNvmlSuccess) s.power_w = v / 1000.0;
    return s;
  }

 private:
  std::optional<probe::NvmlDevice> handle(const std::string& bus_id) {
    auto want = probe::normalize_bus_id(bus_id);
    if (auto it = handles_.find(want); it != handles_.end()) return it->second;
    unsigned n = 0;
    if (api_->device_count(&n) != probe::kNvmlSuccess) return std::nullopt;
    for (unsigned i = 0; i < n; ++i) {
      probe::NvmlDevice dev{};
      probe::NvmlPciInfo pci;
      if (api_->device_handle(i, &dev) != probe::kNvmlSuccess ||
          api_->device_pci_info(dev, &pci) != probe::kNvmlSuccess)
        continue;
      if (probe::normalize_bus_id(pci.bus_id) == want) return handles_[want] = dev;
    }
    return std::nullopt;
  }
  std::unique_ptr<probe::NvmlApi> api_;
  std::map<std::string, probe::NvmlDevice> handles_;
};

}  // namespace

std::unique_ptr<GpuTelemetry> make_nvml_telemetry(std::unique_ptr<probe::NvmlApi> api,
                                                  std::string* reason) {
  if (!api) {
    if (reason && reason->empty()) *reason = "NVML is not available";
    return nullptr;
  }
  if (auto rc = api->init(); rc != probe::kNvmlSuccess) {
    if (reason) *reason = fmt::format("nvmlInit failed: {}", api->error_string(rc));
    return nullptr;
  }
  return std::make_unique<NvmlTelemetry>(std::move(api));
}

std::unique_ptr<GpuTelemetry> make_nvml_telemetry(std::string* reason) {
  return make_nvml_telemetry(probe::open_nvml(reason), reason);
}

}  // namespace linkwise::measure
