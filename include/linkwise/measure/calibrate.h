// Holding measurements against the model: each figure's prediction on a chassis, its error, and link
// efficiencies fitted to the measurements.
//
// Predictions, per direction unless said, in GB/s (1e9 bytes/s), with topo::PathFinder at
// Rate::kEffective (each link's line rate × efficiency). Equations and sources: docs/measure.md.
//   h2d, d2h     max flow between the GPU and its CPU over the host fabric, capped by that CPU's
//                memory bandwidth (as `linkwise topo` computes host bandwidth)
//   bidir        each direction keeps the bottleneck technology's duplex_efficiency of that (PCIe
//                loses payload when both directions carry data), summed, capped by memory bandwidth
//   p2p          peer access on: max flow between the GPUs over the fabric their traffic uses
//                (PathFinder::gpu_fabric); off: max flow over the host fabric (copies staged by host)
//   p2p_bidir    twice the p2p figure × the bottleneck technology's duplex_efficiency
//   d2d_local    the GPU's memory bandwidth × its memory_efficiency (1 when not given) / 2 (each byte
//                copied is read and written)
//   link         the technology's unit rate × width × efficiency (the chassis's own efficiency for
//                that technology when it sets one)
//   collective   the collective predictor (CalibrateOptions::collective): by default the collectives
//                engine (comm::predict: the algorithm named by the entry, or NCCL's choice when none is
//                named, on `bytes`, 8 GiB when not given). ring_bound_busbw is a simpler alternative:
//                busbw = least max flow between ring neighbours (GPUs in the order given), each pair
//                alone, ignoring contention between pairs and in-switch reduction (NVLS).
// Copies with a size (`bytes`) pay the GPU part's copy_overhead_s (0 when not given) once per copy:
// figure = bytes / (bytes / rate + copy_overhead_s), per direction.
// Copy-kernel (engine "sm") host and peer figures are not modelled: what a kernel reaches depends on
// the SMs and loads in flight it uses. They are held against the copy-engine link bound (no per-copy
// cost) and marked `bound`; a bound is flagged only when the measurement beats it by the threshold.
// Error = (predicted − measured) / measured × 100%; flagged when |error| > threshold.
//
// Fitting (`fit_efficiencies`): each copy-engine link figure (h2d, d2h, p2p, halves of bidir and
// p2p_bidir, link) taken on the chassis itself implies efficiency = measured / line-rate prediction;
// the figure is attributed to the technology of its bottleneck (the slowest link at line rate on the
// widest path). Per technology the median implied efficiency, clamped to (0, 1], is written on every
// link of that technology in the chassis spec. Copy-kernel and collective figures are not fitted.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "linkwise/measure/measurement.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/topo/spec.h"

namespace linkwise::measure {

/// A collective's predicted bus bandwidth, bytes/s, or nullopt when it cannot say. `method` (may be
/// null) receives a short description. `gpu_nodes` are chassis node indices in rank order.
using CollectivePredictor = std::function<std::optional<double>(
    const topo::Chassis& chassis, const std::string& op, const std::vector<int>& gpu_nodes,
    std::uint64_t bytes, const std::string& algo, std::string* method)>;

/// The collectives engine's prediction (comm::predict), as described above.
std::optional<double> comm_busbw(const topo::Chassis& chassis, const std::string& op, const std::vector<int>& gpu_nodes,
                                 std::uint64_t bytes, const std::string& algo, std::string* method);

/// The ring bound described above.
std::optional<double> ring_bound_busbw(const topo::Chassis& chassis, const std::string& op,
                                       const std::vector<int>& gpu_nodes, std::uint64_t bytes,
                                       const std::string& algo, std::string* method);

struct CalibrateOptions {
  double threshold_pct = 10;
  CollectivePredictor collective = comm_busbw;
};

struct CalibrationEntry {
  Measurement measured;
  std::string chassis;                 ///< the chassis it was predicted on
  std::optional<double> predicted_GBps;
  double error_pct = 0;                ///< (predicted − measured) / measured × 100
  bool flagged = false;
  bool bound = false;                  ///< the prediction is an upper bound, not a model (copy kernels)
  std::string method;                  ///< how the prediction was made, or why there is none
  // For fitting: the line-rate prediction and the bottleneck technology (link kinds only).
  double line_GBps = 0;
  std::string bottleneck_tech;
};

struct Calibration {
  std::string chassis;
  double threshold_pct = 10;
  std::vector<CalibrationEntry> entries;
  int flagged = 0;
  int predicted = 0;                   ///< entries with a prediction
  int bounds = 0;                      ///< of those, held against an upper bound only
};

/// Predicts every entry on `chassis` (or on the entry's own chassis, loaded by name).
Calibration calibrate(const topo::Chassis& chassis, const MeasurementFile& file, const CalibrateOptions& o = {});

struct FittedTech {
  std::string tech;
  double catalog_efficiency = 0;
  double fitted_efficiency = 0;
  int figures = 0;
  std::vector<double> implied;  ///< every figure's implied efficiency
};
struct Fit {
  std::vector<FittedTech> techs;
  topo::ChassisSpec spec;  ///< the chassis spec with `efficiency` set on the fitted technologies' links
};
/// Fits efficiencies from the entries predicted on the chassis itself (entry.chassis == cal.chassis).
/// Throws InputError when no entry can be fitted.
Fit fit_efficiencies(const topo::Chassis& chassis, const Calibration& cal);

}  // namespace linkwise::measure
