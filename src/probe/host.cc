#include "host.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

namespace linkwise::probe::detail {

namespace {

std::optional<int> parse_int(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// Number after a prefix: "cpu12" -> 12 for prefix "cpu".
std::optional<int> suffix_number(const std::string& name, std::string_view prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0)
    return std::nullopt;
  return parse_int(std::string_view(name).substr(prefix.size()));
}

std::string cpuinfo_field(const std::string& text, std::string_view key) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string_view line(text.data() + pos, eol - pos);
    if (line.rfind(key, 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string_view::npos) {
        std::string_view v = line.substr(colon + 1);
        while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
        return std::string(v);
      }
    }
    pos = eol + 1;
  }
  return "";
}

}  // namespace

std::optional<std::vector<int>> parse_cpulist(const std::string& text) {
  std::vector<int> cpus;
  if (text.empty()) return cpus;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string_view item(text.data() + start, comma - start);
    auto dash = item.find('-');
    auto lo = parse_int(item.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : parse_int(item.substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi < *lo || *hi > 1 << 20 || cpus.size() + (*hi - *lo) > 1 << 20)
      return std::nullopt;
    for (int c = *lo; c <= *hi; ++c) cpus.push_back(c);
    start = comma + 1;
  }
  return cpus;
}

void read_cpus(const SysfsReader& sys, Machine& m) {
  std::map<int, int> cpu_socket;
  std::map<int, CpuSocket> sockets;
  for (const auto& name : sys.list_sys("devices/system/cpu")) {
    auto cpu = suffix_number(name, "cpu");
    if (!cpu) continue;
    auto r = sys.read_sys("devices/system/cpu/" + name + "/topology/physical_package_id");
    auto pkg = r.ok() ? parse_int(r.text) : std::nullopt;
    if (!pkg || *pkg < 0 || *pkg > 4096) {
      if (r.status != ReadStatus::kMissing)
        m.notes.push_back(fmt::format("{}: physical_package_id unreadable", name));
      continue;
    }
    cpu_socket[*cpu] = *pkg;
    sockets[*pkg].id = *pkg;
    sockets[*pkg].cpus++;
  }
  for (const auto& name : sys.list_sys("devices/system/node")) {
    auto node = suffix_number(name, "node");
    if (!node) continue;
    auto r = sys.read_sys("devices/system/node/" + name + "/cpulist");
    auto list = r.ok() ? parse_cpulist(r.text) : std::nullopt;
    if (!list) {
      m.notes.push_back(fmt::format("{}/cpulist: {}", name,
                                    r.ok() ? "unreadable value '" + printable(r.text) + "'"
                                           : std::string(to_string(r.status))));
      continue;
    }
    if (list->empty()) continue;  // a memory-only node
    auto it = cpu_socket.find(list->front());
    int socket = it == cpu_socket.end() ? 0 : it->second;
    m.numa_socket[*node] = socket;
    m.numa_cpulist[*node] = r.text;
    sockets[socket].id = socket;
    sockets[socket].numa_nodes.push_back(*node);
    // Every NUMA node of the socket (several with sub-NUMA clustering), as numactl/taskset take
    // them.
    auto& cl = sockets[socket].cpulist;
    cl = cl.empty() ? r.text : cl + "," + r.text;
  }
  if (sockets.empty()) {
    m.notes.push_back("no CPU topology under devices/system/cpu: assuming one socket");
    sockets[0].id = 0;
  }
  for (auto& [id, s] : sockets) {
    std::sort(s.numa_nodes.begin(), s.numa_nodes.end());
    m.sockets.push_back(s);
  }
  auto info = sys.read_proc("cpuinfo");
  if (info.ok()) {
    m.cpu_model = printable(cpuinfo_field(info.text, "model name"), 128);
    m.cpu_vendor = printable(cpuinfo_field(info.text, "vendor_id"));
  }
}

void read_iommu(const SysfsReader& sys, Machine& m) {
  IommuState& s = m.iommu;
  auto cmd = sys.read_proc("cmdline");
  if (cmd.ok()) m.cmdline = cmd.text;
  auto has = [&](std::string_view word) {
    for (std::size_t p = m.cmdline.find(word); p != std::string::npos;
         p = m.cmdline.find(word, p + 1)) {
      bool start = p == 0 || m.cmdline[p - 1] == ' ';
      bool end = p + word.size() == m.cmdline.size() || m.cmdline[p + word.size()] == ' ';
      if (start && end) return true;
    }
    return false;
  };
  auto units = sys.list_sys("class/iommu");
  auto groups = sys.list_sys("kernel/iommu_groups");
  if (!units.empty()) s.evidence.push_back(fmt::format("class/iommu: {}", units.front()));
  std::map<std::string, int> types;
  for (const auto& g : groups) {
    auto r = sys.read_sys("kernel/iommu_groups/" + g + "/type");
    if (r.ok()) types[printable(r.text)]++;
  }
  for (const auto& [t, n] : types)
    s.evidence.push_back(fmt::format("{} iommu group(s) of type {}", n, t));
  bool pt_cmdline = has("iommu=pt") || has("iommu.passthrough=1");
  if (pt_cmdline) s.evidence.push_back("kernel command line: iommu=pt");
  bool off_cmdline = has("iommu=off") || has("intel_iommu=off") || has("amd_iommu=off");
  s.enabled = (!units.empty() || !groups.empty()) && !off_cmdline;
  if (!s.enabled) {
    s.mode = "off";
    if (s.evidence.empty()) s.evidence.push_back("no IOMMU units or groups");
    return;
  }
  if (!types.empty()) {
    s.passthrough = types.size() == 1 && types.begin()->first == "identity";
  } else {
    s.passthrough = pt_cmdline;
  }
  s.mode =
      s.passthrough ? "pass-through" : (types.empty() && !pt_cmdline ? "unknown" : "translated");
  if (s.mode == "unknown" && !cmd.ok()) s.evidence.push_back("/proc/cmdline not read");
}

