// nvbandwidth's text output read as measurements (calibrate takes it as printed).
//
// nvbandwidth (github.com/NVIDIA/nvbandwidth) prints, per testcase, a "Running <testcase>." line,
// a header "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)", a line of column numbers, one
// line per row (its number, then a figure or N/A per column), a blank line and "SUM <testcase>
// <total>". What each testcase becomes (testcase.h of nvbandwidth describes what it reports):
//   host_to_device_memcpy_{ce,sm}                h2d, one per GPU column
//   device_to_host_memcpy_{ce,sm}                d2h
//   {host_to_device,device_to_host}_bidirectional_memcpy_{ce,sm}   bidir: nvbandwidth reports the
//       measured direction only while the other runs; linkwise's bidir is the sum of both, so the
//       figure is doubled (assumes the two directions alike; the entry's note says so)
//   device_to_device_memcpy_{read,write}_{ce,sm} p2p, from the sender to the receiver as the
//       header's arrow says (row -> column, or row <- column)
//   device_to_device_bidirectional_memcpy_{read,write}_ce   p2p_bidir, doubled as above
//   device_to_device_bidirectional_memcpy_{read,write}_sm   p2p_bidir (already the sum)
// Other testcases (all_to_host, host_to_all, all_to_one, one_to_all, latency) measure several
// copies at once or a latency: they are skipped and listed in the file's "skipped" note.
#pragma once

#include <string>

#include "linkwise/measure/measurement.h"

namespace linkwise::measure::detail {

/// Whether `text` reads as nvbandwidth output: a "Running <testcase>." line followed by a
/// "memcpy ..." matrix header.
bool is_nvbandwidth_log(const std::string& text);

/// The measurements of an nvbandwidth log. Throws InputError with file:line for a malformed matrix
/// (a row with the wrong number of figures, a figure that is not a number or N/A), or when no
/// testcase it reads is present.
MeasurementFile parse_nvbandwidth_log(const std::string& text, const std::string& filename);

}  // namespace linkwise::measure::detail
