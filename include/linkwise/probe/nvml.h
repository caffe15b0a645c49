// The few NVML calls linkwise uses, behind an interface with a real (dlopen) and a fake
// implementation.
//
// NVML is loaded at run time with dlopen("libnvidia-ml.so.1"): the library builds and runs on
// machines without an NVIDIA driver, where open_nvml() says why NVML is not there. Methods mirror
// NVML's C functions one to one and return NVML's own return codes (nvmlReturn_t values,
// kNvmlSuccess = 0), so a caller can tell "this link does not exist" (kNvmlErrorNotSupported /
// kNvmlErrorInvalidArgument) from a failure. Units are NVML's: degrees Celsius, MHz, milliwatts.
//
//   std::string why;
//   auto nvml = linkwise::probe::open_nvml(&why);      // nullptr and `why` when there is no NVML
//   if (nvml && nvml->init() == linkwise::probe::kNvmlSuccess) {
//     unsigned n = 0;
//     nvml->device_count(&n);
//     ...
//     nvml->shutdown();
//   }
//
// The signatures and enum values follow NVIDIA's nvml.h (NVML API reference, "Device Queries" and
// "NvLink Methods"); the real implementation declares only these functions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace linkwise::probe {

/// nvmlReturn_t values (nvml.h, enum nvmlReturn_enum).
using NvmlReturn = int;
inline constexpr NvmlReturn kNvmlSuccess = 0;
inline constexpr NvmlReturn kNvmlErrorUninitialized = 1;
inline constexpr NvmlReturn kNvmlErrorInvalidArgument = 2;
inline constexpr NvmlReturn kNvmlErrorNotSupported = 3;
inline constexpr NvmlReturn kNvmlErrorNoPermission = 4;
inline constexpr NvmlReturn kNvmlErrorNotFound = 6;
inline constexpr NvmlReturn kNvmlErrorDriverNotLoaded = 9;
inline constexpr NvmlReturn kNvmlErrorUnknown = 999;

/// NVML_NVLINK_MAX_LINKS in nvml.h since the Hopper drivers (18; 12 for Ampere, 6 for Volta).
inline constexpr unsigned kNvmlNvlinkMaxLinks = 18;

/// nvmlNvLinkErrorCounter_t (nvml.h): DL_REPLAY 0, DL_RECOVERY 1, DL_CRC_FLIT 2, DL_CRC_DATA 3,
/// DL_ECC_DATA 4.
enum class NvlinkErrorCounter : unsigned {
  kReplay = 0,
  kRecovery = 1,
  kCrcFlit = 2,
  kCrcData = 3,
  kEccData = 4
};
inline constexpr int kNvlinkErrorCounters = 5;
const char* to_string(NvlinkErrorCounter c);

/// nvmlClockType_t (nvml.h): GRAPHICS 0, SM 1, MEM 2, VIDEO 3.
enum class NvmlClock : unsigned { kGraphics = 0, kSm = 1, kMemory = 2, kVideo = 3 };

/// An NVML device handle (nvmlDevice_t), opaque.
using NvmlDevice = std::uintptr_t;

/// nvmlClocksThrottleReason* bits (nvml.h): why the clocks are below their maximum.
inline constexpr std::uint64_t kNvmlThrottleGpuIdle = 0x1;
inline constexpr std::uint64_t kNvmlThrottleSwPowerCap = 0x4;
inline constexpr std::uint64_t kNvmlThrottleHwSlowdown = 0x8;
inline constexpr std::uint64_t kNvmlThrottleSwThermal = 0x20;
inline constexpr std::uint64_t kNvmlThrottleHwThermal = 0x40;
inline constexpr std::uint64_t kNvmlThrottleHwPowerBrake = 0x80;

/// nvmlGpuFabricState_t (nvml.h): NVSwitch fabric registration of a GPU, done by the fabric
/// manager.
inline constexpr unsigned kNvmlFabricNotSupported = 0, kNvmlFabricNotStarted = 1,
                          kNvmlFabricInProgress = 2, kNvmlFabricCompleted = 3;

/// nvmlDeviceGetRemappedRows: HBM rows remapped for correctable / uncorrectable errors, a remapping
/// waiting for a GPU reset, and a remapping that failed (no spare row left).
struct NvmlRemappedRows {
  unsigned correctable = 0, uncorrectable = 0;
  bool pending = false, failure = false;
};

/// nvmlPciInfo_t, with the bus id normalised to sysfs form: "0000:1b:00.0" (NVML writes
/// "00000000:1B:00.0").
struct NvmlPciInfo {
  std::string bus_id;
  unsigned domain = 0, bus = 0, device = 0;
  unsigned pci_device_id = 0;  ///< device id << 16 | vendor id, as NVML packs it
  unsigned pci_subsystem_id = 0;
};

/// "00000000:1B:00.0" or "0000:1b:00.0" -> "0000:1b:00.0"; other text is returned lower-cased.
std::string normalize_bus_id(const std::string& nvml_bus_id);

