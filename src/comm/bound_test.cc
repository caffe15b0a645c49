// The cut bound is a lower bound: no schedule the model times can beat it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "linkwise/comm/predict.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"

namespace linkwise::comm {
namespace {

// For every preset (and two boxes of it), every operation, every algorithm that can run it, several
// GPU subsets and sizes from 8 B to 8 GiB: predicted time >= S · bus_factor / bound busbw, the time
// the bound allows. Both use the same link rates (line × efficiency); the prediction adds latency,
// duplex loss and routing, each of which can only make it slower.
TEST(CommBound, NoPredictionBeatsTheBound) {
  int checked = 0;
  for (const auto& preset : topo::presets()) {
    for (int boxes : {1, 2}) {
      if (topo::load_chassis(preset.id).gpus().size() < 2)
        break;  // one GPU (and no NIC): no collective
      auto c = topo::load_chassis(preset.id, boxes);
      const auto all = c.gpus();
      std::vector<std::vector<int>> subsets = {all};
      if (all.size() >= 3) subsets.push_back({all[0], all[1], all[2]});
      if (all.size() >= 4) subsets.push_back({all[0], all[all.size() - 1]});
      if (all.size() >= 8)
        subsets.push_back(std::vector<int>(all.begin(), all.begin() + all.size() / 2));
      for (const auto& gpus : subsets) {
        Communicator comm(c, gpus);
        const int n = static_cast<int>(gpus.size());
        for (Op op : {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kBroadcast,
                      Op::kReduce, Op::kAllToAll, Op::kSendRecv}) {
          const Bound b = comm.bound(op);
          if (!(b.busbw_Bps > 0)) continue;
          for (Algo a : {Algo::kAuto, Algo::kRing, Algo::kTree, Algo::kNvls, Algo::kDirect,
                         Algo::kHierarchical}) {
            if (a != Algo::kAuto && !comm.supports(a, op)) continue;
            for (double s = 8; s <= 8.0 * (1ull << 30); s *= 64) {
              auto p = comm.predict(op, s, a);
              const double t_bound = s * bus_factor(op, n) / b.busbw_Bps;
              EXPECT_GE(p.time_s, t_bound * (1 - 1e-9))
                  << preset.id << " x" << boxes << " n=" << n << " " << to_string(op) << " "
                  << to_string(a) << " S=" << s << " bound cut " << b.cut;
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

}  // namespace
}  // namespace linkwise::comm
