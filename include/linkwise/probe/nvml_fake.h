// A fake NvmlApi for tests: GPUs and their NVLinks described as plain data.
//
//   linkwise::probe::FakeNvml nvml;
//   nvml.gpus.push_back({.bus_id = "0000:1b:00.0", .name = "NVIDIA H100 80GB HBM3"});
//   nvml.gpus[0].links.push_back({.active = true, .version = 6, .remote_bus_id = "0000:05:00.0"});
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "linkwise/probe/nvml.h"

namespace linkwise::probe {

class FakeNvml : public NvmlApi {
 public:
  struct Link {
    bool active = true;
    unsigned version = 6;       ///< nvmlNvlinkVersion_t (6 = NVLink 4.0)
    std::string remote_bus_id;  ///< as NVML would write it; either form is accepted
    std::array<std::uint64_t, kNvlinkErrorCounters> errors{};  ///< by NvlinkErrorCounter
  };
  struct Gpu {
    std::string bus_id;
    std::string name = "NVIDIA H100 80GB HBM3";
    unsigned pci_device_id = 0x233010de;
    std::vector<Link> links;  ///< links beyond these answer kNvmlErrorNotSupported
    unsigned temperature_c = 35, sm_clock_mhz = 1980, power_mw = 70000;
    // Field health; a value left unset answers kNvmlErrorNotSupported.
    std::optional<std::uint64_t> throttle_reasons;
    std::optional<unsigned> slowdown_temperature_c, power_limit_mw;
    std::optional<std::uint64_t> ecc_corrected, ecc_uncorrected, bar1_total_bytes;
    std::optional<NvmlRemappedRows> remapped_rows;
    std::optional<unsigned> fabric_state;
    NvmlReturn fabric_status = kNvmlSuccess;
  };

  std::vector<Gpu> gpus;
  NvmlReturn init_result = kNvmlSuccess;  ///< what init() answers, e.g. kNvmlErrorDriverNotLoaded
  int init_calls = 0, shutdown_calls = 0;

  NvmlReturn init() override;
  NvmlReturn shutdown() override;
  std::string error_string(NvmlReturn r) override;
  NvmlReturn device_count(unsigned* count) override;
  NvmlReturn device_handle(unsigned index, NvmlDevice* device) override;
  NvmlReturn device_name(NvmlDevice device, std::string* name) override;
  NvmlReturn device_pci_info(NvmlDevice device, NvmlPciInfo* pci) override;
  NvmlReturn nvlink_state(NvmlDevice device, unsigned link, bool* active) override;
  NvmlReturn nvlink_version(NvmlDevice device, unsigned link, unsigned* version) override;
  NvmlReturn nvlink_remote_pci_info(NvmlDevice device, unsigned link, NvmlPciInfo* pci) override;
  NvmlReturn nvlink_error_counter(NvmlDevice device, unsigned link, NvlinkErrorCounter counter,
                                  std::uint64_t* value) override;
  NvmlReturn temperature_c(NvmlDevice device, unsigned* celsius) override;
  NvmlReturn clock_mhz(NvmlDevice device, NvmlClock clock, unsigned* mhz) override;
  NvmlReturn power_mw(NvmlDevice device, unsigned* milliwatts) override;
  NvmlReturn throttle_reasons(NvmlDevice device, std::uint64_t* mask) override;
  NvmlReturn slowdown_temperature_c(NvmlDevice device, unsigned* celsius) override;
  NvmlReturn power_limit_mw(NvmlDevice device, unsigned* milliwatts) override;
  NvmlReturn ecc_errors(NvmlDevice device, bool uncorrected, std::uint64_t* count) override;
  NvmlReturn remapped_rows(NvmlDevice device, NvmlRemappedRows* rows) override;
  NvmlReturn bar1_total_bytes(NvmlDevice device, std::uint64_t* bytes) override;
  NvmlReturn fabric_state(NvmlDevice device, unsigned* state, NvmlReturn* status) override;

 private:
  const Gpu* gpu(NvmlDevice d) const;
  const Link* link(NvmlDevice d, unsigned l) const;
};

}  // namespace linkwise::probe