class NvmlApi {
 public:
  virtual ~NvmlApi() = default;
  virtual NvmlReturn init() = 0;      ///< nvmlInit_v2
  virtual NvmlReturn shutdown() = 0;  ///< nvmlShutdown
  /// nvmlErrorString, or a generic text when NVML offers none.
  virtual std::string error_string(NvmlReturn r) = 0;

  virtual NvmlReturn device_count(unsigned* count) = 0;  ///< nvmlDeviceGetCount_v2
  virtual NvmlReturn device_handle(unsigned index,
                                   NvmlDevice* device) = 0;  ///< nvmlDeviceGetHandleByIndex_v2
  virtual NvmlReturn device_name(NvmlDevice device, std::string* name) = 0;  ///< nvmlDeviceGetName
  virtual NvmlReturn device_pci_info(NvmlDevice device,
                                     NvmlPciInfo* pci) = 0;  ///< nvmlDeviceGetPciInfo_v3

  /// nvmlDeviceGetNvLinkState: whether the link is up.
  virtual NvmlReturn nvlink_state(NvmlDevice device, unsigned link, bool* active) = 0;
  /// nvmlDeviceGetNvLinkVersion: an nvmlNvlinkVersion_t value (1 = NVLink 1.0, 2 = 2.0, 3 = 2.2, 4
  /// = 3.0, 5 = 3.1, 6 = 4.0, 7 = 5.0); see nvlink_generation().
  virtual NvmlReturn nvlink_version(NvmlDevice device, unsigned link, unsigned* version) = 0;
  /// nvmlDeviceGetNvLinkRemotePciInfo_v2: the device at the other end (a GPU or an NVSwitch).
  virtual NvmlReturn nvlink_remote_pci_info(NvmlDevice device, unsigned link, NvmlPciInfo* pci) = 0;
  /// nvmlDeviceGetNvLinkErrorCounter.
  virtual NvmlReturn nvlink_error_counter(NvmlDevice device, unsigned link,
                                          NvlinkErrorCounter counter, std::uint64_t* value) = 0;

  /// nvmlDeviceGetTemperature with NVML_TEMPERATURE_GPU, degrees Celsius.
  virtual NvmlReturn temperature_c(NvmlDevice device, unsigned* celsius) = 0;
  /// nvmlDeviceGetClockInfo, MHz.
  virtual NvmlReturn clock_mhz(NvmlDevice device, NvmlClock clock, unsigned* mhz) = 0;
  /// nvmlDeviceGetPowerUsage, milliwatts.
  virtual NvmlReturn power_mw(NvmlDevice device, unsigned* milliwatts) = 0;

  // Field health. Each answers kNvmlErrorNotSupported unless the implementation has it (an older
  // driver's library may lack a function: the real one then answers not supported too).
  /// nvmlDeviceGetCurrentClocksThrottleReasons: a mask of kNvmlThrottle* bits.
  virtual NvmlReturn throttle_reasons(NvmlDevice, std::uint64_t*) { return kNvmlErrorNotSupported; }
  /// nvmlDeviceGetTemperatureThreshold with NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, degrees Celsius.
  virtual NvmlReturn slowdown_temperature_c(NvmlDevice, unsigned*) {
    return kNvmlErrorNotSupported;
  }
  /// nvmlDeviceGetEnforcedPowerLimit, milliwatts.
  virtual NvmlReturn power_limit_mw(NvmlDevice, unsigned*) { return kNvmlErrorNotSupported; }
  /// nvmlDeviceGetTotalEccErrors, aggregate (lifetime) count: corrected or uncorrected.
  virtual NvmlReturn ecc_errors(NvmlDevice, bool /*uncorrected*/, std::uint64_t*) {
    return kNvmlErrorNotSupported;
  }
  /// nvmlDeviceGetRemappedRows.
  virtual NvmlReturn remapped_rows(NvmlDevice, NvmlRemappedRows*) { return kNvmlErrorNotSupported; }
  /// nvmlDeviceGetBAR1MemoryInfo: bar1Total, bytes.
  virtual NvmlReturn bar1_total_bytes(NvmlDevice, std::uint64_t*) { return kNvmlErrorNotSupported; }
  /// nvmlDeviceGetGpuFabricInfo: state (kNvmlFabric*) and status (an NVML return code).
  virtual NvmlReturn fabric_state(NvmlDevice, unsigned* /*state*/, NvmlReturn* /*status*/) {
    return kNvmlErrorNotSupported;
  }
};

/// NVLink generation (1..5) of an nvmlNvlinkVersion_t value, or 0 when unknown.
int nvlink_generation(unsigned nvml_version);

/// Loads libnvidia-ml.so.1 and resolves the functions above. Returns nullptr and sets `why` (the
/// dlopen/dlsym message) when the library or a function is missing. Does not call nvmlInit.
std::unique_ptr<NvmlApi> open_nvml(std::string* why,
                                   const std::string& library = "libnvidia-ml.so.1");

}  // namespace linkwise::probe
