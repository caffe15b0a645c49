// The real NvmlApi: libnvidia-ml.so.1 loaded with dlopen, only the functions linkwise uses
// declared.
#include "linkwise/probe/nvml.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cctype>
#include <cstring>

namespace linkwise::probe {

const char* to_string(NvlinkErrorCounter c) {
  switch (c) {
    case NvlinkErrorCounter::kReplay:
      return "replay";
    case NvlinkErrorCounter::kRecovery:
      return "recovery";
    case NvlinkErrorCounter::kCrcFlit:
      return "crc_flit";
    case NvlinkErrorCounter::kCrcData:
      return "crc_data";
    case NvlinkErrorCounter::kEccData:
      return "ecc_data";
  }
  return "?";
}

std::string normalize_bus_id(const std::string& id) {
  std::string s;
  for (char c : id) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // "00000000:1b:00.0": an eight-digit domain; sysfs writes four.
  if (s.size() == 16 && s[8] == ':' && s.compare(0, 4, "0000") == 0) s = s.substr(4);
  return s;
}

int nvlink_generation(unsigned v) {
  // nvmlNvlinkVersion_t: 1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0, 5 = 3.1, 6 = 4.0, 7 = 5.0 (nvml.h).
  static constexpr int kGen[] = {0, 1, 2, 2, 3, 3, 4, 5};
  return v < sizeof(kGen) / sizeof(kGen[0]) ? kGen[v] : 0;
}

namespace {

// nvml.h types, declared here as the ABI needs them.
struct RawPciInfo {        // nvmlPciInfo_t (v3 layout)
  char bus_id_legacy[16];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
};
using RawDevice = void*;              // nvmlDevice_t
constexpr unsigned kNameBuffer = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE

NvmlPciInfo convert(const RawPciInfo& r) {
  NvmlPciInfo p;
  p.bus_id = normalize_bus_id(std::string(r.bus_id, strnlen(r.bus_id, sizeof(r.bus_id))));
  p.domain = r.domain;
  p.bus = r.bus;
  p.device = r.device;
  p.pci_device_id = r.pci_device_id;
  p.pci_subsystem_id = r.pci_subsystem_id;
  return p;
}

class RealNvml : public NvmlApi {
 public:
  explicit RealNvml(void* lib) : lib_(lib) {}
  ~RealNvml() override {
    if (lib_) dlclose(lib_);
  }

  bool resolve(std::string* why) {
    bool ok = sym(init_, "nvmlInit_v2", why) && sym(shutdown_, "nvmlShutdown", why) &&
              sym(count_, "nvmlDeviceGetCount_v2", why) &&
              sym(handle_, "nvmlDeviceGetHandleByIndex_v2", why) &&
              sym(pci_, "nvmlDeviceGetPciInfo_v3", why) && sym(name_, "nvmlDeviceGetName", why) &&
              sym(state_, "nvmlDeviceGetNvLinkState", why) &&
              sym(version_, "nvmlDeviceGetNvLinkVersion", why) &&
              sym(remote_, "nvmlDeviceGetNvLinkRemotePciInfo_v2", why) &&
              sym(errors_, "nvmlDeviceGetNvLinkErrorCounter", why) &&
              sym(temp_, "nvmlDeviceGetTemperature", why) &&
              sym(clock_, "nvmlDeviceGetClockInfo", why) &&
              sym(power_, "nvmlDeviceGetPowerUsage", why);
    sym(error_string_, "nvmlErrorString", nullptr);  // optional
    // Field health: optional, an older library answers "not supported" for what it lacks.
    sym(throttle_, "nvmlDeviceGetCurrentClocksThrottleReasons", nullptr);
    sym(threshold_, "nvmlDeviceGetTemperatureThreshold", nullptr);
    sym(power_limit_, "nvmlDeviceGetEnforcedPowerLimit", nullptr);
    sym(ecc_, "nvmlDeviceGetTotalEccErrors", nullptr);
    sym(rows_, "nvmlDeviceGetRemappedRows", nullptr);
    sym(bar1_, "nvmlDeviceGetBAR1MemoryInfo", nullptr);
    sym(fabric_, "nvmlDeviceGetGpuFabricInfo", nullptr);
    return ok;
  }

