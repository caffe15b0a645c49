// A chassis drawn as SVG, the way lstopo draws a machine: each box holds its sockets, a socket
// holds what hangs off its PCIe root ports, a switch or retimer holds what is below it, and GPUs,
// NICs and drives are the innermost boxes. NVSwitches sit in a row under the sockets of their box,
// network switches in a row under all boxes. Every link is one element: a PCIe link to the part
// above is a short stub out of the child's top edge into the space inside its parent, a link to a
// switch runs down to that switch, a socket link arcs above the sockets and any other link (a
// direct NVLink) arcs below its two ends. Colour says the technology (legend), stroke width the
// bandwidth (log scale), a dashed stroke a link trained below its design; with utilisation given,
// colour says how full each link was instead.
//
//   auto c = linkwise::topo::load_chassis("dgx-h100");
//   std::string svg = linkwise::report::chassis_svg(c);
//
// The SVG is well-formed XML with every name escaped. Each node is
// `<g class="node" data-node="NAME" data-kind="gpu">` holding its `<rect>` and labels; each link
// is `<path class="link" data-link="INDEX" data-tech="TECH" ...>`. No two boxes overlap unless one
// holds the other, and every box is wide enough for its labels (monospace, 11 px).
#pragma once

#include <string>
#include <vector>

namespace linkwise::topo {
class Chassis;
}

namespace linkwise::report {

struct DrawOptions {
  /// Per link index, the fraction of its capacity used (bytes moved / (capacity x time)); empty:
  /// links coloured by technology. A link with a negative value carried nothing.
  std::vector<double> utilisation;
  /// One line under the title, e.g. which job the utilisation comes from.
  std::string subtitle;
};

/// The chassis as a standalone SVG document.
std::string chassis_svg(const topo::Chassis& chassis, const DrawOptions& options = {});

/// Writes `svg` to `path` as PNG through `rsvg-convert` (Debian package librsvg2-bin), atomically:
/// a temporary file beside `path` renamed over it. Throws RuntimeError when rsvg-convert is not
/// installed or fails.
void write_png_atomic(const std::string& svg, const std::string& path);

/// Writes the drawing to `path`, as SVG or PNG by its extension. Throws InputError for another
/// extension (before anything is written).
void write_drawing(const std::string& svg, const std::string& path);

}  // namespace linkwise::report
