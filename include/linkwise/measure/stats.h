// Statistics of repeated measurements, as the reference tools compute them.
//
// nvbandwidth reports the median of its samples (--testSamples, default 3; PerformanceStatistic::
// returnAppropriateMetric() returns the median unless --useMean), each sample being
// bytes × loopCount / (end event − start event). Bandwidth is in GB/s meaning 1e9 bytes per second,
// as nvbandwidth, p2pBandwidthLatencyTest and nccl-tests print it.
//
//   auto s = linkwise::measure::summarize({50.1, 55.2, 54.9});   // s.median == 54.9
//   double g = linkwise::measure::gbps(64 << 20, 1.2e-3);        // 55.9 GB/s
#pragma once

#include <vector>

namespace linkwise::measure {

/// A summary of samples. All fields are 0 for an empty set.
struct Summary {
  int n = 0;
  double median = 0;  ///< middle value; the mean of the two middle values for an even count
  double mean = 0;
  double min = 0;
  double max = 0;
  double stddev = 0;  ///< population standard deviation
};

Summary summarize(std::vector<double> values);
double median(std::vector<double> values);

/// GB/s (1e9 bytes per second) for `bytes` moved in `seconds`; 0 when seconds <= 0.
inline double gbps(double bytes, double seconds) {
  return seconds > 0 ? bytes / seconds / 1e9 : 0.0;
}

}  // namespace linkwise::measure
