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

#include "drawing_layout.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"
#include "linkwise/util/text.h"
#include "svg.h"

namespace linkwise::report {

namespace {

using topo::NodeKind;

using namespace layout;

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

/// The path of one link, as its route says.
std::string link_path(const Scene& s, const topo::Link& l, std::vector<int>& net_slot) {
  const auto& c = s.c;
  switch (s.route[l.index]) {
    case Route::kStub: {
      int child = c.node(l.a).pcie_uplink == l.index ? l.a : l.b;
      End e = s.end_of(child, true, l.index);
      const Box& parent = s.box[c.node(child).pcie_parent];
      const auto& first = parent.rows.front();
      if (std::find(first.begin(), first.end(), child) != first.end())
        return fmt::format("M{:.1f} {:.1f}V{:.1f}", e.x, e.y, e.y - kStubPx);
      // A child below the first row: up into the gap over its row, left to the parent's edge and
      // up its inside, so the line never seems to end at the box above.
      return fmt::format("M{:.1f} {:.1f}V{:.1f}H{:.1f}V{:.1f}", e.x, e.y, e.y - kStubPx / 2,
                         parent.x + kPad / 2, parent.y + parent.head_h);
    }
    case Route::kDown: {
      int upper = s.box[l.a].y + s.box[l.a].h <= s.box[l.b].y ? l.a : l.b, lower = l.other(upper);
      End e1 = s.end_of(upper, false, l.index), e2 = s.end_of(lower, true, l.index);
      if (c.node(lower).kind != NodeKind::kNetSwitch || c.node(upper).kind == NodeKind::kNetSwitch)
        return fmt::format("M{:.1f} {:.1f}L{:.1f} {:.1f}", e1.x, e1.y, e2.x, e2.y);
      // A NIC's network link: out of the bottom of its frame, along the gap under it, down the
      // channel right of its column, to the switch: never across another frame.
      const Frame& f = s.frames.at(c.node(upper).box);
      int slot = std::min(net_slot[c.node(upper).box]++, 9);
      double under = f.y + f.h + 3 + 2 * slot, channel = f.x + f.w + 3 + 2 * slot;
      return fmt::format("M{:.1f} {:.1f}V{:.1f}H{:.1f}V{:.1f}L{:.1f} {:.1f}", e1.x, e1.y, under,
                         channel, s.net_top - 12, e2.x, e2.y);
    }
    case Route::kArcAbove:
    case Route::kArcBelow: {
      bool above = s.route[l.index] == Route::kArcAbove;
      End e1 = s.end_of(l.a, above, l.index), e2 = s.end_of(l.b, above, l.index);
      double reach = (above ? kBandPx : s.below_band) - 6;
      double depth =
          8 + (reach - 8) * std::min(1.0, std::abs(s.box[l.a].x - s.box[l.b].x) / s.widest_arc);
      double apex = above ? std::min(e1.y, e2.y) - depth : std::max(e1.y, e2.y) + depth;
      double ctrl = 2 * apex - (e1.y + e2.y) / 2;  // a quadratic Bezier peaks halfway to it
      return fmt::format("M{:.1f} {:.1f}Q{:.1f} {:.1f} {:.1f} {:.1f}", e1.x, e1.y,
                         (e1.x + e2.x) / 2, ctrl, e2.x, e2.y);
    }
  }
  return "";
}

/// Every link, one <path class="link"> each.
std::string links_svg(const Scene& s, const DrawOptions& options) {
  const auto& c = s.c;
  std::vector<int> net_slot(s.frames.size(), 0);  // NIC links routed so far, per frame
  svg::Writer links;
  for (const auto& l : c.links()) {
    double rate = l.line_bytes_per_s();
    bool known = static_cast<std::size_t>(l.index) < options.utilisation.size();
    double u = known ? options.utilisation[l.index] : -1;
    std::string colour = options.utilisation.empty() ? family_colour(l.family())
                         : u < 0                     ? "#b8b8b8"
                                                     : ramp(u);
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
                        {"d", link_path(s, l, net_slot)},
                        {"fill", "none"},
                        {"stroke", colour},
                        {"stroke-width", fmt::format("{:.1f}", stroke_of(rate))},
                        {"stroke-linecap", "round"},
                        {"stroke-dasharray", l.below_design() ? "5 3" : ""},
                        {"opacity", "0.85"}});
    links.element("title", {}, title);
    links.close("path");
  }
  return links.str();
}

struct Legend {
  std::string svg;
  double w = 0, h = 0;
};

