// The output of CUDA samples' p2pBandwidthLatencyTest read as measurements.
//
// p2pBandwidthLatencyTest (github.com/NVIDIA/cuda-samples, Samples/5_Domain_Specific/
// p2pBandwidthLatencyTest) prints matrices headed "Unidirectional P2P=Enabled Bandwidth (P2P
// Writes) Matrix (GB/s)" and so on, each a "   D\D     0      1" line then one line per GPU i with
// a figure per GPU j. What each becomes:
//   Unidirectional P2P=Disabled|Enabled Bandwidth (P2P Writes) Matrix   p2p from i to j (the copy
//       runs on i's stream from i's buffer to j's), peer_access false|true
//   Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix             p2p from j to i
//   Bidirectional P2P=Disabled|Enabled Bandwidth Matrix                 p2p_bidir (the sum of
//       both directions, as the sample counts 2 x bytes over the time), once per pair (i < j)
// Diagonals (a copy inside one GPU, counted as read plus write) and the latency matrices are not
// read. Copies are taken as copy-engine copies (the sample's default; --sm_copy is not visible in
// its output).
#pragma once

#include <string>

#include "linkwise/measure/measurement.h"

namespace linkwise::measure::detail {

/// Whether `text` reads as p2pBandwidthLatencyTest output (a "... Bandwidth ... Matrix (GB/s)"
/// header followed by a "D\D" line).
bool is_p2p_matrix_log(const std::string& text);

/// The measurements of a p2pBandwidthLatencyTest log. Throws InputError with file:line for a
/// malformed matrix or when no bandwidth matrix is present.
MeasurementFile parse_p2p_matrix_log(const std::string& text, const std::string& filename);

}  // namespace linkwise::measure::detail
