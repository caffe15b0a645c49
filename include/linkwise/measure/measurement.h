// The measurement file: what `linkwise bench` writes and `linkwise calibrate` reads
// (docs/measure.md).
//
//   {
//     "format": "linkwise-measurements/1",
//     "machine": "host or description", "tool": "linkwise bench 0.1.0",
//     "measurements": [
//       {"kind": "h2d", "gpus": [0], "engine": "ce", "bytes": 67108864, "measured_GBps": 55.2,
//        "source": "linkwise bench"},
//       {"kind": "collective", "op": "all_reduce", "gpus": [0,1,2,3,4,5,6,7], "bytes": 8589934592,
//        "measured_GBps": 231.0, "metric": "busbw", "source": "nccl-tests issue 149"}
//     ]
//   }
//
// Kinds: h2d, d2h, bidir, p2p, p2p_bidir, d2d_local (copy_bench.h), collective (busbw as
// nccl-tests), link (one technology at a width, "tech" and "width" given). `gpus` are GPU numbers
// of the chassis (GPU0, GPU1, ... in its rank order). An entry may name its own "chassis" (preset
// or file), which then replaces the one calibrate is given; other keys (samples, notes) are kept
// but not read.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "linkwise/util/error.h"

namespace linkwise::measure {

struct Measurement {
  std::string kind;
  std::vector<int> gpus;
  std::string op;             ///< collective: all_reduce, ...
  std::string algo;           ///< collective: ring, nvls, ... or "" (not known)
  std::string engine = "ce";  ///< copy kinds: ce or sm
  bool peer_access = true;    ///< p2p kinds
  std::uint64_t bytes = 0;    ///< 0 when not given (a large transfer)
  double measured_GBps = 0;
  std::string metric;   ///< collective: busbw (the only one calibrate reads)
  std::string tech;     ///< link: catalog technology id
  int width = 0;        ///< link: lanes or links
  std::string chassis;  ///< "" = the chassis calibrate is given
  std::string source;
  std::string note;
  nlohmann::json extra;  ///< keys not listed above, kept as they were
  SourceLocation where;  ///< file, the entry's line (0 if unknown) and its index + 1 as column
};

struct MeasurementFile {
  std::string format = "linkwise-measurements/1";
  std::string machine;
  std::string tool;
  std::vector<Measurement> measurements;
  nlohmann::json extra =
      nlohmann::json::object();  ///< other top-level sections (nccl, sustained, ...)
};

/// The kinds calibrate understands.
const std::vector<std::string>& measurement_kinds();

/// Parses a measurement file. Throws InputError naming the file, the entry ("measurements[3]") and
/// the offending key for a malformed file, an unknown kind, a missing or non-positive figure.
MeasurementFile parse_measurements(const std::string& json_text, const std::string& filename);
MeasurementFile load_measurements(const std::string& path);
nlohmann::json to_json(const Measurement& m);
nlohmann::json to_json(const MeasurementFile& f);

}  // namespace linkwise::measure