/// Each technology with a sample of its widest link, then what dashes and colours mean.
Legend legend_svg(const topo::Chassis& c, const DrawOptions& options, double y) {
  std::map<std::string, std::pair<const hw::LinkTech*, double>> techs;  // id -> widest
  bool any_below_design = false;
  for (const auto& l : c.links()) {
    auto& t = techs[l.tech->id];
    t.first = l.tech, t.second = std::max(t.second, l.line_bytes_per_s());
    any_below_design = any_below_design || l.below_design();
  }
  std::vector<std::string> entries;
  for (const auto& [id, t] : techs)
    entries.push_back(
        fmt::format("{}: up to {:.1f} GB/s per direction", t.first->name, t.second / 1e9));
  if (any_below_design) entries.push_back("dashed: trained below its design");
  if (!options.utilisation.empty())
    entries.push_back("colour: share of capacity used (green 0%, red 100%); grey: unused");
  const std::string heading = "links (stroke width: bandwidth)";
  Legend out;
  out.w = svg::text_width(heading);
  for (const auto& e : entries) out.w = std::max(out.w, svg::text_width(e) + 44);
  out.w += 2 * kPad;
  out.h = kPad + kLinePx + 2 + static_cast<double>(entries.size()) * (kLinePx + 2) + kPad;
  svg::Writer w;
  w.open("g", {{"class", "legend"}});
  w.element("rect", {{"class", "legend-box"},
                     {"x", svg::num(kMargin)},
                     {"y", svg::num(y)},
                     {"width", svg::num(out.w)},
                     {"height", svg::num(out.h)},
                     {"fill", "#ffffff"},
                     {"stroke", "#999999"}});
  w.text(kMargin + kPad, y + kPad + 10, heading, "bold");
  double ey = y + kPad + kLinePx + 2;
  auto tech = techs.begin();
  for (const auto& e : entries) {
    if (tech != techs.end()) {  // a sample line
      std::string colour =
          options.utilisation.empty() ? family_colour(tech->second.first->family) : "#777777";
      w.element("line", {{"x1", svg::num(kMargin + kPad)},
                         {"y1", svg::num(ey + 6)},
                         {"x2", svg::num(kMargin + kPad + 32)},
                         {"y2", svg::num(ey + 6)},
                         {"stroke", colour},
                         {"stroke-width", fmt::format("{:.1f}", stroke_of(tech->second.second))}});
      ++tech;
    } else if (e.rfind("colour:", 0) == 0) {  // the scale: 0%, 25%, ... 100%
      for (int k = 0; k <= 4; ++k)
        w.element("rect", {{"x", svg::num(kMargin + kPad + k * 6.4)},
                           {"y", svg::num(ey + 2)},
                           {"width", "6.4"},
                           {"height", "8"},
                           {"fill", ramp(k / 4.0)}});
    }
    w.text(kMargin + kPad + 40, ey + 10, e);
    ey += kLinePx + 2;
  }
  w.close("g");
  out.svg = w.str();
  return out;
}

/// Frames and node boxes into `out`, their labels into `labels`.
void boxes_svg(const Scene& s, svg::Writer& out, svg::Writer& labels) {
  for (const auto& f : s.frames) {
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
  for (int n : s.drawing_order()) {
    const auto& node = s.c.node(n);
    const Box& b = s.box[n];
    bool retimer = node.kind == NodeKind::kRetimer;
    out.open(
        "g",
        {{"class", "node"}, {"data-node", node.name}, {"data-kind", hw::to_string(node.kind)}});
    out.element("rect", {{"x", svg::num(b.x)},
                         {"y", svg::num(b.y)},
                         {"width", svg::num(b.w)},
                         {"height", svg::num(b.h)},
                         {"rx", "3"},
                         {"fill", fill_of(node.kind)},
                         {"stroke", retimer ? "#c08000" : "#555555"},
                         {"stroke-width", retimer ? "1.5" : "1"}});
    std::string title = fmt::format("{} ({}): {}", s.c.display_name(n), node.name, node.part->name);
    if (!node.pci_address.empty()) title += ", " + node.pci_address;
    out.element("title", {}, title);
    out.close("g");
    for (std::size_t i = 0; i < b.lines.size(); ++i)
      labels.text(b.x + kPad, b.y + kPad + 10 + static_cast<double>(i) * kLinePx, b.lines[i],
                  i == 0 ? "bold" : "", node.name);
  }
}

}  // namespace

std::string chassis_svg(const topo::Chassis& c, const DrawOptions& options) {
  std::vector<std::string> heading = {
      fmt::format("{}: {} GPUs, {} links", c.name(), c.gpus().size(), c.links().size())};
  if (!c.description().empty()) heading.push_back(c.description());
  if (!options.subtitle.empty()) heading.push_back(options.subtitle);
  Scene s(c, heading);
  Legend legend = legend_svg(c, options, s.bottom + kFrameGap);
  double width = std::max(s.width, legend.w + 2 * kMargin);
  double height = s.bottom + kFrameGap + legend.h + kMargin;
  svg::Writer out, labels;
  out.raw("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  out.open("svg", {{"xmlns", "http://www.w3.org/2000/svg"},
                   {"class", "linkwise-drawing"},
                   {"width", svg::num(width)},
                   {"height", svg::num(height)},
                   {"viewBox", fmt::format("0 0 {} {}", svg::num(width), svg::num(height))},
                   {"font-family", "DejaVu Sans Mono,monospace"},
                   {"font-size", "11"},
                   {"data-gpus", std::to_string(c.gpus().size())},
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
  // Boxes, then links over them, then every label on a white halo so no line hides one.
  boxes_svg(s, out, labels);
  out.raw(links_svg(s, options));
  out.open("g", {{"class", "labels"},
                 {"stroke", "#ffffff"},
                 {"stroke-width", "3"},
                 {"stroke-linejoin", "round"},
                 {"paint-order", "stroke"}});
  out.raw(labels.str());
  out.close("g");
  out.raw(legend.svg);
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
