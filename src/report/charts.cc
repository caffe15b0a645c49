#include "charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "linkwise/util/text.h"
#include "svg.h"

namespace linkwise::report::charts {

namespace {

constexpr double kW = 760, kH = 340, kLeft = 70, kRight = 200, kTop = 34, kBottom = 46;
const char* const kColours[] = {"#1f6fb4", "#e8740c", "#2e9d3a", "#c8322f", "#8250b8",
                                "#8c564b", "#d35fb7", "#6d6d6d", "#b5a000", "#17a2b8"};

const char* colour(std::size_t i) { return kColours[i % (sizeof kColours / sizeof *kColours)]; }

/// A round step for about `n` ticks over [0, hi].
double nice_step(double hi, int n) {
  if (hi <= 0) return 1;
  double raw = hi / n, mag = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

std::string tick_label(double v) {
  if (v == 0) return "0";
  if (std::abs(v) >= 1e6 || std::abs(v) < 1e-2) return fmt::format("{:.1e}", v);
  return fmt::format("{:g}", v);
}

struct Axes {
  double x0, x1, y0, y1;
  bool log2_x;
  double px(double x) const {
    double t = log2_x ? (std::log2(x) - std::log2(x0)) / (std::log2(x1) - std::log2(x0))
                      : (x - x0) / (x1 - x0);
    return kLeft + t * (kW - kLeft - kRight);
  }
  double py(double y) const { return kTop + (1 - (y - y0) / (y1 - y0)) * (kH - kTop - kBottom); }
};

void open_chart(svg::Writer& w, const std::string& title, double height = kH) {
  w.open("svg", {{"xmlns", "http://www.w3.org/2000/svg"},
                 {"class", "chart"},
                 {"width", svg::num(kW)},
                 {"height", svg::num(height)},
                 {"viewBox", fmt::format("0 0 {} {}", svg::num(kW), svg::num(height))},
                 {"font-family", "DejaVu Sans Mono,monospace"},
                 {"font-size", "11"}});
  w.element("rect", {{"x", "0"},
                     {"y", "0"},
                     {"width", svg::num(kW)},
                     {"height", svg::num(height)},
                     {"fill", "#ffffff"}});
  w.text(kLeft, 20, title, "bold");
}

void draw_axes(svg::Writer& w, const Axes& a, const std::string& x_label,
               const std::string& y_label) {
  double step = nice_step(a.y1 - a.y0, 5);
  for (double y = a.y0; y <= a.y1 + 1e-9 * step; y += step) {
    w.element("line", {{"x1", svg::num(kLeft)},
                       {"x2", svg::num(kW - kRight)},
                       {"y1", svg::num(a.py(y))},
                       {"y2", svg::num(a.py(y))},
                       {"stroke", "#e4e4e4"}});
    w.text(kLeft - 6, a.py(y) + 4, tick_label(y), "", "", "end");
  }
  if (a.log2_x) {
    int lo = static_cast<int>(std::ceil(std::log2(a.x0))),
        hi = static_cast<int>(std::floor(std::log2(a.x1)));
    int every = std::max(1, (hi - lo) / 8);
    for (int e = lo; e <= hi; e += every) {
      double x = std::ldexp(1.0, e);
      w.text(a.px(x), kH - kBottom + 16, format_size_bytes(static_cast<std::uint64_t>(x)), "", "",
             "middle");
    }
  } else {
    double xs = nice_step(a.x1 - a.x0, 6);
    for (double x = std::ceil(a.x0 / xs) * xs; x <= a.x1 + 1e-9 * xs; x += xs)
      w.text(a.px(x), kH - kBottom + 16, tick_label(x), "", "", "middle");
  }
  w.element("path", {{"d", fmt::format("M{} {}V{}H{}", svg::num(kLeft), svg::num(kTop),
                                       svg::num(kH - kBottom), svg::num(kW - kRight))},
                     {"fill", "none"},
                     {"stroke", "#333333"}});
  w.text((kLeft + kW - kRight) / 2, kH - 8, x_label, "", "", "middle");
  w.element("text",
            {{"x", "14"},
             {"y", svg::num((kTop + kH - kBottom) / 2)},
             {"text-anchor", "middle"},
             {"transform", fmt::format("rotate(-90 14 {})", svg::num((kTop + kH - kBottom) / 2))}},
            y_label);
}

void legend(svg::Writer& w, const std::vector<std::pair<std::string, std::string>>& entries,
            bool dashed_last) {
  double y = kTop + 4;
  for (std::size_t i = 0; i < entries.size(); ++i, y += 16) {
    w.element("line", {{"x1", svg::num(kW - kRight + 12)},
                       {"x2", svg::num(kW - kRight + 32)},
                       {"y1", svg::num(y)},
                       {"y2", svg::num(y)},
                       {"stroke", entries[i].second},
                       {"stroke-width", "3"},
                       {"stroke-dasharray", dashed_last && i + 1 == entries.size() ? "6 3" : ""}});
    w.text(kW - kRight + 38, y + 4, entries[i].first);
  }
}

}  // namespace

std::string line_chart(const LineChart& c) {
  svg::Writer w;
  open_chart(w, c.title);
  double x0 = INFINITY, x1 = -INFINITY, y1 = 0;
  for (const auto& s : c.series)
    for (auto [x, y] : s.points) x0 = std::min(x0, x), x1 = std::max(x1, x), y1 = std::max(y1, y);
  if (!std::isfinite(x0)) x0 = x1 = 1;  // no points
  if (c.log2_x) x0 = std::max(x0, 1.0), x1 = std::max(x1, 1.0);
  if (!(x0 < x1)) {  // one x: widen the axis around it
    if (c.log2_x)
      x0 = std::max(1.0, x0 / 2), x1 = x1 * 2;
    else
      x0 -= 1, x1 += 1;
  }
  y1 = y1 > 0 ? nice_step(y1 * 1.05, 5) * std::ceil(y1 * 1.05 / nice_step(y1 * 1.05, 5)) : 1;
  Axes a{x0, x1, 0, y1, c.log2_x};
  draw_axes(w, a, c.x_label, c.y_label);
  std::vector<std::pair<std::string, std::string>> entries;
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const auto& s = c.series[i];
    std::string d;
    for (auto [x, y] : s.points)
      d += fmt::format("{}{} {}", d.empty() ? "M" : "L", svg::num(a.px(x)), svg::num(a.py(y)));
    w.element("path", {{"class", "series"},
                       {"d", d},
                       {"fill", "none"},
                       {"stroke", colour(i)},
                       {"stroke-width", "2"},
                       {"stroke-dasharray", s.dashed ? "6 3" : ""}});
    if (c.markers)
      for (auto [x, y] : s.points)
        w.element("circle", {{"cx", svg::num(a.px(x))},
                             {"cy", svg::num(a.py(y))},
                             {"r", "3"},
                             {"fill", colour(i)}});
    entries.push_back({s.name, colour(i)});
  }
  legend(w, entries, !c.series.empty() && c.series.back().dashed);
  w.close("svg");
  return w.str();
}

std::string stacked_bar(const std::string& title,
                        const std::vector<std::pair<std::string, double>>& parts,
                        const std::string& unit) {
  double total = 0;
  for (const auto& [name, v] : parts) total += std::max(0.0, v);
  double height = 90 + 16 * static_cast<double>(parts.size());
  svg::Writer w;
  open_chart(w, title, height);
  double x = kLeft, bar_w = kW - kLeft - 30;
  std::size_t i = 0;
  for (const auto& [name, v] : parts) {
    double width = total > 0 ? std::max(0.0, v) / total * bar_w : 0;
    w.open("rect", {{"class", "part"},
                    {"x", svg::num(x)},
                    {"y", "34"},
                    {"width", svg::num(width)},
                    {"height", "28"},
                    {"fill", colour(i)}});
    w.element(
        "title", {},
        fmt::format("{}: {:.4g} {} ({:.1f}%)", name, v, unit, total > 0 ? 100 * v / total : 0));
    w.close("rect");
    x += width;
    double ly = 84 + 16 * static_cast<double>(i);
    w.element("rect", {{"x", svg::num(kLeft)},
                       {"y", svg::num(ly - 9)},
                       {"width", "10"},
                       {"height", "10"},
                       {"fill", colour(i)}});
    w.text(kLeft + 16, ly,
           fmt::format("{:<28} {:>10.4g} {}  {:5.1f}%", name, v, unit,
                       total > 0 ? 100 * v / total : 0));
    ++i;
  }
  w.close("svg");
  return w.str();
}

std::string bar_chart(const std::string& title,
                      const std::vector<std::pair<std::string, double>>& items, double max,
                      double scale, const std::string& suffix) {
  double height = 44 + 18 * static_cast<double>(items.size());
  svg::Writer w;
  open_chart(w, title, height);
  double label_w = 0;
  for (const auto& [name, v] : items) label_w = std::max(label_w, svg::text_width(name));
  double x0 = 10 + label_w + 8, bar_w = kW - x0 - 80;
  double y = 34;
  for (const auto& [name, v] : items) {
    double width = max > 0 ? std::clamp(v / max, 0.0, 1.0) * bar_w : 0;
    w.text(10, y + 11, name);
    w.element("rect", {{"class", "bar"},
                       {"x", svg::num(x0)},
                       {"y", svg::num(y)},
                       {"width", svg::num(width)},
                       {"height", "13"},
                       {"fill", "#1f6fb4"}});
    w.text(x0 + width + 6, y + 11, fmt::format("{:.1f}{}", v * scale, suffix));
    y += 18;
  }
  w.close("svg");
  return w.str();
}

std::string scatter(const std::string& title, const std::string& x_label,
                    const std::string& y_label, const std::vector<Point>& points, bool diagonal) {
  svg::Writer w;
  open_chart(w, title);
  double x1 = 0, y1 = 0;
  for (const auto& p : points) x1 = std::max(x1, p.x), y1 = std::max(y1, p.y);
  if (diagonal) x1 = y1 = std::max(x1, y1);
  auto round_up = [](double v) {
    return v > 0 ? nice_step(v * 1.05, 5) * std::ceil(v * 1.05 / nice_step(v * 1.05, 5)) : 1;
  };
  Axes a{0, round_up(x1), 0, round_up(y1), false};
  draw_axes(w, a, x_label, y_label);
  if (diagonal)
    w.element("line", {{"x1", svg::num(a.px(0))},
                       {"y1", svg::num(a.py(0))},
                       {"x2", svg::num(a.px(a.x1))},
                       {"y2", svg::num(a.py(std::min(a.x1, a.y1)))},
                       {"stroke", "#999999"},
                       {"stroke-dasharray", "4 3"}});
  for (const auto& p : points) {
    w.open("circle", {{"class", "point"},
                      {"cx", svg::num(a.px(p.x))},
                      {"cy", svg::num(a.py(p.y))},
                      {"r", p.highlight ? "5" : "3.5"},
                      {"fill", p.highlight ? "#c8322f" : "#1f6fb4"},
                      {"opacity", "0.8"}});
    w.element("title", {}, p.label);
    w.close("circle");
  }
  legend(w,
         {{diagonal ? "measured = predicted" : "on the Pareto front",
           diagonal ? "#999999" : "#c8322f"}},
         diagonal);
  w.close("svg");
  return w.str();
}

}  // namespace linkwise::report::charts
