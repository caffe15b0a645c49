#include "linkwise/topo/budget.h"

#include <gtest/gtest.h>

#include "linkwise/topo/chassis.h"

namespace linkwise::topo {
namespace {

// Gen5 (Nyquist 16 GHz): the catalog's 16 GHz points are the materials' losses at that frequency,
// FR-4 1.289 dB/in = 0.05075 dB/mm, Megtron 6 0.336 dB/in = 0.01323 dB/mm (TI SNLA426 Table 9-1).
// Fixed loss: two packages of 9 dB = 18 dB; budget 36 dB, so 18 dB is left for the trace.
//   400 mm FR-4:      400 x 0.05075 = 20.30 dB -> 38.30 dB > 36: one retimer (two 200 mm pieces
//   of 10.15 + 18). 400 mm Megtron 6: 400 x 0.01323 =  5.29 dB -> 23.29 dB, within budget, no
//   retimer.
TEST(Budget, Gen5ChannelLossOnTwoMaterialsAndTheRetimerItNeeds) {
  auto fr4 = channel_loss("pcie5", 400, "fr4");
  EXPECT_NEAR(fr4.trace_db, 20.30, 0.01);
  EXPECT_NEAR(fr4.loss_db, 38.30, 0.01);
  EXPECT_DOUBLE_EQ(fr4.budget_db, 36);
  EXPECT_EQ(fr4.retimers_needed, 1);
  auto m6 = channel_loss("pcie5", 400, "megtron6");
  EXPECT_NEAR(m6.loss_db, 23.29, 0.01);
  EXPECT_EQ(m6.retimers_needed, 0);
  // 1.5 m of FR-4: 76.13 dB of trace; ceil(76.13 / 18) - 1 = 4 retimers.
  EXPECT_EQ(channel_loss("pcie5", 1500, "fr4").retimers_needed, 4);
  // Between the two catalog points the two-term fit holds both: FR-4 at 8 GHz is 0.02701 dB/mm.
  EXPECT_NEAR(channel_loss("pcie4", 1000, "fr4").trace_db, 27.01, 0.01);
}

// One trace per other generation, FR-4, no connectors or vias (catalog pcie_channels).
// Gen3 (Nyquist 4 GHz, below the catalog's 8 and 16 GHz points, so the two-term fit
// alpha(f) = c sqrt(f) + d f carries it): c = (2 x 0.02701 - 0.05075) / (2 sqrt 8 - 4) = 0.0019736,
//   d = (0.02701 - c sqrt 8) / 8 = 0.0026785, alpha(4) = 2c + 4d = 0.014661 dB/mm.
//   1000 mm: 14.66 dB + 2 x 5.5 (packages) = 25.66 dB > 22: room 22 - 11 = 11 dB,
//   ceil(14.66 / 11) - 1 = 1 retimer. 500 mm: 7.33 + 11 = 18.33 dB, none.
// Gen4 (8 GHz, the catalog point 0.02701 dB/mm): 600 mm: 16.21 + 2 x 7 = 30.21 dB > 28: room 14 dB,
//   ceil(16.21 / 14) - 1 = 1 retimer. 500 mm of Megtron 6 (0.007441 dB/mm): 3.72 + 14 = 17.72 dB.
// Gen6 (PAM4, 16 GHz like Gen5, 0.05075 dB/mm, budget 32 dB, packages 2 x 8): 350 mm: 17.76 + 16 =
//   33.76 dB > 32: ceil(17.76 / 16) - 1 = 1 retimer, where Gen5 takes the same trace, 17.76 + 18 =
//   35.76 dB <= 36, without one.
TEST(Budget, ChannelLossOfOneTracePerGeneration) {
  auto g3 = channel_loss("pcie3", 1000, "fr4");
  EXPECT_DOUBLE_EQ(g3.nyquist_GHz, 4);
  EXPECT_NEAR(g3.trace_db, 14.66, 0.01);
  EXPECT_NEAR(g3.loss_db, 25.66, 0.01);
  EXPECT_DOUBLE_EQ(g3.budget_db, 22);
  EXPECT_EQ(g3.retimers_needed, 1);
  EXPECT_EQ(channel_loss("pcie3", 500, "fr4").retimers_needed, 0);
  auto g4 = channel_loss("pcie4", 600, "fr4");
  EXPECT_NEAR(g4.loss_db, 30.21, 0.01);
  EXPECT_DOUBLE_EQ(g4.budget_db, 28);
  EXPECT_EQ(g4.retimers_needed, 1);
  auto g4m = channel_loss("pcie4", 500, "megtron6");
  EXPECT_NEAR(g4m.loss_db, 17.72, 0.01);
  EXPECT_EQ(g4m.retimers_needed, 0);
  auto g6 = channel_loss("pcie6", 350, "fr4");
  EXPECT_DOUBLE_EQ(g6.nyquist_GHz, 16);
  EXPECT_NEAR(g6.loss_db, 33.76, 0.01);
  EXPECT_DOUBLE_EQ(g6.budget_db, 32);
  EXPECT_EQ(g6.retimers_needed, 1);
  auto g5 = channel_loss("pcie5", 350, "fr4");
  EXPECT_NEAR(g5.loss_db, 35.76, 0.01);
  EXPECT_EQ(g5.retimers_needed, 0);
}

ChassisSpec gen5_link(double trace_mm, const std::string& material,
                      const std::string& retimer = "") {
  ChassisSpec s;
  s.name = "t";
  s.nodes.push_back({.id = "cpu0", .kind = "cpu", .part = "xeon-8480c"});
  s.nodes.push_back({.id = "gpu0", .kind = "gpu", .part = "h100-pcie"});
  if (retimer.empty()) {
    s.links.push_back({.a = "gpu0",
                       .b = "cpu0",
                       .tech = "pcie5",
                       .width = 16,
                       .trace_mm = trace_mm,
                       .material = material});
  } else {
    s.nodes.push_back({.id = "rt0", .kind = "retimer", .part = retimer});
    s.links.push_back({.a = "rt0",
                       .b = "cpu0",
                       .tech = "pcie5",
                       .width = 16,
                       .trace_mm = trace_mm / 2,
                       .material = material});
    s.links.push_back({.a = "gpu0",
                       .b = "rt0",
                       .tech = "pcie5",
                       .width = 16,
                       .trace_mm = trace_mm / 2,
                       .material = material});
  }
  return s;
}

TEST(Budget, LongFr4Gen5LinkWithoutRetimerIsRejected) {
  try {
    build_chassis(gen5_link(1500, "fr4"));
    FAIL() << "1.5 m of FR-4 at Gen5 without a retimer must be rejected";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gpu0 - cpu0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("needs 4 retimers"), std::string::npos) << e.what();
  }
  // 400 mm: one Gen5 retimer in the middle brings both halves within budget; a Gen4 retimer cannot.
  EXPECT_THROW(build_chassis(gen5_link(400, "fr4")), InputError);
  EXPECT_NO_THROW(build_chassis(gen5_link(400, "fr4", "astera-aries-pt5161l")));
  try {
    build_chassis(gen5_link(400, "fr4", "astera-aries-pt4161l"));
    FAIL() << "a Gen4 retimer on a Gen5 link must be rejected";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("Gen4 part on the Gen5 link"), std::string::npos)
        << e.what();
  }
  // Unchecked, the same chassis builds and the report names the budget.
  auto c = build_chassis(gen5_link(1500, "fr4"), hw::Catalog::builtin(), 0, false);
  auto r = check_budgets(c);
  ASSERT_NE(r.first_error(), nullptr);
  EXPECT_EQ(r.first_error()->budget, "channel-loss");
}

