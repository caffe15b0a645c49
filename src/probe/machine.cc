// read_machine(): the PCIe tree from sysfs.
#include "linkwise/probe/machine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <sstream>

#include "config_space.h"
#include "host.h"
#include "xid.h"

namespace linkwise::probe {

const char* to_string(PortType t) {
  switch (t) {
    case PortType::kUnknown:
      return "unknown";
    case PortType::kEndpoint:
      return "endpoint";
    case PortType::kRootPort:
      return "root port";
    case PortType::kUpstream:
      return "switch upstream port";
    case PortType::kDownstream:
      return "switch downstream port";
    case PortType::kPcieToPci:
      return "PCIe-to-PCI bridge";
    case PortType::kRcEndpoint:
      return "root complex integrated endpoint";
    case PortType::kOther:
      return "other";
  }
  return "?";
}

std::string PciDevice::slot_path() const {
  std::string s = root_bus.empty() ? "" : "pci" + root_bus;
  for (const auto& a : chain) s += (s.empty() ? "" : "/") + a;
  return s;
}

const PciDevice* Machine::find(const std::string& address) const {
  for (const auto& d : devices)
    if (d.address == address) return &d;
  return nullptr;
}

std::optional<unsigned> parse_hex(const std::string& text) {
  std::string_view s = text;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.size() > 8) return std::nullopt;
  unsigned v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

int parse_link_speed(const std::string& text) {
  // "<rate> GT/s" optionally followed by " PCIe" (kernels since 4.x) or nothing (older kernels).
  double rate = 0;
  const char* b = text.data();
  auto [end, ec] = std::from_chars(b, b + text.size(), rate);
  if (ec != std::errc()) return 0;
  std::string_view rest(end, b + text.size() - end);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (rest.rfind("GT/s", 0) != 0) return 0;
  // Transfer rates per generation: PCI Express Base Specification Rev 1.1-6.0, §4.2.
  struct Gen {
    double gtps;
    int gen;
  };
  static constexpr Gen kGens[] = {{2.5, 1}, {5.0, 2}, {8.0, 3}, {16.0, 4}, {32.0, 5}, {64.0, 6}};
  for (const auto& g : kGens)
    if (rate > g.gtps - 0.01 && rate < g.gtps + 0.01) return g.gen;
  return 0;
}

namespace {

bool is_bdf(std::string_view s) {
  // "dddd:bb:dd.f", hex digits.
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11})
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      if (i > start) out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

void place_in_tree(PciDevice& d, const std::string& path) {
  d.sysfs_path = path;
  for (const auto& part : split(path, '/')) {
    // "pci0000:17": a host bridge's root bus.
    if (part.size() == 10 && part.rfind("pci", 0) == 0 && part[7] == ':') {
      d.root_bus = part.substr(3);
      d.chain.clear();
    } else if (is_bdf(part)) {
      d.chain.push_back(part);
    }
  }
  if (d.chain.empty() || d.chain.back() != d.address) d.chain.push_back(d.address);
  // A path that names the device above itself (".../0000:17:01.0/0000:17:01.0", possible in a
  // copied tree) gives it no parent: it would be its own.
  if (d.chain.size() >= 2 && d.chain[d.chain.size() - 2] != d.address)
    d.parent = d.chain[d.chain.size() - 2];
}

void read_ids(const SysfsReader& sys, const std::string& base, PciDevice& d) {
  bool ok = true;
  auto hex = [&](const char* file, unsigned& out) {
    auto r = sys.read_sys(base + file);
    std::optional<unsigned> v = r.ok() ? parse_hex(r.text) : std::nullopt;
    if (v) {
      out = *v;
    } else {
      ok = false;
      d.notes.push_back(r.ok() ? fmt::format("{}: unreadable value '{}'", file, printable(r.text))
                               : fmt::format("{}: {}", file, to_string(r.status)));
    }
  };
  hex("vendor", d.vendor);
  hex("device", d.device);
  hex("class", d.class_code);
  d.ids_read = ok;
  auto numa = sys.read_sys(base + "numa_node");
  if (numa.ok()) {
    int v = -1;
    auto [end, ec] = std::from_chars(numa.text.data(), numa.text.data() + numa.text.size(), v);
    if (ec == std::errc() && end == numa.text.data() + numa.text.size() && v >= -1 && v < 4096)
      d.numa = v;
    else
      d.notes.push_back(fmt::format("numa_node: unreadable value '{}'", printable(numa.text)));
  }
}

void read_link(const SysfsReader& sys, const std::string& base, PciDevice& d) {
  PcieLinkState& l = d.link;
  auto speed = [&](const char* file, int& gen, std::string& text, bool& unreadable) {
    auto r = sys.read_sys(base + file);
    if (!r.ok()) {
      unreadable = r.status != ReadStatus::kMissing;
      if (unreadable) d.notes.push_back(fmt::format("{}: {}", file, to_string(r.status)));
      return;
    }
    text = printable(r.text);
    gen = parse_link_speed(r.text);
    unreadable = gen == 0;
    if (gen == 0 && r.text.rfind("Unknown", 0) != 0)
      d.notes.push_back(fmt::format("{}: unreadable value '{}'", file, printable(r.text)));
  };
  auto width = [&](const char* file, int& w, bool& unreadable) {
    auto r = sys.read_sys(base + file);
    unreadable = r.status != ReadStatus::kMissing;
    if (!r.ok()) {
      if (unreadable) d.notes.push_back(fmt::format("{}: {}", file, to_string(r.status)));
      return;
    }
    int v = 0;
    std::string_view t = r.text;
    if (!t.empty() && t.front() == 'x') t.remove_prefix(1);
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec == std::errc() && end == t.data() + t.size() && v >= 1 && v <= 32) {
      w = v;
      unreadable = false;
    } else {
      d.notes.push_back(fmt::format("{}: unreadable value '{}'", file, printable(r.text)));
    }
  };
  bool max_gen_unreadable = false, max_width_unreadable = false;
  speed("current_link_speed", l.cur_gen, l.cur_speed_text, l.cur_gen_unreadable);
  speed("max_link_speed", l.max_gen, l.max_speed_text, max_gen_unreadable);
  width("current_link_width", l.cur_width, l.cur_width_unreadable);
  width("max_link_width", l.max_width, max_width_unreadable);
}

