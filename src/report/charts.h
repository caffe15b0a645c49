// Charts as inline SVG for the HTML report (private to report/). Plain elements, no script: they
// render the same in any browser and in rsvg-convert, offline.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace linkwise::report::charts {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  ///< x, y
  bool dashed = false;
};

struct LineChart {
  std::string title, x_label, y_label;
  std::vector<Series> series;
  bool log2_x = false;  ///< x on a log2 axis, ticks as sizes (1K, 1M, 1G)
  bool markers = false;
};

/// A line chart, one colour per series, with a legend.
std::string line_chart(const LineChart& chart);

/// One horizontal bar split into its parts (seconds, say), each part's share in the legend.
std::string stacked_bar(const std::string& title,
                        const std::vector<std::pair<std::string, double>>& parts,
                        const std::string& unit);

/// Horizontal bars, largest first as given; values in [0, max], printed with `fmt` ("{:.0f}%").
std::string bar_chart(const std::string& title,
                      const std::vector<std::pair<std::string, double>>& items, double max,
                      double scale, const std::string& suffix);

struct Point {
  double x = 0, y = 0;
  std::string label;
  bool highlight = false;
};

/// A scatter plot; `diagonal` draws y = x (measured against predicted).
std::string scatter(const std::string& title, const std::string& x_label,
                    const std::string& y_label, const std::vector<Point>& points, bool diagonal);

}  // namespace linkwise::report::charts