namespace {

void read_gpu_links(NvmlApi& nvml, NvmlDevice dev, const std::string& address, Machine& m) {
  for (unsigned l = 0; l < kNvmlNvlinkMaxLinks; ++l) {
    bool active = false;
    NvmlReturn r = nvml.nvlink_state(dev, l, &active);
    if (r == kNvmlErrorNotSupported || r == kNvmlErrorInvalidArgument || r == kNvmlErrorNotFound)
      continue;
    if (r != kNvmlSuccess) {
      m.notes.push_back(
          fmt::format("NVML: {} link {} state: {}", address, l, nvml.error_string(r)));
      continue;
    }
    NvlinkState s;
    s.gpu = address;
    s.link = l;
    s.active = active;
    unsigned version = 0;
    if (nvml.nvlink_version(dev, l, &version) == kNvmlSuccess)
      s.generation = nvlink_generation(version);
    NvmlPciInfo remote;
    if (nvml.nvlink_remote_pci_info(dev, l, &remote) == kNvmlSuccess) s.remote = remote.bus_id;
    for (int c = 0; c < kNvlinkErrorCounters; ++c) {
      std::uint64_t v = 0;
      if (nvml.nvlink_error_counter(dev, l, static_cast<NvlinkErrorCounter>(c), &v) ==
          kNvmlSuccess) {
        s.errors[c] = v;
        s.errors_read = true;
      }
    }
    m.nvml.links.push_back(s);
  }
}

}  // namespace

static void read_gpu_health(NvmlApi& nvml, NvmlDevice dev, GpuHealth& h) {
  std::uint64_t u64 = 0;
  unsigned u = 0;
  if (nvml.throttle_reasons(dev, &u64) == kNvmlSuccess) h.throttle_reasons = u64;
  if (nvml.temperature_c(dev, &u) == kNvmlSuccess) h.temperature_c = u;
  if (nvml.slowdown_temperature_c(dev, &u) == kNvmlSuccess) h.slowdown_temperature_c = u;
  if (nvml.power_mw(dev, &u) == kNvmlSuccess) h.power_mw = u;
  if (nvml.power_limit_mw(dev, &u) == kNvmlSuccess) h.power_limit_mw = u;
  if (nvml.ecc_errors(dev, false, &u64) == kNvmlSuccess) h.ecc_corrected = u64;
  if (nvml.ecc_errors(dev, true, &u64) == kNvmlSuccess) h.ecc_uncorrected = u64;
  NvmlRemappedRows rows;
  if (nvml.remapped_rows(dev, &rows) == kNvmlSuccess) h.remapped_rows = rows;
  if (nvml.bar1_total_bytes(dev, &u64) == kNvmlSuccess) h.bar1_total_bytes = u64;
  NvmlReturn status = kNvmlSuccess;
  if (nvml.fabric_state(dev, &u, &status) == kNvmlSuccess) {
    h.fabric_state = u;
    h.fabric_status = status;
  }
}

void read_nvml(NvmlApi* nvml, const std::string& missing_why, Machine& m) {
  NvmlFacts& f = m.nvml;
  if (!nvml) {
    f.why_not = missing_why.empty() ? "NVML not loaded" : missing_why;
    return;
  }
  NvmlReturn r = nvml->init();
  if (r != kNvmlSuccess) {
    f.why_not = fmt::format("nvmlInit_v2 failed: {}", nvml->error_string(r));
    return;
  }
  unsigned count = 0;
  r = nvml->device_count(&count);
  if (r != kNvmlSuccess) {
    f.why_not = fmt::format("nvmlDeviceGetCount_v2 failed: {}", nvml->error_string(r));
    nvml->shutdown();
    return;
  }
  for (unsigned i = 0; i < count && i < 1024; ++i) {
    NvmlDevice dev = 0;
    NvmlPciInfo pci;
    if (nvml->device_handle(i, &dev) != kNvmlSuccess ||
        nvml->device_pci_info(dev, &pci) != kNvmlSuccess) {
      m.notes.push_back(fmt::format("NVML: GPU {} not readable", i));
      continue;
    }
    NvmlGpu g;
    g.address = pci.bus_id;
    g.pci_device_id = pci.pci_device_id;
    nvml->device_name(dev, &g.name);
    read_gpu_health(*nvml, dev, g.health);
    f.gpus.push_back(g);
    read_gpu_links(*nvml, dev, g.address, m);
  }
  nvml->shutdown();
  f.read = true;
}

}  // namespace linkwise::probe::detail
