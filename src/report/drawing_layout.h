// Where everything of a chassis drawing goes (private to report/; drawing.cc renders it). A nested
// box layout, as lstopo draws a machine: frames (one per box of the chassis) hold sockets, sockets
// what their root ports lead to, switches and retimers what is below them. See report/drawing.h.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace linkwise::topo {
class Chassis;
}

namespace linkwise::report::layout {

// Geometry, in px. Labels are monospace (svg::kCharPx a character), kLinePx a line.
inline constexpr double kPad = 6, kLinePx = 14, kStubPx = 14, kHGap = 10, kMargin = 16;
inline constexpr double kFrameGap = 24, kBandPx = 34, kFabricGap = 56;
/// A part name longer than this many characters goes on two lines.
inline constexpr std::size_t kWrapChars = 30;

/// `text` split at spaces into lines of at most `width` characters (a longer word stays whole).
std::vector<std::string> wrap_words(const std::string& text, std::size_t width);

/// One node's box.
struct Box {
  int node = -1;
  double x = 0, y = 0, w = 0, h = 0;
  double head_h = 0;                   ///< the label lines above the children
  std::vector<std::string> lines;      ///< name, part (wrapped), label
  std::vector<std::vector<int>> rows;  ///< children, row by row
  bool has_gpu = false;                ///< a GPU, or holds one
  /// The links leaving each edge, as (link, node at the other end or -1), ordered by where the
  /// other end sits, so lines to the left leave from the left.
  std::vector<std::pair<int, int>> top_ends, bottom_ends;
};

/// One box of the chassis.
struct Frame {
  double x = 0, y = 0, w = 0, h = 0;
  std::string title;
  std::vector<int> roots;   ///< CPUs
  std::vector<int> fabric;  ///< parts with no PCIe parent: NVSwitches, ...
  double roots_y = 0;
};

/// How a link is drawn: a stub out of the child's top edge (PCIe to the part above), a line down to
/// a row below (NVSwitch, network), an arc above (socket links) or below (direct links).
enum class Route { kStub, kDown, kArcAbove, kArcBelow };

struct End {
  double x, y;
};

/// The chassis laid out: every box placed, every link routed.
class Scene {
 public:
  Scene(const topo::Chassis& chassis, std::vector<std::string> heading);

  const topo::Chassis& c;
  std::vector<Box> box;                ///< per node
  std::vector<std::vector<int>> kids;  ///< per node: PCIe children
  std::vector<Frame> frames;
  std::vector<int> net;        ///< network switches
  std::vector<int> net_level;  ///< per node: 0 leaf (links into a box), 1 spine
  std::vector<Route> route;    ///< per link
  std::vector<std::string> heading;
  bool any_arc_above = false;
  double below_band = kBandPx;  ///< room under the sockets for arcs
  double widest_arc = 1;        ///< widest horizontal reach of an arc
  double width = 0, bottom = 0, net_top = 0;

  /// Where link `link` leaves node `node`'s top or bottom edge.
  End end_of(int node, bool top, int link) const;
  /// Every node, each parent before its children.
  std::vector<int> drawing_order() const;

 private:
  void measure(int n);
  void place(int n, double x, double y);
  bool in_band_row(int n) const;
  void route_links();
  void place_frames();
  void place_network();
  void order_ends();
};

}  // namespace linkwise::report::layout
