#include "health.h"

#include <fmt/format.h>

#include <algorithm>

#include "linkwise/comm/predict.h"
#include "linkwise/topo/chassis.h"
#include "xid.h"

namespace linkwise::probe::detail {

namespace {

constexpr unsigned kLinkBandwidthManagementStatus = 0x4000;  // PCI_EXP_LNKSTA_LBMS
constexpr unsigned kLinkAutonomousBandwidthStatus = 0x8000;  // PCI_EXP_LNKSTA_LABS

std::string who(const Discovery& d, const PciDevice& dev) {
  const auto* n = d.node_by_address(dev.address);
  return n ? fmt::format("{} {}", n->id, dev.address) : dev.address;
}

std::string nonzero_text(const AerCounters& a) {
  std::vector<std::string> parts;
  for (const auto& [name, v] : a.nonzero) parts.push_back(fmt::format("{} {}", name, v));
  return parts.empty() ? "" : fmt::format(" ({})", fmt::join(parts, ", "));
}

}  // namespace

void check_field_health(const Machine& m, const Discovery& d, std::vector<Finding>& out) {
  const bool any_gpu =
      std::any_of(d.nodes.begin(), d.nodes.end(), [](const auto& n) { return n.kind == "gpu"; });
  if (!any_gpu)
    out.push_back(
        {Severity::kFault, "no-gpu", "", "",
         fmt::format(
             "no GPU found among {} PCI function(s){}", m.devices.size(),
             m.nvml.read ? fmt::format(", and NVML lists {} GPU(s)", m.nvml.gpus.size()) : ""),
         "check that the GPUs are seated and powered, that the BIOS enables their slots (`lspci -d "
         "10de:`), "
         "and that the driver is loaded (`nvidia-smi`)"});
  check_gpu_health(m, d, out);
  if (any_gpu) check_xid_events(m, d, out);
  for (const auto& dev : m.devices) {
    const auto& a = dev.aer;
    const std::string path = dev.slot_path();
    const unsigned long long uncorrectable = a.nonfatal.value_or(0) + a.fatal.value_or(0);
    if (uncorrectable > 0)
      out.push_back(
          {Severity::kFault, "pcie-aer-uncorrectable", dev.address, path,
           fmt::format("{}: {} uncorrectable PCIe error(s) since boot ({} non-fatal, {} fatal){}",
                       who(d, dev), uncorrectable, a.nonfatal.value_or(0), a.fatal.value_or(0),
                       nonzero_text(a)),
           "read `dmesg | grep -i aer` for the failing TLPs; reseat the card or cable, check the "
           "riser/"
           "retimer; replace the part if the count grows"});
    if (a.correctable.value_or(0) > 0) {
      const bool storm = *a.correctable >= kAerCorrectableStorm;
      out.push_back(
          {storm ? Severity::kWarning : Severity::kInfo, "pcie-aer-correctable", dev.address, path,
           fmt::format("{}: {} correctable PCIe error(s) since boot{}{}", who(d, dev),
                       *a.correctable, nonzero_text(a),
                       storm ? fmt::format(" (a storm: {} or more)", kAerCorrectableStorm) : ""),
           storm ? "marginal signal on this link (replays cost bandwidth): read the counter again "
                   "under load "
                   "(aer_dev_correctable); reseat, check the riser/retimer and cable, lower the "
                   "slot's speed "
                   "in the BIOS if it keeps growing"
                 : "a few correctable errors are normal; watch whether the counter grows under "
                   "load"});
    }
    if (dev.link_status) {
      if (*dev.link_status & kLinkBandwidthManagementStatus)
        out.push_back(
            {Severity::kWarning, "link-retrained", dev.address, path,
             fmt::format(
                 "{}: the link retrained or changed speed/width for reliability since the status "
                 "was last cleared (Link Status 0x{:04x}: Link Bandwidth Management Status)",
                 who(d, dev), *dev.link_status),
             "read `lspci -vv -s <addr>` LnkSta (BWMgmt+) again after clearing it; a link that "
             "keeps "
             "retraining has marginal signal: reseat, check the riser/retimer"});
      if (*dev.link_status & kLinkAutonomousBandwidthStatus)
        out.push_back(
            {Severity::kInfo, "link-bandwidth-changed", dev.address, path,
             fmt::format(
                 "{}: the link changed speed or width on its own (Link Status 0x{:04x}: Link "
                 "Autonomous Bandwidth Status), e.g. for power saving",
                 who(d, dev), *dev.link_status),
             "not a fault by itself; see whether the trained state (link now) is full under load"});
    }
  }
}

namespace {

std::string throttle_names(std::uint64_t mask) {
  static const std::pair<std::uint64_t, const char*> kNames[] = {
      {kNvmlThrottleSwPowerCap, "software power cap"},
      {kNvmlThrottleHwSlowdown, "hardware slowdown"},
      {kNvmlThrottleSwThermal, "software thermal slowdown"},
      {kNvmlThrottleHwThermal, "hardware thermal slowdown"},
      {kNvmlThrottleHwPowerBrake, "power brake"}};
  std::vector<std::string> out;
  for (const auto& [bit, name] : kNames)
    if (mask & bit) out.push_back(name);
  return fmt::format("{}", fmt::join(out, ", "));
}

}  // namespace

void check_gpu_health(const Machine& m, const Discovery& d, std::vector<Finding>& out) {
  const bool nvswitch_box = std::any_of(d.nodes.begin(), d.nodes.end(),
                                        [](const auto& n) { return n.kind == "nvswitch"; });
  for (const auto& g : m.nvml.gpus) {
    const auto& h = g.health;
    const auto* n = d.node_by_address(g.address);
    const std::string name = n ? fmt::format("{} {}", n->id, g.address) : g.address;
    const std::string path = n ? n->slot_path : "";
    auto add = [&](Severity s, const char* kind, std::string msg, std::string advice) {
      out.push_back({s, kind, g.address, path, name + ": " + msg, std::move(advice)});
    };
    constexpr std::uint64_t kHard = kNvmlThrottleHwSlowdown | kNvmlThrottleHwThermal |
                                    kNvmlThrottleHwPowerBrake | kNvmlThrottleSwThermal;
    if (h.throttle_reasons && (*h.throttle_reasons & (kHard | kNvmlThrottleSwPowerCap)))
      add(*h.throttle_reasons & kHard ? Severity::kFault : Severity::kWarning, "gpu-throttled",
          fmt::format("clocks held down: {} (throttle reasons 0x{:x})",
                      throttle_names(*h.throttle_reasons), *h.throttle_reasons),
          *h.throttle_reasons & kHard ? "check airflow, fans and inlet temperature, and the power "
                                        "supplies (`nvidia-smi -q -d PERFORMANCE`)"
                                      : "the GPU is at its power limit: expected under full load; "
                                        "otherwise check `nvidia-smi -q -d POWER`");
    if (h.temperature_c && h.slowdown_temperature_c &&
        *h.temperature_c + 5 >= *h.slowdown_temperature_c)
      add(Severity::kWarning, "gpu-hot",
          fmt::format("{} C, within 5 C of its slowdown temperature {} C", *h.temperature_c,
                      *h.slowdown_temperature_c),
          "check airflow and inlet temperature; the GPU slows its clocks at the slowdown "
          "temperature");
    if (h.power_mw && h.power_limit_mw && *h.power_limit_mw > 0 && *h.power_mw >= *h.power_limit_mw)
      add(Severity::kInfo, "gpu-power-at-limit",
          fmt::format("drawing {:.0f} W, at its enforced limit {:.0f} W", *h.power_mw / 1e3,
                      *h.power_limit_mw / 1e3),
          "clocks drop to stay under the limit: compare `nvidia-smi -q -d POWER` with the board's "
          "default limit");
    if (h.ecc_uncorrected.value_or(0) > 0)
      add(Severity::kFault, "ecc-uncorrected",
          fmt::format("{} uncorrectable ECC error(s) (lifetime)", *h.ecc_uncorrected),
          "read `nvidia-smi -q -d ECC,ROW_REMAPPER`; reset the GPU to remap rows, and replace it "
          "if errors recur");
    if (h.ecc_corrected.value_or(0) > 0)
      add(Severity::kInfo, "ecc-corrected",
          fmt::format("{} corrected ECC error(s) (lifetime)", *h.ecc_corrected),
          "corrected errors cost nothing by themselves; watch whether they grow");
    if (h.remapped_rows) {
      const auto& r = *h.remapped_rows;
      if (r.failure)
        add(Severity::kFault, "row-remap-failed",
            fmt::format("a row remapping failed ({} correctable, {} uncorrectable rows remapped)",
                        r.correctable, r.uncorrectable),
            "no spare row is left for a failing memory row: replace the GPU");
      else if (r.pending)
        add(Severity::kWarning, "row-remap-pending",
            fmt::format("a row remapping waits for a GPU reset ({} correctable, {} uncorrectable "
                        "rows remapped)",
                        r.correctable, r.uncorrectable),
            "reset the GPU (`nvidia-smi -r`) or reboot to apply it");
    }
    if (h.bar1_total_bytes && *h.bar1_total_bytes > 0 && *h.bar1_total_bytes <= 256ull << 20)
      add(Severity::kWarning, "bar1-small",
          fmt::format("BAR1 is {} MiB: resizable BAR is off or not granted",
                      *h.bar1_total_bytes >> 20),
          "enable Above 4G Decoding and Resizable BAR in the BIOS; GPUDirect RDMA and P2P map GPU "
          "memory through BAR1");
    if (nvswitch_box && h.fabric_state &&
        (*h.fabric_state != kNvmlFabricCompleted || h.fabric_status != kNvmlSuccess))
      add(Severity::kFault, "fabric-not-ready",
          fmt::format("NVSwitch fabric registration {} (state {}, status {})",
                      *h.fabric_state == kNvmlFabricNotStarted   ? "not started"
                      : *h.fabric_state == kNvmlFabricInProgress ? "in progress"
                      : *h.fabric_state == kNvmlFabricCompleted  ? "failed"
                                                                 : "not supported",
                      *h.fabric_state, h.fabric_status),
          "start the fabric manager (`systemctl status nvidia-fabricmanager`) and check its log; "
          "without it NVLink "
          "through the NVSwitches carries nothing");
  }
}

void check_xid_events(const Machine& m, const Discovery& d, std::vector<Finding>& out) {
  if (!m.kernel_log_why_not.empty()) {
    out.push_back({Severity::kInfo, "xid-not-read", "", "",
                   "XID events not read: " + m.kernel_log_why_not,
                   "read them with `journalctl -k | grep 'NVRM: Xid'` or `dmesg | grep Xid`"});
    return;
  }
  // One finding per GPU and XID, in the order first seen: how many, and the driver's last words.
  struct Seen {
    const XidEvent* last;
    int count;
  };
  std::vector<std::pair<std::pair<std::string, int>, Seen>> seen;
  for (const auto& e : m.xids) {
    auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) {
      return s.first.first == e.address && s.first.second == e.xid;
    });
    if (it == seen.end())
      seen.push_back({{e.address, e.xid}, {&e, 1}});
    else
      it->second = {&e, it->second.count + 1};
  }
  for (const auto& [key, s] : seen) {
    const auto meaning = xid_meaning(key.second);
    const auto* n = d.node_by_address(key.first);
    out.push_back(
        {meaning.severity, "gpu-xid", key.first, n ? n->slot_path : "",
         fmt::format("{}: XID {} ({}), {} event(s) in the kernel log{}",
                     n ? fmt::format("{} {}", n->id, key.first) : key.first, key.second,
                     meaning.what, s.count,
                     s.last->text.empty() ? "" : fmt::format("; last: \"{}\"", s.last->text)),
         meaning.action});
  }
}