  NvmlReturn init() override { return init_(); }
  NvmlReturn shutdown() override { return shutdown_(); }
  std::string error_string(NvmlReturn r) override {
    if (error_string_) {
      const char* s = error_string_(r);
      if (s) return s;
    }
    return fmt::format("NVML error {}", r);
  }
  NvmlReturn device_count(unsigned* n) override { return count_(n); }
  NvmlReturn device_handle(unsigned i, NvmlDevice* d) override {
    RawDevice raw = nullptr;
    NvmlReturn r = handle_(i, &raw);
    *d = reinterpret_cast<NvmlDevice>(raw);
    return r;
  }
  NvmlReturn device_name(NvmlDevice d, std::string* name) override {
    char buf[kNameBuffer] = {};
    NvmlReturn r = name_(dev(d), buf, kNameBuffer);
    if (r == kNvmlSuccess) *name = std::string(buf, strnlen(buf, sizeof(buf)));
    return r;
  }
  NvmlReturn device_pci_info(NvmlDevice d, NvmlPciInfo* p) override {
    RawPciInfo raw{};
    NvmlReturn r = pci_(dev(d), &raw);
    if (r == kNvmlSuccess) *p = convert(raw);
    return r;
  }
  NvmlReturn nvlink_state(NvmlDevice d, unsigned link, bool* active) override {
    int state = 0;  // nvmlEnableState_t: NVML_FEATURE_DISABLED 0, NVML_FEATURE_ENABLED 1
    NvmlReturn r = state_(dev(d), link, &state);
    *active = state == 1;
    return r;
  }
  NvmlReturn nvlink_version(NvmlDevice d, unsigned link, unsigned* v) override {
    return version_(dev(d), link, v);
  }
  NvmlReturn nvlink_remote_pci_info(NvmlDevice d, unsigned link, NvmlPciInfo* p) override {
    RawPciInfo raw{};
    NvmlReturn r = remote_(dev(d), link, &raw);
    if (r == kNvmlSuccess) *p = convert(raw);
    return r;
  }
  NvmlReturn nvlink_error_counter(NvmlDevice d, unsigned link, NvlinkErrorCounter c,
                                  std::uint64_t* v) override {
    unsigned long long value = 0;
    NvmlReturn r = errors_(dev(d), link, static_cast<unsigned>(c), &value);
    *v = value;
    return r;
  }
  NvmlReturn temperature_c(NvmlDevice d, unsigned* t) override {
    return temp_(dev(d), 0 /*NVML_TEMPERATURE_GPU*/, t);
  }
  NvmlReturn clock_mhz(NvmlDevice d, NvmlClock c, unsigned* mhz) override {
    return clock_(dev(d), static_cast<unsigned>(c), mhz);
  }
  NvmlReturn power_mw(NvmlDevice d, unsigned* mw) override { return power_(dev(d), mw); }
  NvmlReturn throttle_reasons(NvmlDevice d, std::uint64_t* mask) override {
    if (!throttle_) return kNvmlErrorNotSupported;
    unsigned long long v = 0;
    NvmlReturn r = throttle_(dev(d), &v);
    *mask = v;
    return r;
  }
  NvmlReturn slowdown_temperature_c(NvmlDevice d, unsigned* t) override {
    return threshold_ ? threshold_(dev(d), 1 /*NVML_TEMPERATURE_THRESHOLD_SLOWDOWN*/, t)
                      : kNvmlErrorNotSupported;
  }
  NvmlReturn power_limit_mw(NvmlDevice d, unsigned* mw) override {
    return power_limit_ ? power_limit_(dev(d), mw) : kNvmlErrorNotSupported;
  }
  NvmlReturn ecc_errors(NvmlDevice d, bool uncorrected, std::uint64_t* count) override {
    if (!ecc_) return kNvmlErrorNotSupported;
    unsigned long long v =
        0;  // NVML_MEMORY_ERROR_TYPE_CORRECTED 0 / UNCORRECTED 1; NVML_AGGREGATE_ECC 1
    NvmlReturn r = ecc_(dev(d), uncorrected ? 1 : 0, 1, &v);
    *count = v;
    return r;
  }
  NvmlReturn remapped_rows(NvmlDevice d, NvmlRemappedRows* rows) override {
    if (!rows_) return kNvmlErrorNotSupported;
    unsigned corr = 0, unc = 0, pending = 0, failure = 0;
    NvmlReturn r = rows_(dev(d), &corr, &unc, &pending, &failure);
    *rows = {corr, unc, pending != 0, failure != 0};
    return r;
  }
  NvmlReturn bar1_total_bytes(NvmlDevice d, std::uint64_t* bytes) override {
    if (!bar1_) return kNvmlErrorNotSupported;
    struct {
      unsigned long long total, free, used;  // nvmlBAR1Memory_t
    } m{};
    NvmlReturn r = bar1_(dev(d), &m);
    *bytes = m.total;
    return r;
  }
  NvmlReturn fabric_state(NvmlDevice d, unsigned* state, NvmlReturn* status) override {
    if (!fabric_) return kNvmlErrorNotSupported;
    struct {
      unsigned char cluster_uuid[16];  // nvmlGpuFabricInfo_t: clusterUuid, status, cliqueId, state
      int status;
      unsigned clique_id;
      unsigned char state;
    } info{};
    NvmlReturn r = fabric_(dev(d), &info);
    *state = info.state;
    *status = info.status;
    return r;
  }

