#include "linkwise/probe/nvml_fake.h"

#include <fmt/format.h>

namespace linkwise::probe {

const FakeNvml::Gpu* FakeNvml::gpu(NvmlDevice d) const {
  if (d == 0 || d > gpus.size()) return nullptr;
  return &gpus[d - 1];
}

const FakeNvml::Link* FakeNvml::link(NvmlDevice d, unsigned l) const {
  const Gpu* g = gpu(d);
  if (!g || l >= g->links.size()) return nullptr;
  return &g->links[l];
}

NvmlReturn FakeNvml::init() {
  ++init_calls;
  return init_result;
}
NvmlReturn FakeNvml::shutdown() {
  ++shutdown_calls;
  return kNvmlSuccess;
}
std::string FakeNvml::error_string(NvmlReturn r) {
  switch (r) {
    case kNvmlSuccess:
      return "Success";
    case kNvmlErrorNotSupported:
      return "Not Supported";
    case kNvmlErrorDriverNotLoaded:
      return "Driver Not Loaded";
    case kNvmlErrorNoPermission:
      return "Insufficient Permissions";
    default:
      return fmt::format("NVML error {}", r);
  }
}
NvmlReturn FakeNvml::device_count(unsigned* count) {
  *count = static_cast<unsigned>(gpus.size());
  return kNvmlSuccess;
}
NvmlReturn FakeNvml::device_handle(unsigned index, NvmlDevice* device) {
  if (index >= gpus.size()) return kNvmlErrorInvalidArgument;
  *device = index + 1;
  return kNvmlSuccess;
}
NvmlReturn FakeNvml::device_name(NvmlDevice d, std::string* name) {
  const Gpu* g = gpu(d);
  if (!g) return kNvmlErrorInvalidArgument;
  *name = g->name;
  return kNvmlSuccess;
}
NvmlReturn FakeNvml::device_pci_info(NvmlDevice d, NvmlPciInfo* pci) {
  const Gpu* g = gpu(d);
  if (!g) return kNvmlErrorInvalidArgument;
  *pci = {};
  pci->bus_id = normalize_bus_id(g->bus_id);
  pci->pci_device_id = g->pci_device_id;
  return kNvmlSuccess;
}
NvmlReturn FakeNvml::nvlink_state(NvmlDevice d, unsigned l, bool* active) {
  const Link* k = link(d, l);
  if (!k) return gpu(d) ? kNvmlErrorNotSupported : kNvmlErrorInvalidArgument;
  *active = k->active;
  return kNvmlSuccess;
}
NvmlReturn FakeNvml::nvlink_version(NvmlDevice d, unsigned l, unsigned* version) {
  const Link* k = link(d, l);
  if (!k) return kNvmlErrorNotSupported;
  *version = k->version;
  return kNvmlSuccess;
}
NvmlReturn FakeNvml::nvlink_remote_pci_info(NvmlDevice d, unsigned l, NvmlPciInfo* pci) {
  const Link* k = link(d, l);
  if (!k) return kNvmlErrorNotSupported;
  *pci = {};
  pci->bus_id = normalize_bus_id(k->remote_bus_id);
  return kNvmlSuccess;
}
NvmlReturn FakeNvml::nvlink_error_counter(NvmlDevice d, unsigned l, NvlinkErrorCounter c,
                                          std::uint64_t* value) {
  const Link* k = link(d, l);
  auto i = static_cast<unsigned>(c);
  if (!k || i >= k->errors.size()) return kNvmlErrorNotSupported;
  *value = k->errors[i];
  return kNvmlSuccess;
}
NvmlReturn FakeNvml::temperature_c(NvmlDevice d, unsigned* celsius) {
  const Gpu* g = gpu(d);
  if (!g) return kNvmlErrorInvalidArgument;
  *celsius = g->temperature_c;
  return kNvmlSuccess;
}
NvmlReturn FakeNvml::clock_mhz(NvmlDevice d, NvmlClock, unsigned* mhz) {
  const Gpu* g = gpu(d);
  if (!g) return kNvmlErrorInvalidArgument;
  *mhz = g->sm_clock_mhz;
  return kNvmlSuccess;
}
NvmlReturn FakeNvml::power_mw(NvmlDevice d, unsigned* milliwatts) {
  const Gpu* g = gpu(d);
  if (!g) return kNvmlErrorInvalidArgument;
  *milliwatts = g->power_mw;
  return kNvmlSuccess;
}

namespace {
template <typename T, typename U>
NvmlReturn answer(const std::optional<T>& v, U* out) {
  if (!v) return kNvmlErrorNotSupported;
  *out = *v;
  return kNvmlSuccess;
}
}  // namespace

NvmlReturn FakeNvml::throttle_reasons(NvmlDevice d, std::uint64_t* mask) {
  const Gpu* g = gpu(d);
  return g ? answer(g->throttle_reasons, mask) : kNvmlErrorInvalidArgument;
}
NvmlReturn FakeNvml::slowdown_temperature_c(NvmlDevice d, unsigned* celsius) {
  const Gpu* g = gpu(d);
  return g ? answer(g->slowdown_temperature_c, celsius) : kNvmlErrorInvalidArgument;
}
NvmlReturn FakeNvml::power_limit_mw(NvmlDevice d, unsigned* milliwatts) {
  const Gpu* g = gpu(d);
  return g ? answer(g->power_limit_mw, milliwatts) : kNvmlErrorInvalidArgument;
}
NvmlReturn FakeNvml::ecc_errors(NvmlDevice d, bool uncorrected, std::uint64_t* count) {
  const Gpu* g = gpu(d);
  return g ? answer(uncorrected ? g->ecc_uncorrected : g->ecc_corrected, count)
           : kNvmlErrorInvalidArgument;
}
NvmlReturn FakeNvml::remapped_rows(NvmlDevice d, NvmlRemappedRows* rows) {
  const Gpu* g = gpu(d);
  return g ? answer(g->remapped_rows, rows) : kNvmlErrorInvalidArgument;
}
NvmlReturn FakeNvml::bar1_total_bytes(NvmlDevice d, std::uint64_t* bytes) {
  const Gpu* g = gpu(d);
  return g ? answer(g->bar1_total_bytes, bytes) : kNvmlErrorInvalidArgument;
}
NvmlReturn FakeNvml::fabric_state(NvmlDevice d, unsigned* state, NvmlReturn* status) {
  const Gpu* g = gpu(d);
  if (!g) return kNvmlErrorInvalidArgument;
  if (!g->fabric_state) return kNvmlErrorNotSupported;
  *state = *g->fabric_state;
  *status = g->fabric_status;
  return kNvmlSuccess;
}

}  // namespace linkwise::probe
