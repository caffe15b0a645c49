#include "linkwise/topo/flow.h"

#include <gtest/gtest.h>

#include "linkwise/topo/paths.h"

namespace linkwise::topo {
namespace {

TEST(Transit, OneRuleForEveryKind) {
  EXPECT_EQ(transit(NodeKind::kGpu), Transit::kNever);
  EXPECT_EQ(transit(NodeKind::kNvme), Transit::kNever);
  EXPECT_EQ(transit(NodeKind::kNic), Transit::kBetweenBoxes);
  for (auto k : {NodeKind::kCpu, NodeKind::kPcieSwitch, NodeKind::kNvSwitch, NodeKind::kRetimer,
                 NodeKind::kNetSwitch})
    EXPECT_EQ(transit(k), Transit::kAlways);
  EXPECT_FALSE(may_pass(NodeKind::kNic, false));
  EXPECT_TRUE(may_pass(NodeKind::kNic, true));
  EXPECT_FALSE(may_pass(NodeKind::kGpu, true));
}

// a -> sw -> b with 50 and 25 GB/s, plus a -> g -> b through a device nothing passes through (20
// GB/s each way): max flow 25 GB/s (hand: the only open path is through sw, its narrower edge 25).
TEST(FlowNetwork, SplitDevicesCarryNothingThrough) {
  FlowNetwork net;
  auto a = net.add_device(false), b = net.add_device(false), sw = net.add_device(true),
       g = net.add_device(false);
  EXPECT_EQ(sw.in, sw.out);
  EXPECT_NE(g.in, g.out);
  net.add_edge(a.out, sw.in, 50e9, 0);
  net.add_edge(sw.out, b.in, 25e9, 1);
  net.add_edge(a.out, g.in, 20e9, 2);
  net.add_edge(g.out, b.in, 20e9, 3);
  EXPECT_NEAR(net.max_flow(a.out, b.in), 25e9, 1);
  auto w = net.widest_path(a.out, b.in);
  EXPECT_DOUBLE_EQ(w.width, 25e9);
  EXPECT_EQ(w.tags, (std::vector<int>{0, 1}));
  int e = net.add_edge(g.in, g.out, FlowNetwork::kOpen);  // open the device: 25 + 20
  EXPECT_NEAR(net.max_flow(a.out, b.in), 45e9, 1);
  net.set_capacity(e, 0);
  EXPECT_NEAR(net.max_flow(a.out, b.in), 25e9, 1);
}

TEST(FlowNetwork, NoPathIsEmpty) {
  FlowNetwork net;
  auto a = net.add_device(false), b = net.add_device(false);
  net.add_edge(b.out, a.in, 1e9, 0);
  EXPECT_EQ(net.max_flow(a.out, b.in), 0);
  EXPECT_EQ(net.widest_path(a.out, b.in).width, 0);
  EXPECT_TRUE(net.widest_path(a.out, b.in).vertices.empty());
}

TEST(LinkGraph, ArcsFollowIncidentOrderAndTheRule) {
  auto c = load_chassis("dgx-h100", 2);
  LinkGraph g(c);
  for (const auto& n : c.nodes()) {
    auto arcs = g.arcs(n.index);
    ASSERT_EQ(arcs.size(), c.incident(n.index).size());
    for (std::size_t i = 0; i < arcs.size(); ++i) {
      const auto& l = c.link(c.incident(n.index)[i]);
      EXPECT_EQ(arcs[i].link, l.index);
      EXPECT_EQ(arcs[i].to, l.other(n.index));
      EXPECT_EQ(arcs[i].from_a, l.a == n.index);
      EXPECT_EQ(arcs[i].family, family_bit(l.family()));
    }
    EXPECT_EQ(g.may_pass(n.index, false), may_pass(n.kind, false));
    EXPECT_EQ(g.box(n.index), n.box);
  }
}

// Within a box a NIC is an endpoint; between boxes GPU traffic passes through two of them.
TEST(LinkGraph, NicsPassOnlyBetweenBoxes) {
  auto c = load_chassis("dgx-h100", 2);
  PathFinder f(c);
  const int g0 = c.gpus().front(), g8 = c.gpus()[8];
  auto p = f.widest_path(g0, g8, Fabric::kAll);
  ASSERT_TRUE(p.found());
  int nics = 0;
  for (int v : p.nodes) nics += c.node(v).kind == NodeKind::kNic;
  EXPECT_EQ(nics, 2);
  for (std::size_t i = 1; i + 1 < p.nodes.size(); ++i)
    EXPECT_NE(c.node(p.nodes[i]).kind, NodeKind::kGpu);
}

}  // namespace
}  // namespace linkwise::topo