 private:
  static RawDevice dev(NvmlDevice d) { return reinterpret_cast<RawDevice>(d); }
  template <typename F>
  bool sym(F*& f, const char* name, std::string* why) {
    f = reinterpret_cast<F*>(dlsym(lib_, name));
    if (!f && why) *why = fmt::format("{} has no function {}", "libnvidia-ml.so.1", name);
    return f != nullptr;
  }

  void* lib_;
  int (*init_)() = nullptr;
  int (*shutdown_)() = nullptr;
  const char* (*error_string_)(int) = nullptr;
  int (*count_)(unsigned*) = nullptr;
  int (*handle_)(unsigned, RawDevice*) = nullptr;
  int (*pci_)(RawDevice, RawPciInfo*) = nullptr;
  int (*name_)(RawDevice, char*, unsigned) = nullptr;
  int (*state_)(RawDevice, unsigned, int*) = nullptr;
  int (*version_)(RawDevice, unsigned, unsigned*) = nullptr;
  int (*remote_)(RawDevice, unsigned, RawPciInfo*) = nullptr;
  int (*errors_)(RawDevice, unsigned, unsigned, unsigned long long*) = nullptr;
  int (*temp_)(RawDevice, unsigned, unsigned*) = nullptr;
  int (*clock_)(RawDevice, unsigned, unsigned*) = nullptr;
  int (*power_)(RawDevice, unsigned*) = nullptr;
  int (*throttle_)(RawDevice, unsigned long long*) = nullptr;
  int (*threshold_)(RawDevice, unsigned, unsigned*) = nullptr;
  int (*power_limit_)(RawDevice, unsigned*) = nullptr;
  int (*ecc_)(RawDevice, unsigned, unsigned, unsigned long long*) = nullptr;
  int (*rows_)(RawDevice, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  int (*bar1_)(RawDevice, void*) = nullptr;
  int (*fabric_)(RawDevice, void*) = nullptr;
};

}  // namespace

std::unique_ptr<NvmlApi> open_nvml(std::string* why, const std::string& library) {
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = dlerror();
    if (why) *why = err ? err : fmt::format("cannot load {}", library);
    return nullptr;
  }
  auto api = std::make_unique<RealNvml>(lib);
  std::string missing;
  if (!api->resolve(&missing)) {
    if (why) *why = missing;
    return nullptr;
  }
  return api;
}

}  // namespace linkwise::probe