void read_config(const SysfsReader& sys, const std::string& base, PciDevice& d) {
  auto r = sys.read_sys_bytes(base + "config", 4096);
  if (!r.ok()) {
    d.notes.push_back(fmt::format("config: {}", to_string(r.status)));
    return;
  }
  auto f = detail::parse_config_space(r.text);
  d.port_type = f.port_type;
  d.link_status = f.link_status;
  if (d.is_bridge()) {
    d.acs_p2p_redirect = f.acs_p2p_redirect;
    if (!f.note.empty()) d.notes.push_back("config: " + f.note);
  }
}

// aer_dev_correctable / aer_dev_nonfatal / aer_dev_fatal: "RxErr 0\nBadTLP 3\n...TOTAL_ERR_COR 3".
// A file that is missing (no AER, or a kernel before 4.19) leaves the counter unread; a malformed
// line becomes a note.
void read_aer(const SysfsReader& sys, const std::string& base, PciDevice& d) {
  static const std::pair<const char*, const char*> kFiles[] = {
      {"aer_dev_correctable", "TOTAL_ERR_COR"},
      {"aer_dev_nonfatal", "TOTAL_ERR_NONFATAL"},
      {"aer_dev_fatal", "TOTAL_ERR_FATAL"}};
  for (int k = 0; k < 3; ++k) {
    auto r = sys.read_sys(base + kFiles[k].first);
    if (!r.ok()) continue;
    std::optional<std::uint64_t> total;
    std::istringstream in(r.text);
    for (std::string line; std::getline(in, line);) {
      std::istringstream ls(line);
      std::string name, count;
      if (!(ls >> name >> count)) continue;
      std::uint64_t v = 0;
      auto [p, ec] = std::from_chars(count.data(), count.data() + count.size(), v);
      if (ec != std::errc() || p != count.data() + count.size()) {
        d.notes.push_back(
            fmt::format("{}: unreadable count '{}'", kFiles[k].first, printable(line)));
        continue;
      }
      if (name == kFiles[k].second)
        total = v;
      else if (v > 0 && d.aer.nonzero.size() < 32)
        d.aer.nonzero.emplace_back(printable(name), v);
    }
    if (!total) d.notes.push_back(fmt::format("{}: no {} line", kFiles[k].first, kFiles[k].second));
    (k == 0 ? d.aer.correctable : k == 1 ? d.aer.nonfatal : d.aer.fatal) = total;
  }
}

std::map<std::string, std::string> read_slots(const SysfsReader& sys) {
  std::map<std::string, std::string> slots;  // "dddd:bb:dd" -> slot name
  for (const auto& name : sys.list_sys("bus/pci/slots")) {
    auto r = sys.read_sys("bus/pci/slots/" + name + "/address");
    if (r.ok() && r.text.size() >= 10) slots[r.text.substr(0, 10)] = printable(name);
  }
  return slots;
}

}  // namespace

namespace detail {

std::vector<PciDevice> read_pci_devices(const SysfsReader& sys, std::vector<std::string>& notes) {
  std::vector<PciDevice> out;
  auto slots = read_slots(sys);
  auto names = sys.list_sys("bus/pci/devices");
  if (names.empty())
    notes.push_back("no PCI devices under bus/pci/devices (missing or unreadable)");
  for (const auto& name : names) {
    if (!is_bdf(name)) {
      notes.push_back(
          fmt::format("bus/pci/devices/{}: not a PCI address, skipped", printable(name)));
      continue;
    }
    PciDevice d;
    d.address = name;
    for (auto& c : d.address) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string base = "bus/pci/devices/" + name + "/";
    auto path = sys.resolve_sys("bus/pci/devices/" + name);
    if (path)
      place_in_tree(d, *path);
    else
      d.notes.push_back(
          "device link does not resolve (loop, dangling or outside sysfs): tree position unknown");
    read_ids(sys, base, d);
    read_link(sys, base, d);
    read_config(sys, base, d);
    read_aer(sys, base, d);
    d.virtual_function = sys.exists_sys(base + "physfn");
    if (auto it = slots.find(d.address.substr(0, 10)); it != slots.end()) d.slot = it->second;
    out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(),
            [](const PciDevice& a, const PciDevice& b) { return a.address < b.address; });
  return out;
}

}  // namespace detail

Machine read_machine(const SysfsReader& sys, NvmlApi* nvml, const std::string& nvml_missing_why) {
  Machine m;
  m.devices = detail::read_pci_devices(sys, m.notes);
  detail::read_cpus(sys, m);
  detail::read_iommu(sys, m);
  detail::read_nvml(nvml, nvml_missing_why, m);
  detail::read_xids(sys, m);
  return m;
}

}  // namespace linkwise::probe