std::string link_fault_cost(const Discovery& d, const std::string& upper,
                            const std::string& lower) {
  const auto& links = d.spec.links;
  auto it = std::find_if(links.begin(), links.end(),
                         [&](const auto& l) { return l.a == upper && l.b == lower; });
  if (it == links.end() || (!it->trained_gen && !it->trained_width)) return "";
  try {
    topo::ChassisSpec one = d.spec;
    for (std::size_t k = 0; k < one.links.size(); ++k)
      if (k != static_cast<std::size_t>(it - links.begin()))
        one.links[k].trained_gen.reset(), one.links[k].trained_width.reset();
    const auto designed =
        topo::build_chassis(d.spec, hw::Catalog::builtin(), 1, true, topo::LinkRates::kAsDesigned);
    const auto built =
        topo::build_chassis(one, hw::Catalog::builtin(), 1, true, topo::LinkRates::kAsBuilt);
    const int n = static_cast<int>(designed.gpus().size());
    if (n < 2) return "";
    constexpr double kBytes = 1024.0 * 1024 * 1024;
    const auto want = comm::predict(designed, comm::Op::kAllReduce, {}, kBytes);
    const auto got = comm::predict(built, comm::Op::kAllReduce, {}, kBytes);
    const double x = got.time_s / want.time_s;
    if (x < 1.005) return fmt::format("it does not slow a 1 GiB all-reduce over the {} GPUs", n);
    return fmt::format(
        "it costs a 1 GiB all-reduce over the {} GPUs {:.2f}x ({:.1f} -> {:.1f} ms, busbw {:.1f} "
        "-> "
        "{:.1f} GB/s)",
        n, x, want.time_s * 1e3, got.time_s * 1e3, want.busbw_Bps / 1e9, got.busbw_Bps / 1e9);
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace linkwise::probe::detail