// Training appliance, every part at its rated power (catalog power_w):
//   GPU tray: 8 H200 x 700 + 4 NVSwitch x 120                          = 5600 + 480 = 6080 W
//   host tray: 2 Xeon 6960P x 500 + 4 PEX89144 x 54 + 8 CX-7 x 25 + 8 CM7 x 25 + 4 retimers x 11
//            = 1000 + 216 + 200 + 200 + 44                             = 1660 W
//   total 7740 W against (6 - 3) x 3000 = 9000 W of supply.
TEST(Budget, TrainingAppliancePowerAndHeat) {
  auto r = check_budgets(load_chassis("training-appliance"));
  EXPECT_NEAR(r.power_w, 7740, 1e-6);
  EXPECT_NEAR(r.supply_w, 9000, 1e-6);
  EXPECT_EQ(r.retimers, 4);
  EXPECT_TRUE(r.ok());
  double gpu_zone = 0, host_zone = 0;
  for (const auto& l : r.lines) {
    if (l.budget == "heat" && l.subject == "zone gpu") gpu_zone = l.used;
    if (l.budget == "heat" && l.subject == "zone host") host_zone = l.used;
  }
  EXPECT_NEAR(gpu_zone, 6080, 1e-6);
  EXPECT_NEAR(host_zone, 1660, 1e-6);
  ASSERT_NE(r.binding(), nullptr);
  // 6080 / 7000 = 86.9% of the GPU tray binds before 7740 / 9000 = 86.0% of the supplies.
  EXPECT_EQ(r.binding()->budget, "heat");
  EXPECT_EQ(r.binding()->subject, "zone gpu");
}

