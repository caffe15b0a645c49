#include "drawing_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "linkwise/topo/chassis.h"
#include "svg.h"

namespace linkwise::report::layout {

using topo::NodeKind;

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

Scene::Scene(const topo::Chassis& chassis, std::vector<std::string> head)
    : c(chassis),
      box(chassis.nodes().size()),
      kids(box.size()),
      frames(chassis.boxes()),
      net_level(box.size(), 0),
      route(chassis.links().size()),
      heading(std::move(head)) {
  for (const auto& n : c.nodes()) {
    box[n.index].node = n.index;
    box[n.index].lines = {n.name};
    for (auto& line : wrap_words(n.part->name, kWrapChars)) box[n.index].lines.push_back(line);
    if (!n.label.empty()) box[n.index].lines.push_back(n.label);
    if (n.pcie_parent >= 0)
      kids[n.pcie_parent].push_back(n.index);
    else if (n.kind == NodeKind::kNetSwitch)
      net.push_back(n.index);
    else
      (n.kind == NodeKind::kCpu ? frames.at(n.box).roots : frames.at(n.box).fabric)
          .push_back(n.index);
  }
  route_links();
  place_frames();
  place_network();
  order_ends();
}

void Scene::measure(int n) {
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

void Scene::place(int n, double x, double y) {
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
bool Scene::in_band_row(int n) const {  // drawn in a row of its own below what it links to
  return c.node(n).pcie_parent < 0 && c.node(n).kind != NodeKind::kCpu;
}

void Scene::route_links() {
  auto is_net = [&](int n) { return c.node(n).kind == NodeKind::kNetSwitch; };
  // Network switches linked to no node inside a box sit a level lower: the spine.
  for (int s : net) {
    bool touches_box = false;
    for (int li : c.incident(s)) touches_box = touches_box || !is_net(c.link(li).other(s));
    net_level[s] = touches_box ? 0 : 1;
  }
  auto below = [&](int x, int y) {  // x drawn in a row below y
    if (is_net(x) != is_net(y)) return is_net(x);
    if (is_net(x)) return net_level[x] > net_level[y];
    return in_band_row(x) && !in_band_row(y);
  };
  bool any_arc_below = false;
  for (const auto& l : c.links()) {
    const auto &a = c.node(l.a), &b = c.node(l.b);
    Route r = Route::kArcBelow;
    if (a.pcie_uplink == l.index || b.pcie_uplink == l.index)
      r = Route::kStub;
    else if (a.kind == NodeKind::kCpu && b.kind == NodeKind::kCpu && a.box == b.box)
      r = Route::kArcAbove;
    else if (below(l.a, l.b) || below(l.b, l.a))
      r = Route::kDown;
    route[l.index] = r;
    int upper = below(l.a, l.b) ? l.b : l.a, lower = l.other(upper);
    if (r == Route::kStub)
      box[a.pcie_uplink == l.index ? l.a : l.b].top_ends.push_back({l.index, -1});
    if (r == Route::kDown)
      box[upper].bottom_ends.push_back({l.index, lower}),
          box[lower].top_ends.push_back({l.index, upper});
    bool above = r == Route::kArcAbove;
    if (above || r == Route::kArcBelow) {
      (above ? box[l.a].top_ends : box[l.a].bottom_ends).push_back({l.index, l.b});
      (above ? box[l.b].top_ends : box[l.b].bottom_ends).push_back({l.index, l.a});
    }
    any_arc_above = any_arc_above || above;
    any_arc_below = any_arc_below || r == Route::kArcBelow;
  }
  // Room under the sockets for direct links (an NVLink mesh) to arc through, deeper the further
  // they reach.
  below_band = any_arc_below ? 3 * kBandPx : kBandPx;
}

void Scene::place_frames() {
  const int boxes = static_cast<int>(frames.size());
  const double fabric_gap = std::max(kFabricGap, below_band);
  auto row_size = [&](const std::vector<int>& row) {  // width and height of a row of boxes
    double w = -kHGap, h = 0;
    for (int n : row) w += kHGap + box[n].w, h = std::max(h, box[n].h);
    return std::pair{w, h};
  };
  // Each frame: its title, a row of sockets, a row of NVSwitches and other parts.
  double frame_w = 0, frame_h = 0;
  for (int k = 0; k < boxes; ++k) {
    Frame& f = frames[k];
    f.title = boxes > 1 ? fmt::format("box {}: {}", k, c.name()) : c.name();
    for (int n : f.roots) measure(n);
    for (int n : f.fabric) measure(n);
    auto [row_w, row_h] = row_size(f.roots);
    auto [fab_w, fab_h] = row_size(f.fabric);
    f.w = std::max({svg::text_width(f.title), row_w, fab_w}) + 2 * kPad;
    f.h = kLinePx + kPad + (any_arc_above ? kBandPx : kPad) + row_h +
          (f.fabric.empty() ? below_band : fabric_gap + fab_h + kPad);
    frame_w = std::max(frame_w, f.w), frame_h = std::max(frame_h, f.h);
  }
  // Frames in a grid about 1.6 times as wide as tall.
  int cols = static_cast<int>(std::lround(std::sqrt(boxes * 1.6 * frame_h / frame_w)));
  cols = std::clamp(cols, 1, boxes);
  int grid_rows = (boxes + cols - 1) / cols;
  double top = kMargin + static_cast<double>(heading.size()) * kLinePx + 10;
  for (int k = 0; k < boxes; ++k) {
    Frame& f = frames[k];
    f.w = frame_w, f.h = frame_h;
    f.x = kMargin + (k % cols) * (frame_w + kFrameGap);
    f.y = top + (k / cols) * (frame_h + kFrameGap);
    f.roots_y = f.y + kLinePx + kPad + (any_arc_above ? kBandPx : kPad);
    auto [row_w, row_h] = row_size(f.roots);
    double x = f.x + (f.w - row_w) / 2;
    for (int n : f.roots) place(n, x, f.roots_y), x += box[n].w + kHGap;
    x = f.x + (f.w - row_size(f.fabric).first) / 2;
    for (int n : f.fabric) place(n, x, f.roots_y + row_h + fabric_gap), x += box[n].w + kHGap;
  }
  // With a network, each column of frames gets a channel on its right for the NIC links.
  width = kMargin + cols * (frame_w + kFrameGap) - (net.empty() ? kFrameGap : 0) + kMargin;
  bottom = top + grid_rows * (frame_h + kFrameGap) - kFrameGap;
  for (const auto& h : heading) width = std::max(width, svg::text_width(h) + 2 * kMargin);
}

void Scene::place_network() {
  net_top = bottom;
  bool first = true;
  for (int level = 0; level <= 1; ++level) {
    double row_w = -kHGap, row_h = 0;
    std::vector<int> row;
    for (int s : net)
      if (net_level[s] == level) {
        measure(s);
        row.push_back(s);
        row_w += kHGap + box[s].w, row_h = std::max(row_h, box[s].h);
      }
    if (row.empty()) continue;
    bottom += kFabricGap;
    if (first) net_top = bottom, first = false;
    width = std::max(width, row_w + 2 * kMargin);
    double x = (width - row_w) / 2;
    for (int s : row) place(s, x, bottom), x += box[s].w + kHGap;
    bottom += row_h;
  }
}

void Scene::order_ends() {
  auto centre = [&](int n) { return n < 0 ? 0.0 : box[n].x + box[n].w / 2; };
  for (auto& b : box)
    for (auto* ends : {&b.top_ends, &b.bottom_ends})
      std::stable_sort(ends->begin(), ends->end(), [&](const auto& x, const auto& y) {
        return centre(x.second) < centre(y.second);
      });
  for (const auto& l : c.links())
    if (route[l.index] == Route::kArcBelow || route[l.index] == Route::kArcAbove)
      widest_arc = std::max(widest_arc, std::abs(box[l.a].x - box[l.b].x));
}

End Scene::end_of(int node, bool top, int link) const {
  const Box& b = box[node];
  const auto& ends = top ? b.top_ends : b.bottom_ends;
  std::size_t slot = 0;
  while (slot < ends.size() && ends[slot].first != link) ++slot;
  double x = b.x + b.w * static_cast<double>(slot + 1) / static_cast<double>(ends.size() + 1);
  return {x, top ? b.y : b.y + b.h};
}

std::vector<int> Scene::drawing_order() const {
  std::vector<int> order, stack;  // every box with no parent, then depth first
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
    for (auto it = kids[n].rbegin(); it != kids[n].rend(); ++it) stack.push_back(*it);
  }
  return order;
}

}  // namespace linkwise::report::layout
