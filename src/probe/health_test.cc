// Field health from NVML on the DGX-like fixture with a fake NVML: a throttling GPU, ECC errors and
// a pending row remap, the fabric manager down, a small BAR1. Each finding is checked as check_text
// prints it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/cli_runner.h"
#include "linkwise/probe/check.h"
#include "linkwise/probe/discover.h"
#include "linkwise/probe/machine.h"
#include "linkwise/probe/nvml_fake.h"
#include "probe/testing/fixture.h"

namespace linkwise::probe {
namespace {

using testing::SysfsFixture;

// The findings of these kinds, as check_text prints them (message, slot path and advice lines).
std::string findings_of(const FakeNvml& nvml_in, const std::vector<std::string>& kinds) {
  SysfsFixture fx(linkwise::testing::temp_dir());
  FakeNvml nvml;
  testing::build_dgx_like(fx, nvml, false);
  for (std::size_t i = 0; i < nvml.gpus.size() && i < nvml_in.gpus.size(); ++i) {
    auto links = nvml.gpus[i].links;
    auto bus = nvml.gpus[i].bus_id;
    nvml.gpus[i] = nvml_in.gpus[i];
    nvml.gpus[i].links = links;
    nvml.gpus[i].bus_id = bus;
  }
  auto sys = SysfsReader::for_copy(fx.root());
  auto m = read_machine(sys, &nvml);
  auto d = discover(m, "fixture");
  auto r = check(m, d);
  CheckReport only;
  for (const auto& f : r.findings)
    if (std::find(kinds.begin(), kinds.end(), f.kind) != kinds.end()) only.findings.push_back(f);
  std::stable_sort(only.findings.begin(), only.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity < b.severity; });
  std::string text;
  for (const auto& f : only.findings)
    text += fmt::format("{:<7} {}: {}\n", to_string(f.severity), f.kind, f.message);
  return text;
}

FakeNvml eight_gpus() {
  FakeNvml n;
  n.gpus.resize(8);
  return n;
}

TEST(ProbeHealthTest, ThrottlingHotGpuAndPowerCap) {
  auto n = eight_gpus();
  n.gpus[2].throttle_reasons = kNvmlThrottleSwThermal | kNvmlThrottleHwThermal;
  n.gpus[2].temperature_c = 87;
  n.gpus[2].slowdown_temperature_c = 90;
  n.gpus[3].throttle_reasons = kNvmlThrottleSwPowerCap;
  n.gpus[3].power_mw = 700000;
  n.gpus[3].power_limit_mw = 700000;
  n.gpus[3].temperature_c = 60;
  n.gpus[3].slowdown_temperature_c = 90;
  EXPECT_EQ(
      findings_of(n, {"gpu-throttled", "gpu-hot", "gpu-power-at-limit"}),
      "fault   gpu-throttled: gpu2 0000:33:00.0: clocks held down: software thermal slowdown, "
      "hardware thermal "
      "slowdown (throttle reasons 0x60)\n"
      "warning gpu-hot: gpu2 0000:33:00.0: 87 C, within 5 C of its slowdown temperature 90 C\n"
      "warning gpu-throttled: gpu3 0000:43:00.0: clocks held down: software power cap (throttle "
      "reasons 0x4)\n"
      "info    gpu-power-at-limit: gpu3 0000:43:00.0: drawing 700 W, at its enforced limit 700 "
      "W\n");
}

TEST(ProbeHealthTest, EccErrorsAndRemappedRows) {
  auto n = eight_gpus();
  n.gpus[4].ecc_uncorrected = 2;
  n.gpus[4].ecc_corrected = 130;
  n.gpus[4].remapped_rows = NvmlRemappedRows{1, 2, true, false};
  n.gpus[7].remapped_rows = NvmlRemappedRows{0, 9, false, true};
  EXPECT_EQ(
      findings_of(n, {"ecc-uncorrected", "ecc-corrected", "row-remap-pending", "row-remap-failed"}),
      "fault   ecc-uncorrected: gpu4 0000:93:00.0: 2 uncorrectable ECC error(s) (lifetime)\n"
      "fault   row-remap-failed: gpu7 0000:c3:00.0: a row remapping failed (0 correctable, 9 "
      "uncorrectable rows "
      "remapped)\n"
      "warning row-remap-pending: gpu4 0000:93:00.0: a row remapping waits for a GPU reset (1 "
      "correctable, 2 "
      "uncorrectable rows remapped)\n"
      "info    ecc-corrected: gpu4 0000:93:00.0: 130 corrected ECC error(s) (lifetime)\n");
}

TEST(ProbeHealthTest, FabricManagerDownAndSmallBar1) {
  auto n = eight_gpus();
  for (auto& g : n.gpus) g.fabric_state = kNvmlFabricNotStarted;
  n.gpus[5].bar1_total_bytes = 256ull << 20;
  std::string all = findings_of(n, {"fabric-not-ready", "bar1-small"});
  EXPECT_NE(all.find("fault   fabric-not-ready: gpu0 0000:13:00.0: NVSwitch fabric registration "
                     "not started (state 1, "
                     "status 0)\n"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("warning bar1-small: gpu5 0000:a3:00.0: BAR1 is 256 MiB: resizable BAR is off "
                     "or not granted\n"),
            std::string::npos)
      << all;
  std::size_t faults = 0;
  for (std::size_t p = 0; (p = all.find("fault   fabric-not-ready", p)) != std::string::npos; ++p)
    ++faults;
  EXPECT_EQ(faults, 8u);
  // Registered: nothing.
  for (auto& g : n.gpus) g.fabric_state = kNvmlFabricCompleted;
  EXPECT_EQ(findings_of(n, {"fabric-not-ready"}), "");
}

}  // namespace
}  // namespace linkwise::probe