// Xeon 8480C: one root complex (IIO stack) holds 16 lanes. Two x16 GPUs on root complex 0 use 32.
TEST(Budget, LaneOverflowOnOneRootComplex) {
  ChassisSpec s;
  s.name = "t";
  s.nodes.push_back({.id = "cpu0", .kind = "cpu", .part = "xeon-8480c"});
  s.nodes.push_back({.id = "gpu{0..1}", .kind = "gpu", .part = "h100-pcie"});
  s.links.push_back(
      {.a = "gpu{0..1}", .b = "cpu0", .tech = "pcie5", .width = 16, .root_complex = 0});
  try {
    build_chassis(s);
    FAIL() << "32 lanes on one 16-lane root complex must be rejected";
  } catch (const InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find("root complex 0 use 32 lanes, but one root complex has 16"),
        std::string::npos)
        << e.what();
  }
  s.links[0].root_complex.reset();  // each on its own root port: fine
  EXPECT_NO_THROW(build_chassis(s));
}

// Power over the supplies and heat over a zone are errors naming the budget.
TEST(Budget, PowerAndHeatOverflow) {
  auto spec = load_spec("training-appliance");
  spec.budgets.redundant = 4;                       // 2 x 3000 = 6000 W < 7740 W
  spec.budgets.cooling_zones[0].capacity_w = 6000;  // < 6080 W
  auto r = check_budgets(build_chassis(spec, hw::Catalog::builtin(), 0, false));
  EXPECT_EQ(r.errors(), 2);
  EXPECT_EQ(r.first_error()->budget, "power");
  EXPECT_THROW(build_chassis(spec), InputError);
}

// Two cards in a one-slot box, and two cards in one slot, are errors naming the slots.
TEST(Budget, Slots) {
  ChassisSpec s;
  s.name = "t";
  s.nodes.push_back({.id = "cpu0", .kind = "cpu", .part = "epyc-9654"});
  s.nodes.push_back({.id = "gpu0", .kind = "gpu", .part = "l40s", .slot = "slot1"});
  s.nodes.push_back({.id = "gpu1", .kind = "gpu", .part = "l40s", .slot = "slot2"});
  s.links.push_back({.a = "gpu0", .b = "cpu0", .tech = "pcie4", .width = 16});
  s.links.push_back({.a = "gpu1", .b = "cpu0", .tech = "pcie4", .width = 16});
  s.budgets.slots = 2;
  auto ok = check_budgets(build_chassis(s));
  EXPECT_TRUE(ok.ok());
  s.budgets.slots = 1;
  auto over = check_budgets(build_chassis(s, hw::Catalog::builtin(), 0, false));
  ASSERT_NE(over.first_error(), nullptr);
  EXPECT_EQ(over.first_error()->message, "2 cards name a slot, but the box has 1");
  s.budgets.slots = 2;
  s.nodes[2].slot = "slot1";
  auto twice = check_budgets(build_chassis(s, hw::Catalog::builtin(), 0, false));
  ASSERT_NE(twice.first_error(), nullptr);
  EXPECT_EQ(twice.first_error()->message, "slot 'slot1' holds both 'gpu0' and 'gpu1'");
}

}  // namespace
}  // namespace linkwise::topo
