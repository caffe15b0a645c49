#include "linkwise/measure/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace linkwise::measure {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Summary summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  s.n = static_cast<int>(v.size());
  s.median = median(v);
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  s.min = *lo;
  s.max = *hi;
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / s.n;
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.stddev = std::sqrt(ss / s.n);
  return s;
}

}  // namespace linkwise::measure
