// An NVML snapshot beside a copy of sysfs: what NVML answered on the machine the copy was taken
// from, read in place of NVML when `probe --sysfs-root DIR` finds DIR/nvml.json (docs/probe.md).
//
//   {"gpus": [{"bus_id": "0000:1b:00.0", "name": "NVIDIA H100 80GB HBM3",
//              "throttle_reasons": 96, "temperature_c": 87, "slowdown_temperature_c": 90,
//              "power_mw": 700000, "power_limit_mw": 700000, "ecc_corrected": 0,
//              "ecc_uncorrected": 2, "bar1_total_bytes": 268435456,
//              "remapped_rows": {"correctable": 0, "uncorrectable": 2, "pending": true,
//                                "failure": false},
//              "fabric_state": 1, "fabric_status": 0,
//              "nvlinks": [{"active": true, "version": 6, "remote_bus_id": "0000:61:00.0"}]}]}
//
// A key left out is what NVML answers "not supported" for. Units as NVML's: milliwatts, degrees C,
// bytes; throttle_reasons is nvmlClocksThrottleReasons' mask, fabric_state nvmlGpuFabricState_t.
#pragma once

#include <memory>
#include <string>

#include "linkwise/probe/nvml_fake.h"

namespace linkwise::probe::detail {

/// Parses a snapshot. Throws InputError naming the file and the offending key for malformed JSON,
/// an unknown key or a value of the wrong type or range.
std::unique_ptr<FakeNvml> parse_nvml_snapshot(const std::string& json_text,
                                              const std::string& filename);

}  // namespace linkwise::probe::detail
