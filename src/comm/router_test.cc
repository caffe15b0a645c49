// Routes mirrored between boxes (Router::mirrored, Router::mirror) against routes searched.
#include "router.h"

#include <gtest/gtest.h>

#include <string>

#include "linkwise/sim/resources.h"
#include "linkwise/topo/chassis.h"

namespace linkwise::comm::detail {
namespace {

void expect_same(const Route& searched, const Route& mirrored, int a, int b) {
  SCOPED_TRACE(testing::Message() << "GPU node " << a << " -> " << b);
  EXPECT_EQ(searched.res, mirrored.res);
  EXPECT_EQ(searched.coeff, mirrored.coeff);
  EXPECT_EQ(searched.bytes_per_s, mirrored.bytes_per_s);
  EXPECT_EQ(searched.kind, mirrored.kind);
}

// Every box of a multi-box chassis is a copy of the first, so a route between two GPUs is the
// mirror of the route between the GPUs at the same places in boxes 0 and 1 (or 1 and 0, or box 0
// for two GPUs of one box): exactly, resource for resource, on full capacities and on any residual
// that is alike in every box. Checked against the search itself for every ordered pair of GPUs of
// the first three boxes, on NVSwitch, PCIe-switch, hybrid cube-mesh and SHM machines.
TEST(CommRouter, MirroredRoutesAreTheSearchedOnes) {
  for (const char* preset : {"dgx-h100", "training-appliance", "dgx1-v100", "pcie-8gpu-gen4"}) {
    SCOPED_TRACE(preset);
    const auto chassis = topo::load_chassis(preset, 4);
    const auto res = sim::chassis_resources(chassis);
    // A residual alike in every box: each link direction keeps a share of its capacity that
    // depends only on the line of the chassis file that made the link and the direction.
    std::vector<double> residual = res.capacity;
    for (const auto& l : chassis.links())
      for (bool from_a : {true, false}) {
        const int r = sim::ChassisResources::link_dir(l.index, from_a);
        residual[r] *= 0.25 + 0.075 * ((l.spec_link * 7 + (from_a ? 3 : 5) + 11) % 10);
      }
    Router searching(chassis, res, CommOptions{}), mirroring(chassis, res, CommOptions{});
    ASSERT_TRUE(mirroring.mirrored());
    const auto& gpus = chassis.gpus();
    const int per_box = static_cast<int>(gpus.size()) / 4;
    for (int i = 0; i < 3 * per_box; ++i)
      for (int j = 0; j < 3 * per_box; ++j) {
        if (i == j) continue;
        const int a = gpus[i], b = gpus[j];
        const int ba = chassis.node(a).box, bb = chassis.node(b).box;
        expect_same(searching.route(a, b, res.capacity), mirroring.route_full(a, b), a, b);
        // The same on the residual, mirrored from boxes 0 and 1 (in the pair's order) by hand.
        const int ca = ba == bb || ba < bb ? 0 : 1, cb = ba == bb ? 0 : 1 - ca;
        Route mirrored;
        mirroring.mirror(
            mirroring.route(mirroring.mirror_node(a, ca), mirroring.mirror_node(b, cb), residual),
            ca, cb, ba, bb, mirrored);
        mirroring.gave(mirrored);
        expect_same(searching.route(a, b, residual), mirrored, a, b);
      }
    // What the routes given cross as P2P over PCIe (the duplex rule reads it) is the same.
    EXPECT_EQ(searching.peer_pcie(), mirroring.peer_pcie());
  }
}

TEST(CommRouter, OneBoxHasNoMirrors) {
  const auto chassis = topo::load_chassis("dgx-h100");
  const auto res = sim::chassis_resources(chassis);
  Router router(chassis, res, CommOptions{});
  EXPECT_FALSE(router.mirrored());
}

// On the full capacities the router serves cached routes: route_full() per pair, and an SHM
// route's legs up to and down from a CPU per (source, destination, link families), shared by every
// peer on the other side; pair_rate() reads route_full() when handed the router's own capacities.
// Each must be the route a fresh search on a copy of the capacities gives (no cache can serve a
// copy), resource for resource, for every ordered pair of GPUs, at both SHM localities, on a
// two-socket PCIe-switch box (SHM across switches and sockets, P2P under one switch) and on
// bridged pairs (NVLink within a pair, SHM between).
TEST(CommRouter, CachedRoutesAreTheSearchedOnes) {
  for (const char* preset : {"pcie-8gpu-gen4", "inference-appliance", "dgx-a100"})
    for (int locality : {1, 2}) {
      SCOPED_TRACE(testing::Message() << preset << ", NCCL_SHM_LOCALITY=" << locality);
      const auto chassis = topo::load_chassis(preset);
      const auto res = sim::chassis_resources(chassis);
      CommOptions options;
      options.shm_locality = locality;
      if (std::string(preset) == "dgx-a100") options.p2p_disable = true;  // SHM between all
      Router cached(chassis, res, options), fresh(chassis, res, options);
      const std::vector<double> copy = res.capacity;
      const auto& gpus = chassis.gpus();
      int host = 0;
      for (int a : gpus)
        for (int b : gpus) {
          if (a == b) continue;
          const Route searched = fresh.route(a, b, copy);
          host += searched.kind == HopKind::kHost;
          EXPECT_EQ(cached.pair_rate(a, b, res.capacity), searched.bytes_per_s);
          expect_same(searched, cached.route_full(a, b), a, b);
          expect_same(searched, cached.route(a, b, res.capacity), a, b);
        }
      EXPECT_GT(host, 0);  // the case exercises SHM legs
      EXPECT_EQ(cached.peer_pcie(), fresh.peer_pcie());
    }
}

}  // namespace
}  // namespace linkwise::comm::detail
