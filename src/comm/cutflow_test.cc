// The per-box reduction of cut max flows (cutflow.h) against the max flow over the whole machine.
#include "cutflow.h"

#include <gtest/gtest.h>

#include "linkwise/topo/chassis.h"
#include "linkwise/topo/paths.h"

namespace linkwise::comm::detail {
namespace {

// Both are max flows of the same network, solved by push-relabel on different graphs: they agree to
// rounding.
constexpr double kSameFlow = 1e-9;  // relative

// Checks F(A→B) and F(B→A) of every cut in `cuts` (rank positions in A) against topo::PathFinder.
void expect_same_flows(const topo::Chassis& c, const std::vector<int>& ranks,
                       const std::vector<std::vector<int>>& cuts) {
  CutFlows flows(c, ranks);
  EXPECT_TRUE(flows.reduced());
  topo::PathFinder whole(c, topo::Rate::kEffective);
  for (const auto& cut : cuts) {
    std::vector<char> in_a(ranks.size(), 0);
    std::vector<int> ga, gb;
    for (int i : cut) in_a[i] = 1;
    for (std::size_t i = 0; i < ranks.size(); ++i) (in_a[i] ? ga : gb).push_back(ranks[i]);
    const double ab = whole.max_flow(ga, gb, topo::Fabric::kAll),
                 ba = whole.max_flow(gb, ga, topo::Fabric::kAll);
    EXPECT_GT(ab, 0);
    EXPECT_NEAR(flows.flow(in_a), ab, ab * kSameFlow)
        << "cut of " << cut.size() << " ranks from " << cut[0];
    EXPECT_NEAR(flows.reverse_flow(in_a), ba, ba * kSameFlow)
        << "cut of " << cut.size() << " ranks from " << cut[0];
  }
}

std::vector<int> range(int lo, int hi) {
  std::vector<int> v;
  for (int i = lo; i < hi; ++i) v.push_back(i);
  return v;
}

TEST(CommCutFlows, FourDgxH100BoxesMatchTheWholeGraph) {
  auto c = topo::load_chassis("dgx-h100", 4);
  // One rank; a box; half the machine; a box and a half; three ranks spread over two boxes.
  expect_same_flows(c, c.gpus(), {{0}, {13}, range(8, 16), range(0, 16), range(0, 12), {3, 9, 10}});
}

TEST(CommCutFlows, OversubscribedLeavesAndSomeRanksMatchTheWholeGraph) {
  // A leaf switch per box (oversubscription 2), PCIe-only boxes, and ranks that leave GPUs out:
  // boxes differ in which local GPUs are ranks, and one box holds none.
  auto spec = topo::load_spec("pcie-8gpu-gen4");
  spec.network.oversubscription = 2;
  auto c = topo::build_chassis(spec, hw::Catalog::builtin(), 4);
  const auto& g = c.gpus();
  std::vector<int> ranks = {g[0], g[1], g[2], g[5], g[8], g[9], g[10], g[13], g[30], g[31]};
  expect_same_flows(c, ranks, {{0}, {3}, {8}, range(0, 4), range(4, 8), range(0, 5), {1, 5, 9}});
}

TEST(CommCutFlows, ManyBoxesMatchTheWholeGraph) {
  auto c = topo::load_chassis("dgx-h100", 64);  // 512 GPUs
  expect_same_flows(c, c.gpus(), {{0}, range(0, 256), range(0, 8)});
}

TEST(CommCutFlows, OneBoxUsesTheWholeGraph) {
  auto c = topo::load_chassis("dgx-h100");
  CutFlows flows(c, c.gpus());
  EXPECT_FALSE(flows.reduced());
  std::vector<char> in_a(8, 0);
  in_a[4] = 1;
  topo::PathFinder whole(c, topo::Rate::kEffective);
  std::vector<int> rest = c.gpus();
  rest.erase(rest.begin() + 4);
  EXPECT_EQ(flows.flow(in_a), whole.max_flow({c.gpus()[4]}, rest, topo::Fabric::kAll));
}

}  // namespace
}  // namespace linkwise::comm::detail
