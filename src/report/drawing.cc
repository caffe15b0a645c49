#include "linkwise/report/drawing.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"
#include "linkwise/util/text.h"
#include "svg.h"

namespace linkwise::report {

namespace {

using topo::NodeKind;

// Geometry, in px. Text is monospace at kFontPx; kCharPx is a little over its advance (0.6 em)
// so a label always fits the box measured for it.
constexpr double kPad = 6, kLinePx = 14, kStubPx = 14, kHGap = 10, kMargin = 16;
constexpr double kFrameGap = 24, kBandPx = 34, kFabricGap = 56;
constexpr std::size_t kWrapChars = 30;  // a part name longer than this goes on two lines

const char* fill_of(NodeKind k) {
  switch (k) {
    case NodeKind::kCpu:
      return "#f4f4f4";
    case NodeKind::kPcieSwitch:
      return "#e6eef8";
    case NodeKind::kRetimer:
      return "#fff3d1";
    case NodeKind::kGpu:
      return "#e2f1cf";
    case NodeKind::kNic:
      return "#efe4f7";
    case NodeKind::kNvme:
      return "#f6e8d8";
    case NodeKind::kNvSwitch:
      return "#cfe8ad";
    case NodeKind::kNetSwitch:
      return "#e3d8f0";
  }
  return "#ffffff";
}

const char* family_colour(hw::LinkFamily f) {
  switch (f) {
    case hw::LinkFamily::kPcie:
      return "#1f6fb4";
    case hw::LinkFamily::kNvlink:
      return "#5f9400";
    case hw::LinkFamily::kSocket:
      return "#e8740c";
    case hw::LinkFamily::kNetwork:
      return "#8250b8";
  }
  return "#000000";
}

/// Green (empty) through yellow to red (full).
std::string ramp(double u) {
  u = std::clamp(u, 0.0, 1.0);
  return fmt::format("hsl({:.0f},80%,{:.0f}%)", 120 * (1 - u), 38 + 8 * std::sin(u * 3.14159));
}

double stroke_of(double bytes_per_s) {
  double gbps = std::max(bytes_per_s / 1e9, 1e-3);
  return std::clamp(0.8 + 0.9 * std::log2(gbps / 4), 1.0, 9.0);
}

/// `text` split at spaces into lines of at most `width` characters (a longer word stays whole).
std::vector<std::string> wrap_words(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    if (!line.empty() && svg::length(line) + 1 + svg::length(word) > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

struct Box {
  int node = -1;
  double x = 0, y = 0, w = 0, h = 0;
  double head_h = 0;
  std::vector<std::string> lines;
  std::vector<std::vector<int>> rows;  // children, row by row
  bool has_gpu = false;
  // The links leaving each edge, as (link, node at the other end or -1); after placement sorted by
  // where the other end is, so lines to the left leave from the left.
  std::vector<std::pair<int, int>> top_ends, bottom_ends;
};

struct Layout {
  const topo::Chassis& c;
  std::vector<Box> box;
  std::vector<std::vector<int>> kids;

  explicit Layout(const topo::Chassis& ch) : c(ch), box(ch.nodes().size()), kids(box.size()) {
    for (const auto& n : c.nodes()) {
      box[n.index].node = n.index;
      box[n.index].lines = {n.name};
      for (auto& line : wrap_words(n.part->name, kWrapChars)) box[n.index].lines.push_back(line);
      if (!n.label.empty()) box[n.index].lines.push_back(n.label);
      if (n.pcie_parent >= 0) kids[n.pcie_parent].push_back(n.index);
    }
  }

  void measure(int n) {
    Box& b = box[n];
    double text_w = 0;
    for (const auto& l : b.lines) text_w = std::max(text_w, svg::text_width(l));
    b.has_gpu = c.node(n).kind == NodeKind::kGpu;
    if (kids[n].empty()) {
      b.w = std::max(text_w + 2 * kPad, 56.0);
      b.h = static_cast<double>(b.lines.size()) * kLinePx + 2 * kPad;
      b.head_h = b.h;
      return;
    }
    std::vector<int> order = kids[n];
    double area = 0, widest = 0;
    for (int k : order) {
      measure(k);
      b.has_gpu = b.has_gpu || box[k].has_gpu;
      area += box[k].w * box[k].h;
      widest = std::max(widest, box[k].w);
    }
    // What holds no GPU first, so the GPUs sit in the bottom rows and their NVLinks leave
    // downwards through empty space.
    std::stable_partition(order.begin(), order.end(), [&](int k) { return !box[k].has_gpu; });
    double target = std::max(widest, 2.2 * std::sqrt(area));
    b.rows.clear();
    double row_w = 0;
    for (int k : order) {
      bool gpu_row_starts = box[k].has_gpu && !b.rows.empty() && !box[b.rows.back().back()].has_gpu;
      // What holds GPUs stays on one row, so every GPU's bottom edge faces open space.
      bool full = !box[k].has_gpu && row_w + kHGap + box[k].w > target;
      if (b.rows.empty() || gpu_row_starts || full) {
        b.rows.emplace_back();
        row_w = box[k].w;
      } else {
        row_w += kHGap + box[k].w;
      }
      b.rows.back().push_back(k);
    }
    double inner_w = 0, inner_h = 0;
    for (const auto& row : b.rows) {
      double w = -kHGap, h = 0;
      for (int k : row) w += kHGap + box[k].w, h = std::max(h, box[k].h);
      inner_w = std::max(inner_w, w);
      inner_h += kStubPx + h;
    }
    b.head_h = static_cast<double>(b.lines.size()) * kLinePx + kPad;
    b.w = std::max(text_w, inner_w) + 2 * kPad;
    b.h = b.head_h + inner_h + kPad;
  }

  void place(int n, double x, double y) {
    Box& b = box[n];
    b.x = x, b.y = y;
    double cy = y + b.head_h;
    for (const auto& row : b.rows) {
      double w = -kHGap, h = 0;
      for (int k : row) w += kHGap + box[k].w, h = std::max(h, box[k].h);
      cy += kStubPx;
      double cx = x + (b.w - w) / 2;
      for (int k : row) {
        place(k, cx, cy);
        cx += box[k].w + kHGap;
      }
      cy += h;
    }
  }
};

/// A frame: one box of the chassis (or the whole network row).
struct Frame {
  double x = 0, y = 0, w = 0, h = 0;
  std::string title;
  std::vector<int> roots, fabric;
  double roots_y = 0;
};

struct End {
  double x, y;
};

End end_of(const Box& b, bool top, int link) {
  const auto& ends = top ? b.top_ends : b.bottom_ends;
  std::size_t slot = 0;
  while (slot < ends.size() && ends[slot].first != link) ++slot;
  double x = b.x + b.w * static_cast<double>(slot + 1) / static_cast<double>(ends.size() + 1);
  return {x, top ? b.y : b.y + b.h};
}

}  // namespace

std::string chassis_svg(const topo::Chassis& c, const DrawOptions& options) {
  Layout lay(c);
  const int boxes = c.boxes();
  std::vector<Frame> frames(boxes);
  std::vector<int> net;
  for (const auto& n : c.nodes()) {
    if (n.kind == NodeKind::kNetSwitch)
      net.push_back(n.index);
    else if (n.pcie_parent < 0)
      (n.kind == NodeKind::kCpu ? frames.at(n.box).roots : frames.at(n.box).fabric)
          .push_back(n.index);
  }
  // The kinds of links: which edges their ends leave from.
  enum class Route { kStub, kDown, kArcAbove, kArcBelow };
  std::vector<Route> route(c.links().size());
  auto in_band_row = [&](int n) {  // a node drawn in a row of its own below what it links to
    return c.node(n).pcie_parent < 0 && c.node(n).kind != NodeKind::kCpu;
  };
  for (const auto& l : c.links()) {
    Route r;
    if (c.node(l.a).pcie_uplink == l.index || c.node(l.b).pcie_uplink == l.index)
      r = Route::kStub;
    else if (c.node(l.a).kind == NodeKind::kCpu && c.node(l.b).kind == NodeKind::kCpu &&
             c.node(l.a).box == c.node(l.b).box)
      r = Route::kArcAbove;
    else if (in_band_row(l.a) != in_band_row(l.b) || (c.node(l.a).kind == NodeKind::kNetSwitch) !=
                                                         (c.node(l.b).kind == NodeKind::kNetSwitch))
      r = Route::kDown;
    else
      r = Route::kArcBelow;
    route[l.index] = r;
  }
  // Which network switches sit a level lower (linked to no node inside a box): the spine.
  std::vector<int> net_level(c.nodes().size(), 0);
  for (int s : net) {
    bool touches_box = false;
    for (int li : c.incident(s))
      touches_box = touches_box || c.node(c.link(li).other(s)).kind != NodeKind::kNetSwitch;
    net_level[s] = touches_box ? 0 : 1;
  }
  for (const auto& l : c.links()) {
    Route r = route[l.index];
    int upper = l.a, lower = l.b;
    auto below = [&](int x, int y) {  // x drawn below y
      bool xn = c.node(x).kind == NodeKind::kNetSwitch, yn = c.node(y).kind == NodeKind::kNetSwitch;
      if (xn != yn) return xn;
      if (xn) return net_level[x] > net_level[y];
      return in_band_row(x) && !in_band_row(y);
    };
    if (below(upper, lower)) std::swap(upper, lower);
    if (r == Route::kStub)
      lay.box[c.node(l.a).pcie_uplink == l.index ? l.a : l.b].top_ends.push_back({l.index, -1});
    if (r == Route::kDown) {
      if (c.node(upper).kind == NodeKind::kNetSwitch && net_level[upper] == net_level[lower])
        route[l.index] = r = Route::kArcBelow;
      else
        lay.box[upper].bottom_ends.push_back({l.index, lower}),
            lay.box[lower].top_ends.push_back({l.index, upper});
    }
    if (r == Route::kArcBelow)
      lay.box[l.a].bottom_ends.push_back({l.index, l.b}),
          lay.box[l.b].bottom_ends.push_back({l.index, l.a});
    if (r == Route::kArcAbove)
      lay.box[l.a].top_ends.push_back({l.index, l.b}),
          lay.box[l.b].top_ends.push_back({l.index, l.a});
  }
  bool any_arc_above = false, any_arc_below = false;
  for (const auto& l : c.links()) {
    any_arc_above = any_arc_above || route[l.index] == Route::kArcAbove;
    any_arc_below = any_arc_below || route[l.index] == Route::kArcBelow;
  }
  // Room under the sockets for direct links (an NVLink mesh) to arc through, deeper the further
  // they reach.
  const double below_band = any_arc_below ? 3 * kBandPx : kBandPx;
  const double fabric_gap = std::max(kFabricGap, below_band);

  // Measure each frame: title, a row of sockets, a row of NVSwitches and other parts.
  double frame_w = 0, frame_h = 0;
  for (int k = 0; k < boxes; ++k) {
    Frame& f = frames[k];
    f.title = boxes > 1 ? fmt::format("box {}: {}", k, c.name()) : c.name();
    double row_w = -kHGap, row_h = 0, fab_w = -kHGap, fab_h = 0;
    for (int r : f.roots) {
      lay.measure(r);
      row_w += kHGap + lay.box[r].w, row_h = std::max(row_h, lay.box[r].h);
    }
    for (int n : f.fabric) {
      lay.measure(n);
      fab_w += kHGap + lay.box[n].w, fab_h = std::max(fab_h, lay.box[n].h);
    }
    f.w = std::max({svg::text_width(f.title), row_w, fab_w}) + 2 * kPad;
    f.h = kLinePx + kPad + (any_arc_above ? kBandPx : kPad) + row_h +
          (f.fabric.empty() ? below_band : fabric_gap + fab_h + kPad);
    frame_w = std::max(frame_w, f.w), frame_h = std::max(frame_h, f.h);
  }
  // Frames in a grid about twice as wide as tall.
  int cols = std::max(1, static_cast<int>(std::lround(std::sqrt(boxes * 1.6 * frame_h / frame_w))));
  cols = std::min(cols, boxes);
  int grid_rows = (boxes + cols - 1) / cols;
  std::vector<std::string> heading = {
      fmt::format("{}: {} GPUs, {} links", c.name(), c.gpus().size(), c.links().size())};
  if (!c.description().empty()) heading.push_back(c.description());
  if (!options.subtitle.empty()) heading.push_back(options.subtitle);
  double top = kMargin + static_cast<double>(heading.size()) * kLinePx + 10;
  for (int k = 0; k < boxes; ++k) {
    Frame& f = frames[k];
    f.w = frame_w, f.h = frame_h;
    f.x = kMargin + (k % cols) * (frame_w + kFrameGap);
    f.y = top + (k / cols) * (frame_h + kFrameGap);
    double row_w = -kHGap;
    for (int r : f.roots) row_w += kHGap + lay.box[r].w;
    double x = f.x + (f.w - row_w) / 2;
    f.roots_y = f.y + kLinePx + kPad + (any_arc_above ? kBandPx : kPad);
    double row_h = 0;
    for (int r : f.roots) {
      lay.place(r, x, f.roots_y);
      x += lay.box[r].w + kHGap;
      row_h = std::max(row_h, lay.box[r].h);
    }
    double fab_w = -kHGap;
    for (int n : f.fabric) fab_w += kHGap + lay.box[n].w;
    x = f.x + (f.w - fab_w) / 2;
    for (int n : f.fabric) {
      lay.place(n, x, f.roots_y + row_h + fabric_gap);
      x += lay.box[n].w + kHGap;
    }
  }
  // With a network, each column of frames gets a channel on its right for the NIC links.
  double width = kMargin + cols * (frame_w + kFrameGap) - (net.empty() ? kFrameGap : 0) + kMargin;
  double y = top + grid_rows * (frame_h + kFrameGap) - kFrameGap;
  // Network switches: level by level below the frames.
  for (int level = 0; level <= 1; ++level) {
    double row_w = -kHGap, row_h = 0;
    std::vector<int> row;
    for (int s : net)
      if (net_level[s] == level) {
        lay.measure(s);
        row.push_back(s);
        row_w += kHGap + lay.box[s].w, row_h = std::max(row_h, lay.box[s].h);
      }
    if (row.empty()) continue;
    y += kFabricGap;
    width = std::max(width, row_w + 2 * kMargin);
    double x = (width - row_w) / 2;
    for (int s : row) {
      lay.place(s, x, y);
      x += lay.box[s].w + kHGap;
    }
    y += row_h;
  }

  // Links: each edge's ends ordered by where the other end sits.
  for (auto& b : lay.box)
    for (auto* ends : {&b.top_ends, &b.bottom_ends})
      std::stable_sort(ends->begin(), ends->end(), [&](const auto& x, const auto& y) {
        auto centre = [&](int n) { return n < 0 ? 0.0 : lay.box[n].x + lay.box[n].w / 2; };
        return centre(x.second) < centre(y.second);
      });
  double widest_arc = 1;
  for (const auto& l : c.links())
    if (route[l.index] == Route::kArcBelow || route[l.index] == Route::kArcAbove)
      widest_arc = std::max(widest_arc, std::abs(lay.box[l.a].x - lay.box[l.b].x));
  std::vector<int> net_slot(boxes, 0);  // NIC links routed so far, per frame
  double net_top = y;
  for (int n : net) net_top = std::min(net_top, lay.box[n].y);
  svg::Writer links;
  std::map<std::string, std::pair<const hw::LinkTech*, double>> techs;  // id -> widest
  bool any_below_design = false;
  for (const auto& l : c.links()) {
    Box& a = lay.box[l.a];
    Box& b = lay.box[l.b];
    std::string d;
    switch (route[l.index]) {
      case Route::kStub: {
        Box& child = c.node(l.a).pcie_uplink == l.index ? a : b;
        End e = end_of(child, true, l.index);
        d = fmt::format("M{:.1f} {:.1f}V{:.1f}", e.x, e.y, e.y - kStubPx);
        break;
      }
      case Route::kDown: {
        bool a_upper = a.y + a.h <= b.y;
        int upper = a_upper ? l.a : l.b, lower = a_upper ? l.b : l.a;
        End e1 = end_of(lay.box[upper], false, l.index), e2 = end_of(lay.box[lower], true, l.index);
        if (c.node(lower).kind == NodeKind::kNetSwitch &&
            c.node(upper).kind != NodeKind::kNetSwitch) {
          // Out of the bottom of its frame, along the gap under it, down the channel right of its
          // column, to the switch: never across another frame.
          const Frame& f = frames.at(c.node(upper).box);
          int slot = std::min(net_slot[c.node(upper).box]++, 9);
          double under = f.y + f.h + 3 + 2 * slot, channel = f.x + f.w + 3 + 2 * slot;
          d = fmt::format("M{:.1f} {:.1f}V{:.1f}H{:.1f}V{:.1f}L{:.1f} {:.1f}", e1.x, e1.y, under,
                          channel, net_top - 12, e2.x, e2.y);
        } else {
          d = fmt::format("M{:.1f} {:.1f}L{:.1f} {:.1f}", e1.x, e1.y, e2.x, e2.y);
        }
        break;
      }
      case Route::kArcAbove:
      case Route::kArcBelow: {
        bool above = route[l.index] == Route::kArcAbove;
        End e1 = end_of(a, above, l.index), e2 = end_of(b, above, l.index);
        double reach = (above ? kBandPx : below_band) - 6;
        double depth = 8 + (reach - 8) * std::min(1.0, std::abs(a.x - b.x) / widest_arc);
        double apex = above ? std::min(e1.y, e2.y) - depth : std::max(e1.y, e2.y) + depth;
        // A quadratic Bezier peaks halfway to its control point.
        double ctrl = 2 * apex - (e1.y + e2.y) / 2;
        d = fmt::format("M{:.1f} {:.1f}Q{:.1f} {:.1f} {:.1f} {:.1f}", e1.x, e1.y, (e1.x + e2.x) / 2,
                        ctrl, e2.x, e2.y);
        break;
      }
    }
    double rate = l.line_bytes_per_s();
    auto& t = techs[l.tech->id];
    t.first = l.tech, t.second = std::max(t.second, rate);
    bool used = static_cast<std::size_t>(l.index) < options.utilisation.size();
    double u = used ? options.utilisation[l.index] : -1;
    std::string colour = options.utilisation.empty() ? family_colour(l.family())
                         : u < 0                     ? "#b8b8b8"
                                                     : ramp(u);
    any_below_design = any_below_design || l.below_design();
    std::string title = fmt::format("{} - {}: {} x{}, {:.1f} GB/s per direction", c.node(l.a).name,
                                    c.node(l.b).name, l.tech->name, l.width, rate / 1e9);
    if (l.below_design()) title += " (trained below its design)";
    if (!options.utilisation.empty())
      title += u < 0 ? ", carried nothing" : fmt::format(", {:.0f}% used", 100 * u);
    links.open("path", {{"class", "link"},
                        {"data-link", std::to_string(l.index)},
                        {"data-tech", l.tech->id},
                        {"data-a", c.node(l.a).name},
                        {"data-b", c.node(l.b).name},
                        {"d", d},
                        {"fill", "none"},
                        {"stroke", colour},
                        {"stroke-width", fmt::format("{:.1f}", stroke_of(rate))},
                        {"stroke-linecap", "round"},
                        {"stroke-dasharray", l.below_design() ? "5 3" : ""},
                        {"opacity", "0.85"}});
    links.element("title", {}, title);
    links.close("path");
  }

  // Legend.
  svg::Writer legend;
  double ly = y + kFrameGap;
  std::vector<std::string> entries;
  double legend_w = 0, legend_h = kPad + kLinePx + 2;
  for (const auto& [id, t] : techs)
    entries.push_back(
        fmt::format("{}: up to {:.1f} GB/s per direction", t.first->name, t.second / 1e9));
  if (any_below_design) entries.push_back("dashed: trained below its design");
  if (!options.utilisation.empty())
    entries.push_back("colour: share of capacity used (green 0%, red 100%); grey: unused");
  for (const auto& e : entries) legend_w = std::max(legend_w, svg::text_width(e) + 44);
  legend_w = std::max(legend_w, svg::text_width("links (stroke width: bandwidth)")) + 2 * kPad;
  legend_h += static_cast<double>(entries.size()) * (kLinePx + 2) + kPad;
  legend.open("g", {{"class", "legend"}});
  legend.element("rect", {{"class", "legend-box"},
                          {"x", svg::num(kMargin)},
                          {"y", svg::num(ly)},
                          {"width", svg::num(legend_w)},
                          {"height", svg::num(legend_h)},
                          {"fill", "#ffffff"},
                          {"stroke", "#999999"}});
  legend.text(kMargin + kPad, ly + kPad + 10, "links (stroke width: bandwidth)", "bold");
  double ey = ly + kPad + kLinePx + 2;
  std::size_t i = 0;
  for (const auto& [id, t] : techs) {
    std::string colour = options.utilisation.empty() ? family_colour(t.first->family) : "#777777";
    legend.element("line", {{"x1", svg::num(kMargin + kPad)},
                            {"y1", svg::num(ey + 6)},
                            {"x2", svg::num(kMargin + kPad + 32)},
                            {"y2", svg::num(ey + 6)},
                            {"stroke", colour},
                            {"stroke-width", fmt::format("{:.1f}", stroke_of(t.second))}});
    legend.text(kMargin + kPad + 40, ey + 10, entries[i++]);
    ey += kLinePx + 2;
  }
  for (; i < entries.size(); ++i, ey += kLinePx + 2) {
    if (entries[i].rfind("colour:", 0) == 0)  // the scale: 0%, 25%, ... 100%
      for (int k = 0; k <= 4; ++k)
        legend.element("rect", {{"x", svg::num(kMargin + kPad + k * 6.4)},
                                {"y", svg::num(ey + 2)},
                                {"width", "6.4"},
                                {"height", "8"},
                                {"fill", ramp(k / 4.0)}});
    legend.text(kMargin + kPad + 40, ey + 10, entries[i]);
  }
  legend.close("g");
  width = std::max(width, legend_w + 2 * kMargin);
  for (const auto& h : heading) width = std::max(width, svg::text_width(h) + 2 * kMargin);
  double height = ly + legend_h + kMargin;

  // Boxes: frames, then each node (parents before children), then every label on top.
  svg::Writer out;
  int gpus = static_cast<int>(c.gpus().size());
  out.raw(R"(<?xml version="1.0" encoding="UTF-8"?>)"
          "\n");
  out.open("svg", {{"xmlns", "http://www.w3.org/2000/svg"},
                   {"class", "linkwise-drawing"},
                   {"width", svg::num(width)},
                   {"height", svg::num(height)},
                   {"viewBox", fmt::format("0 0 {} {}", svg::num(width), svg::num(height))},
                   {"font-family", "DejaVu Sans Mono,monospace"},
                   {"font-size", "11"},
                   {"data-gpus", std::to_string(gpus)},
                   {"data-links", std::to_string(c.links().size())}});
  out.element("rect", {{"class", "background"},
                       {"x", "0"},
                       {"y", "0"},
                       {"width", svg::num(width)},
                       {"height", svg::num(height)},
                       {"fill", "#ffffff"}});
  for (std::size_t i = 0; i < heading.size(); ++i)
    out.text(kMargin, kMargin + 10 + static_cast<double>(i) * kLinePx, heading[i],
             i == 0 ? "bold" : "");
  svg::Writer labels;
  for (const auto& f : frames) {
    out.element("rect", {{"class", "frame"},
                         {"x", svg::num(f.x)},
                         {"y", svg::num(f.y)},
                         {"width", svg::num(f.w)},
                         {"height", svg::num(f.h)},
                         {"rx", "6"},
                         {"fill", "#fbfbfb"},
                         {"stroke", "#888888"},
                         {"stroke-dasharray", "6 3"}});
    labels.text(f.x + kPad, f.y + kPad + 10, f.title, "bold");
  }
  std::vector<int> order, stack;  // every box with no parent, then depth first: parents first
  for (const auto& f : frames) {
    stack.insert(stack.end(), f.roots.begin(), f.roots.end());
    stack.insert(stack.end(), f.fabric.begin(), f.fabric.end());
  }
  stack.insert(stack.end(), net.begin(), net.end());
  std::reverse(stack.begin(), stack.end());
  while (!stack.empty()) {
    int n = stack.back();
    stack.pop_back();
    order.push_back(n);
    for (auto it = lay.kids[n].rbegin(); it != lay.kids[n].rend(); ++it) stack.push_back(*it);
  }
  for (int n : order) {
    const auto& node = c.node(n);
    const Box& b = lay.box[n];
    out.open(
        "g",
        {{"class", "node"}, {"data-node", node.name}, {"data-kind", hw::to_string(node.kind)}});
    out.element("rect", {{"x", svg::num(b.x)},
                         {"y", svg::num(b.y)},
                         {"width", svg::num(b.w)},
                         {"height", svg::num(b.h)},
                         {"rx", "3"},
                         {"fill", fill_of(node.kind)},
                         {"stroke", node.kind == NodeKind::kRetimer ? "#c08000" : "#555555"},
                         {"stroke-width", node.kind == NodeKind::kRetimer ? "1.5" : "1"}});
    std::string title = fmt::format("{} ({}): {}", c.display_name(n), node.name, node.part->name);
    if (!node.pci_address.empty()) title += ", " + node.pci_address;
    out.element("title", {}, title);
    out.close("g");
    for (std::size_t i = 0; i < b.lines.size(); ++i)
      labels.text(b.x + kPad, b.y + kPad + 10 + static_cast<double>(i) * kLinePx, b.lines[i],
                  i == 0 ? "bold" : "", node.name);
  }
  out.raw(links.str());
  // Labels last, each on a white halo, so no line hides one.
  out.open("g", {{"class", "labels"},
                 {"stroke", "#ffffff"},
                 {"stroke-width", "3"},
                 {"stroke-linejoin", "round"},
                 {"paint-order", "stroke"}});
  out.raw(labels.str());
  out.close("g");
  out.raw(legend.str());
  out.close("svg");
  return out.str();
}

void write_png_atomic(const std::string& svg, const std::string& path) {
  std::string tool;
  const char* env_path = std::getenv("PATH");
  std::string dirs = env_path ? env_path : "/usr/bin:/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/rsvg-convert";
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) {
      tool = candidate;
      break;
    }
    start = end + 1;
  }
  if (tool.empty())
    throw RuntimeError(
        "PNG output needs rsvg-convert (Debian package librsvg2-bin: apt-get install "
        "librsvg2-bin); write .svg instead");
  char tmp[] = "/tmp/linkwise-drawing-XXXXXX";
  int fd = ::mkstemp(tmp);
  if (fd < 0) throw RuntimeError("cannot create a temporary file for the PNG conversion");
  bool ok = ::write(fd, svg.data(), svg.size()) == static_cast<ssize_t>(svg.size());
  ::close(fd);
  std::string png;
  if (ok) {
    std::string cmd = fmt::format("'{}' -f png '{}'", tool, tmp);
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
      char buf[65536];
      std::size_t got;
      while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) png.append(buf, got);
      ok = ::pclose(p) == 0;
    } else {
      ok = false;
    }
  }
  ::unlink(tmp);
  if (!ok || png.size() < 8)
    throw RuntimeError(fmt::format("rsvg-convert could not render '{}'", path));
  write_file_atomic(path, png);
}

void write_drawing(const std::string& svg, const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char ch) { return std::tolower(ch); });
  if (ext == ".svg")
    write_file_atomic(path, svg);
  else if (ext == ".png")
    write_png_atomic(svg, path);
  else
    throw InputError(fmt::format("-o '{}': a drawing is written as .svg or .png, not '{}'", path,
                                 ext.empty() ? "(no extension)" : ext));
}

}  // namespace linkwise::report
