// Holding measurements against the model: each figure's prediction on a chassis, its error, and
// link efficiencies fitted to the measurements.
//
// Predictions, per direction unless said, in GB/s (1e9 bytes/s), with topo::PathFinder at
// Rate::kEffective (each link's line rate × efficiency). Equations and sources: docs/measure.md.
//   h2d, d2h     max flow between the GPU and its CPU over the host fabric, capped by that CPU's
//                memory bandwidth (as `linkwise topo` computes host bandwidth)
//   bidir        each direction keeps the bottleneck technology's duplex_efficiency of that (PCIe
//                loses payload when both directions carry data), summed, capped by memory bandwidth
//   p2p          peer access on: max flow between the GPUs over the fabric their traffic uses
//                (PathFinder::gpu_fabric); off: max flow over the host fabric (copies staged by
//                host)
//   p2p_bidir    twice the p2p figure × the bottleneck technology's duplex_efficiency
//   d2d_local    the GPU's memory bandwidth × its memory_efficiency (1 when not given) / 2 (each
//   byte
//                copied is read and written)
//   link         the technology's unit rate × width × efficiency (the chassis's own efficiency for
//                that technology when it sets one)
//   collective   the collective predictor (CalibrateOptions::collective): by default the
//   collectives
//                engine (comm::predict: the algorithm named by the entry, or NCCL's choice when
//                none is named, on `bytes`, 8 GiB when not given). ring_bound_busbw is a simpler
//                alternative: busbw = least max flow between ring neighbours (GPUs in the order
//                given), each pair alone, ignoring contention between pairs and in-switch reduction
//                (NVLS).
// Copies with a size (`bytes`) pay the GPU part's copy_overhead_s (0 when not given) once per copy:
// figure = bytes / (bytes / rate + copy_overhead_s), per direction.
// Copy-kernel (engine "sm") host and peer figures are not modelled: what a kernel reaches depends
// on the SMs and loads in flight it uses. They are held against the copy-engine link bound (no
// per-copy cost) and marked `bound`; a bound is flagged only when the measurement beats it by the
// threshold. Error = (predicted − measured) / measured × 100%; flagged when |error| > threshold.
//
// Fitting (`fit_efficiencies`): each copy-engine link figure (h2d, d2h, p2p, halves of bidir and
// p2p_bidir, link) taken on the chassis itself implies efficiency = measured / line-rate
// prediction; the figure is attributed to the technology of its bottleneck (the slowest link at
// line rate on the widest path). Per technology the median implied efficiency is written on the
// links of that technology the fitted figures crossed (`path_links`; a `link` figure: every link of
// its technology and width); other links keep theirs. Warnings: a figure above the line rate (its
// efficiency clamped to 1), a figure below kImplausibleEfficiency of it (left out), figures of one
// technology that disagree by more than the threshold (the spread). Copy-kernel and collective
// figures are not fitted.
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
std::optional<double> comm_busbw(const topo::Chassis& chassis, const std::string& op,
                                 const std::vector<int>& gpu_nodes, std::uint64_t bytes,
                                 const std::string& algo, std::string* method);

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
  std::string chassis;  ///< the chassis it was predicted on
  std::optional<double> predicted_GBps;
  double error_pct = 0;  ///< (predicted − measured) / measured × 100
  bool flagged = false;
  bool bound = false;  ///< the prediction is an upper bound, not a model (copy kernels)
  std::string method;  ///< how the prediction was made, or why there is none
  // For fitting: the line-rate prediction and the bottleneck technology (link kinds only), and the
  // chassis links of that technology the transfer crossed (host kinds: the GPU's PCIe uplinks to
  // its CPU; peer over NVLink: both GPUs' NVLinks to each other or to NVSwitches).
  double line_GBps = 0;
  std::string bottleneck_tech;
  std::vector<int> path_links;
};

struct Calibration {
  std::string chassis;
  double threshold_pct = 10;
  std::vector<CalibrationEntry> entries;
  int flagged = 0;
  int predicted = 0;  ///< entries with a prediction
  int bounds = 0;     ///< of those, held against an upper bound only
};

/// Predicts every entry on `chassis` (or on the entry's own chassis, loaded by name).
Calibration calibrate(const topo::Chassis& chassis, const MeasurementFile& file,
                      const CalibrateOptions& o = {});

/// A figure implying less than this fraction of line rate is left out of the fit as implausible.
/// derived: the lowest public host-link figures in docs/measure.md (nvbandwidth issues 11 and 53:
/// A100 Gen4 x16 with the other direction loaded, 11-13 of 31.5 GB/s line rate, 0.35-0.41) are
/// above it; a smaller figure means a link trained far down or a wrong unit, not an efficiency.
constexpr double kImplausibleEfficiency = 0.2;

struct FittedTech {
  std::string tech;
  double catalog_efficiency = 0;
  double fitted_efficiency = 0;
  int figures = 0;              ///< figures the median is taken over
  std::vector<double> implied;  ///< those figures' implied efficiencies
  double spread_pct = 0;        ///< (max − min) / median × 100 of `implied`
  int links = 0;                ///< links the fitted efficiency is written on
  int tech_links = 0;           ///< links of the technology in the chassis
};
struct Fit {
  std::vector<FittedTech> techs;
  std::vector<std::string> warnings;  ///< each names the entry (measurements[i]) or the technology
  topo::ChassisSpec
      spec;  ///< the chassis spec with `efficiency` set on the fitted technologies' links
};
/// Fits efficiencies from the entries predicted on the chassis itself (entry.chassis ==
/// cal.chassis). Throws InputError when no entry can be fitted.
Fit fit_efficiencies(const topo::Chassis& chassis, const Calibration& cal);

}  // namespace linkwise::measure
