#include "linkwise/topo/chassis.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "linkwise/topo/spec.h"

namespace linkwise::topo {
namespace {

std::string build_error(const std::string& yaml) {
  try {
    build_chassis(parse_chassis_spec(yaml, "box.yaml"));
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

const char* kHead = R"(nodes:
  - {id: cpu0, kind: cpu, part: xeon-8480c}
  - {id: "gpu{0..1}", kind: gpu, part: h100-sxm}
)";

TEST(ChassisTest, EveryPresetBuilds) {
  auto list = presets();
  ASSERT_GE(list.size(), 8u);
  for (const auto& p : list) {
    SCOPED_TRACE(p.id);
    auto c = load_chassis(p.id);
    EXPECT_FALSE(c.gpus().empty());
    EXPECT_FALSE(p.description.empty());
    for (int g : c.gpus()) EXPECT_GE(c.node(g).cpu, 0) << c.node(g).name << " has no CPU above it";
  }
}

TEST(ChassisTest, ValidationChassisLoadByTheirTreePathFromAnyDirectory) {
  // examples/validation/*.yaml are compiled in (CMakeLists.txt): `linkwise serve --validation`
  // names them by their path in the source tree, which need not exist where it runs (ctest runs in
  // build/).
  auto c = load_chassis("examples/validation/a100-40gb-sxm-1gpu.yaml");
  EXPECT_EQ(c.name(), "a100-40gb-sxm-1gpu");
  EXPECT_EQ(c.gpus().size(), 1u);
}

TEST(ChassisTest, UnknownPartNamesTheClosest) {
  EXPECT_EQ(build_error("nodes:\n  - {id: g, kind: gpu, part: h100-sxn}\n"),
            "box.yaml:2:5: node 'g': unknown gpu part 'h100-sxn'; did you mean 'h100-sxm'?");
}

TEST(ChassisTest, UnknownKindAndTechnology) {
  EXPECT_EQ(build_error("nodes:\n  - {id: g, kind: gpus, part: h100-sxm}\n"),
            "box.yaml:2:5: unknown node kind 'gpus' for 'g'; did you mean 'gpu'?");
  EXPECT_EQ(build_error(std::string(kHead) + "links:\n  - {a: gpu0, b: cpu0, tech: pcie55}\n"),
            "box.yaml:5:5: unknown link technology 'pcie55'; did you mean 'pcie5'?");
}

TEST(ChassisTest, LinkToMissingNode) {
  EXPECT_EQ(
      build_error(std::string(kHead) + "links:\n  - {a: gpu2, b: cpu0, tech: pcie5}\n"),
      "box.yaml:5:5: link to node 'gpu2', which does not exist; did you mean 'gpu0', 'gpu1'?");
}

TEST(ChassisTest, WidthTheTechnologyDoesNotAllow) {
  EXPECT_EQ(
      build_error(std::string(kHead) + "links:\n  - {a: gpu0, b: cpu0, tech: pcie5, width: 12}\n"),
      "box.yaml:5:5: width 12 is not allowed for pcie5 (allowed: x1, x2, x4, x8, x16)");
}

TEST(ChassisTest, MoreLanesOrPortsThanThePartHas) {
  // The Xeon 8480C has 80 PCIe lanes: six x16 links need 96.
  EXPECT_EQ(build_error(R"(nodes:
  - {id: cpu0, kind: cpu, part: xeon-8480c}
  - {id: "gpu{0..5}", kind: gpu, part: h100-pcie}
links:
  - {a: "gpu{0..5}", b: cpu0, tech: pcie5, width: 16}
)"),
            "box.yaml:5:5: 'cpu0' (xeon-8480c) has 80 PCIe lanes but its links use 96");
  // An H100 SXM has 18 NVLinks: 20 are too many.
  EXPECT_EQ(build_error(std::string(kHead) +
                        "links:\n  - {a: gpu0, b: gpu1, tech: nvlink4, links: 20}\n"),
            "box.yaml:5:5: 'gpu0' (h100-sxm) has 18 NVLink ports but its links use 20");
}

// A PCIe link trains at the newest generation both ends support: an L40S (Gen4) written on a Gen5
// link to a Gen5 CPU would be modelled at 63 GB/s instead of 31.5.
TEST(ChassisTest, PcieLinkFasterThanAnEnd) {
  EXPECT_EQ(build_error(R"(nodes:
  - {id: cpu0, kind: cpu, part: xeon-8480c}
  - {id: gpu0, kind: gpu, part: l40s}
links:
  - {a: gpu0, b: cpu0, tech: pcie5, width: 16}
)"),
            "box.yaml:5:5: 'gpu0' (l40s) has a PCIe Gen4 interface, but its link is pcie5 (Gen5): "
            "a link runs at the newest generation both ends support; write tech: pcie4");
  // Slower than an end is what happens when a newer card sits in an older slot: allowed.
  EXPECT_EQ(build_error(R"(nodes:
  - {id: cpu0, kind: cpu, part: xeon-8380}
  - {id: gpu0, kind: gpu, part: h100-pcie}
links:
  - {a: gpu0, b: cpu0, tech: pcie4, width: 16}
)"),
            "(no error)");
}

// An NVLink-family link speaks its GPU's generation: the A100 PCIe bridge on two H100 NVL was
// accepted and modelled at the A100 bridge's measured efficiency.
TEST(ChassisTest, NvlinkOfAnotherGeneration) {
  const char* nodes = R"(nodes:
  - {id: cpu0, kind: cpu, part: xeon-w9-3495x}
  - {id: "gpu{0..1}", kind: gpu, part: h100-nvl}
links:
  - {a: "gpu{0..1}", b: cpu0, tech: pcie5, width: 16}
)";
  EXPECT_EQ(
      build_error(std::string(nodes) + "  - {a: gpu0, b: gpu1, tech: nvlink3-bridge, width: 12}\n"),
      "box.yaml:6:5: 'gpu0' (h100-nvl) has nvlink4-bridge links, but its link is nvlink3-bridge: "
      "write nvlink4-bridge");
  EXPECT_EQ(
      build_error(std::string(nodes) + "  - {a: gpu0, b: gpu1, tech: nvlink4-bridge, width: 12}\n"),
      "(no error)");
}

// A PCIe card's NVLink is its bridge, not the SXM board's fabric of the same generation: plain
// nvlink4 between two H100 NVL was accepted and modelled at the SXM5 rate (12 links x 25 GB/s x
// 0.8222 = 246.7 GB/s a direction) instead of the bridge's (12 x 25 x 0.678 = 203.4).
TEST(ChassisTest, PcieCardsTakeTheirBridgeNotTheSxmFabric) {
  for (const auto& [part, sxm, bridge] :
       {std::tuple<std::string, std::string, std::string>{"h100-nvl", "nvlink4", "nvlink4-bridge"},
        {"h100-pcie", "nvlink4", "nvlink4-bridge"},
        {"a100-pcie", "nvlink3", "nvlink3-bridge"}}) {
    const std::string nodes =
        "nodes:\n  - {id: cpu0, kind: cpu, part: xeon-w9-3495x}\n"
        "  - {id: \"gpu{0..1}\", kind: gpu, part: " +
        part + "}\nlinks:\n  - {a: \"gpu{0..1}\", b: cpu0, tech: pcie4, width: 16}\n";
    EXPECT_EQ(build_error(nodes + "  - {a: gpu0, b: gpu1, tech: " + sxm + ", width: 12}\n"),
              "box.yaml:6:5: 'gpu0' (" + part + ") has " + bridge + " links, but its link is " +
                  sxm + ": write " + bridge);
    EXPECT_EQ(build_error(nodes + "  - {a: gpu0, b: gpu1, tech: " + bridge + ", width: 12}\n"),
              "(no error)");
  }
  // An SXM board keeps its fabric.
  EXPECT_EQ(build_error(std::string(kHead) +
                        "links:\n  - {a: \"gpu{0..1}\", b: cpu0, tech: pcie5, width: 16}\n"
                        "  - {a: gpu0, b: gpu1, tech: nvlink4, width: 12}\n"),
            "(no error)");
}

TEST(ChassisTest, GpuConnectedToNothing) {
  EXPECT_EQ(build_error(std::string(kHead) + "links:\n  - {a: gpu0, b: cpu0, tech: pcie5}\n"),
            "box.yaml:3:5: GPU 'gpu1' is not connected to anything");
}

TEST(ChassisTest, DuplicateIds) {
  EXPECT_EQ(build_error(std::string(kHead) + "  - {id: gpu1, kind: gpu, part: h100-sxm}\n"),
            "box.yaml:4:5: duplicate node id 'gpu1'");
}

TEST(ChassisTest, LinkFamilyMustFitItsEnds) {
  EXPECT_EQ(
      build_error(std::string(kHead) + "links:\n  - {a: gpu0, b: cpu0, tech: nvlink4, links: 2}\n"),
      "box.yaml:5:5: a NVLink 4.0 link cannot join 'gpu0' (gpu) and 'cpu0' (cpu)");
}

TEST(ChassisTest, BoxesAreCopiedAndJoinedByANetwork) {
  auto one = load_chassis("dgx-h100");
  auto four = load_chassis("dgx-h100", 4);
  EXPECT_EQ(four.gpus().size(), 4 * one.gpus().size());
  EXPECT_EQ(four.boxes(), 4);
  int net = four.find("net");
  ASSERT_GE(net, 0);
  // Every NIC of every box has one link to the network switch.
  EXPECT_EQ(four.incident(net).size(), four.nodes_of_kind(NodeKind::kNic).size());
  EXPECT_EQ(four.node(four.find("b3/gpu7")).box, 3);
  EXPECT_EQ(four.display_name(four.find("b3/gpu7")), "GPU31");
}

// Chassis::boxes() states that every box is a copy of box 0, node for node and link for link in
// index order, network links included; comm's mirrored routes rely on it without checking. Checked
// here on every preset with a NIC, on three boxes, with a network of one switch and with per-box
// leaves (oversubscribed).
TEST(ChassisTest, BoxesAreCopiesOfTheFirst) {
  for (const auto& preset : presets())
    for (double oversubscription : {1.0, 2.0}) {
      auto spec = load_spec(preset.id);
      if (build_chassis(spec).nodes_of_kind(NodeKind::kNic).empty()) continue;
      SCOPED_TRACE(preset.id + (oversubscription > 1 ? " with leaves" : ""));
      spec.network.oversubscription = oversubscription;
      const auto c = build_chassis(spec, hw::Catalog::builtin(), 3);
      ASSERT_EQ(c.boxes(), 3);
      std::vector<std::vector<int>> nodes(3), links(3);
      std::vector<int> place(c.nodes().size(), -1);
      for (const auto& n : c.nodes()) {
        if (n.box < 0) continue;
        ASSERT_LT(n.box, 3);
        place[n.index] = static_cast<int>(nodes[n.box].size());
        nodes[n.box].push_back(n.index);
      }
      for (const auto& l : c.links()) {
        const int box = c.node(l.a).box >= 0 ? c.node(l.a).box : c.node(l.b).box;
        if (box >= 0) links[box].push_back(l.index);
      }
      // A node's place in its box, or the node itself (as -1 - index) outside every box.
      auto where = [&](int v) { return v < 0 ? -1 : place[v] >= 0 ? place[v] : -2 - v; };
      for (int b = 1; b < 3; ++b) {
        ASSERT_EQ(nodes[b].size(), nodes[0].size());
        for (std::size_t k = 0; k < nodes[0].size(); ++k) {
          const auto &x = c.node(nodes[b][k]), &y = c.node(nodes[0][k]);
          EXPECT_EQ(x.kind, y.kind);
          EXPECT_EQ(x.part, y.part);
          EXPECT_EQ(x.overrides, y.overrides);
          EXPECT_EQ(where(x.cpu), where(y.cpu));
        }
        ASSERT_EQ(links[b].size(), links[0].size());
        for (std::size_t k = 0; k < links[0].size(); ++k) {
          const auto &x = c.link(links[b][k]), &y = c.link(links[0][k]);
          EXPECT_EQ(where(x.a), where(y.a));
          EXPECT_EQ(where(x.b), where(y.b));
          EXPECT_EQ(x.tech, y.tech);
          EXPECT_EQ(x.width, y.width);
          EXPECT_EQ(x.efficiency, y.efficiency);
          EXPECT_EQ(x.effective_bytes_per_s(), y.effective_bytes_per_s());
        }
      }
    }
}

TEST(ChassisTest, LineAndEffectiveRates) {
  auto c = build_chassis(parse_chassis_spec(
      std::string(kHead) + "links:\n  - {a: \"gpu{0..1}\", b: cpu0, tech: pcie5, width: 16}\n"
                           "  - {a: gpu0, b: gpu1, tech: nvlink4, links: 18, efficiency: 0.5}\n",
      "box.yaml"));
  // x16 Gen5: 63.0 GB/s line; NVLink4 x18 = 450 GB/s line, at the overridden efficiency 0.5 -> 225
  // GB/s.
  EXPECT_NEAR(c.link(0).line_bytes_per_s() / 1e9, 63.0, 0.05);
  EXPECT_NEAR(c.link(2).line_bytes_per_s() / 1e9, 450.0, 1e-6);
  EXPECT_NEAR(c.link(2).effective_bytes_per_s() / 1e9, 225.0, 1e-6);
}

TEST(ChassisTest, UnreportedPcieLinks) {
  // `reported: 0` marks a PCIe link the host (a VM) does not report to the guest; it keeps its
  // line rate, survives the round trip, and is refused on other links and for other values.
  const std::string links = "links:\n  - {a: \"gpu{0..1}\", b: cpu0, tech: pcie5, width: 16, ";
  auto c =
      build_chassis(parse_chassis_spec(std::string(kHead) + links + "reported: 0}\n", "box.yaml"));
  for (const auto& l : c.links()) {
    EXPECT_FALSE(l.reported);
    EXPECT_DOUBLE_EQ(l.line_bytes_per_s(), l.tech->line_bytes_per_s(16));
  }
  auto again = build_chassis(parse_chassis_spec(chassis_spec_to_yaml(c.spec()), "again.yaml"));
  EXPECT_FALSE(again.links()[0].reported);
  auto plain = build_chassis(parse_chassis_spec(std::string(kHead) + links + "}\n", "box.yaml"));
  EXPECT_TRUE(plain.links()[0].reported);
  EXPECT_EQ(build_error(std::string(kHead) + links + "reported: 2}\n"),
            "box.yaml:5:65: 'reported' must be 0 or 1, not 2");
  EXPECT_EQ(build_error(std::string(kHead) +
                        "links:\n  - {a: \"gpu{0..1}\", b: cpu0, tech: pcie5, width: 16}\n"
                        "  - {a: gpu0, b: gpu1, tech: nvlink4, links: 4, reported: 0}\n"),
            "box.yaml:6:5: 'reported: 0' is for PCIe links (how a VM shows its devices), not "
            "nvlink4");
}

TEST(ChassisTest, NeitherPresetNorFile) {
  try {
    load_chassis("dgx-h10");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "'dgx-h10' is neither a preset nor a chassis file; did you mean 'dgx-h100'?");
  }
}

}  // namespace
}  // namespace linkwise::topo

namespace linkwise::topo {
namespace {

TEST(ChassisStructureTest, PcieLoopsAreRejected) {
  EXPECT_EQ(
      build_error(R"(nodes:
  - {id: cpu0, kind: cpu, part: xeon-8480c}
  - {id: "sw{0..2}", kind: pcie_switch, part: pex89144}
  - {id: gpu0, kind: gpu, part: h100-pcie}
links:
  - {a: sw0, b: cpu0, tech: pcie5}
  - {a: "sw{0..1}", b: "sw{1..2}", tech: pcie5}
  - {a: sw2, b: sw0, tech: pcie5}
  - {a: gpu0, b: sw1, tech: pcie5}
)"),
      "box.yaml:8:5: PCIe links form a loop through 'sw2' and 'sw0': PCIe below a CPU is a tree");
}

TEST(ChassisStructureTest, BoxesNeedJoinedCpus) {
  EXPECT_EQ(
      build_error("nodes:\n  - {id: g, kind: gpu, part: h100-sxm}\n  - {id: n, kind: nvswitch, "
                  "part: nvswitch-gen3}\n"
                  "links:\n  - {a: g, b: n, tech: nvlink4, links: 18}\n"),
      "box.yaml: chassis 'box' has no CPU: GPUs, NICs and NVMe drives need a PCIe path to one");
  EXPECT_EQ(
      build_error(R"(nodes:
  - {id: "cpu{0..1}", kind: cpu, part: xeon-8480c}
  - {id: "gpu{0..1}", kind: gpu, part: h100-pcie}
links:
  - {a: "gpu{0..1}", b: "cpu{0..1}", tech: pcie5}
)"),
      "box.yaml:2:5: CPUs 'cpu0' and 'cpu1' are not joined by socket links (e.g. tech: upi-16)");
}

TEST(ChassisStructureTest, GpusNeedAHostLink) {
  EXPECT_EQ(build_error(std::string(kHead) + "links:\n  - {a: gpu0, b: cpu0, tech: pcie5}\n"
                                             "  - {a: gpu0, b: gpu1, tech: nvlink4, links: 4}\n"),
            "box.yaml:3:5: GPU 'gpu1' has no PCIe path to a CPU: every gpu needs a host link");
}

TEST(ChassisStructureTest, OverridesMustBePlausible) {
  auto with = [](const std::string& overrides) {
    return build_error(
        "nodes:\n  - {id: cpu0, kind: cpu, part: xeon-8480c}\n"
        "  - {id: g, kind: gpu, part: h100-sxm, overrides: {" +
        overrides +
        "}}\n"
        "links:\n  - {a: g, b: cpu0, tech: pcie5}\n");
  };
  EXPECT_EQ(with("bf16_dense_tflops: -5"),
            "box.yaml:3:71: override 'bf16_dense_tflops' must be positive, not -5");
  EXPECT_EQ(with("memory_bytes_per_s: 0"),
            "box.yaml:3:72: override 'memory_bytes_per_s' must be positive, not 0");
  EXPECT_EQ(with("power_w: -1"), "box.yaml:3:61: override 'power_w' must be zero or more, not -1");
  EXPECT_EQ(with("bf16_dense_tflops: 1e308"),
            "box.yaml:3:71: override 'bf16_dense_tflops' must be at most 1e15, not 1e308");
  EXPECT_EQ(with("power_w: 350"), "(no error)");
}

}  // namespace
}  // namespace linkwise::topo

namespace linkwise::topo {
namespace {

// A file may define its own parts, starting from a catalog part and changing what differs.
const char* kOwnParts = R"(parts:
  - {id: my-gpu, kind: gpu, like: l40s, memory_GiB: 96, peer_access: 0}
nodes:
  - {id: cpu0, kind: cpu, part: xeon-8480c}
  - {id: "gpu{0..1}", kind: gpu, part: my-gpu}
links:
  - {a: "gpu{0..1}", b: cpu0, tech: pcie4, width: 16}
)";

TEST(ChassisPartsTest, OwnPartsStartFromACatalogPart) {
  auto c = build_chassis(parse_chassis_spec(kOwnParts, "box.yaml"));
  Chassis copy = c;  // nodes keep pointing at parts that live as long as any copy
  const auto& g = copy.node(copy.gpus()[0]);
  EXPECT_EQ(g.part->id, "my-gpu");
  EXPECT_DOUBLE_EQ(g.fig("memory_bytes"), 96.0 * 1024 * 1024 * 1024);  // _GiB converted
  EXPECT_DOUBLE_EQ(g.fig("peer_access"), 0);
  EXPECT_DOUBLE_EQ(g.fig("memory_bytes_per_s"), 864e9);  // the rest from l40s
  EXPECT_EQ(g.part->figures.at("memory_bytes").source, "chassis file box.yaml:2");
  // The spec round-trips with its parts.
  auto again = build_chassis(parse_chassis_spec(chassis_spec_to_yaml(c.spec()), "again.yaml"));
  EXPECT_NEAR(again.node(again.gpus()[1]).fig("memory_bytes"), 96.0 * 1024 * 1024 * 1024,
              1e3);  // 10 digits
}

TEST(ChassisPartsTest, BadPartsNameTheLineAndTheValue) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string text = kOwnParts;
    text.replace(text.find(from), from.size(), to);
    return build_error(text);
  };
  // Both catalog ids one edit from "l40x" are offered.
  EXPECT_EQ(
      with("like: l40s", "like: l40x"),
      "box.yaml:2:35: part 'my-gpu': 'like: l40x' names no part; did you mean 'l40s', 'l40'?");
  EXPECT_EQ(with("memory_GiB: 96", "memory_GiB: 96GB"),
            "box.yaml:2:53: part 'my-gpu': figure 'memory_GiB' must be a number of zero or more in "
            "the unit its name "
            "says, not '96GB'");
  // A rate of zero is refused where it is written, not later as "no path" with no line.
  EXPECT_EQ(with("memory_GiB: 96", "memory_GBps: 0"),
            "box.yaml:2:54: part 'my-gpu': figure 'memory_GBps' is a rate and must be more than "
            "zero, not '0'");
  EXPECT_EQ(with("memory_GiB: 96", "memory_GiB: 0").find("rate"), std::string::npos);
  EXPECT_NE(with("memory_GiB: 96", "memory_GHz: 2")
                .find("box.yaml:2:53: part 'my-gpu' (like: l40s) has no figure 'memory_GHz'"),
            std::string::npos);
  EXPECT_EQ(with("id: my-gpu", "id: l40s"),
            "box.yaml:2:10: part id 'l40s' is already in the catalog; give yours another id and "
            "'like: l40s'");
  EXPECT_EQ(with("kind: gpu, like", "kind: cpu, like"),
            "box.yaml:2:35: part 'my-gpu' is a cpu but 'like: l40s' is a gpu");
  EXPECT_NE(with("part: my-gpu", "part: my-gpx").find("my-gpx"), std::string::npos);
}

// find() reads "b<box>/<id>" against one box's ids: every node's own name finds it, at one box and
// several (with and without the network's leaf switches), and nothing else does.
TEST(ChassisTest, FindByNameAtOneBoxAndSeveral) {
  auto spec = load_spec("dgx-h100");
  for (int boxes : {1, 3, 12}) {
    for (double over : {1.0, 2.0}) {
      spec.network.oversubscription = over;
      Chassis c = build_chassis(spec, hw::Catalog::builtin(), boxes);
      for (const auto& n : c.nodes()) EXPECT_EQ(c.find(n.name), n.index) << n.name;
      EXPECT_EQ(c.find(""), -1);
      EXPECT_EQ(c.find("gpu99"), -1);
      if (boxes == 1) {
        EXPECT_EQ(c.find("b0/gpu0"), -1);
        continue;
      }
      EXPECT_EQ(c.find("gpu0"), -1);
      EXPECT_EQ(c.find("b" + std::to_string(boxes) + "/gpu0"), -1);
      for (const char* bad :
           {"b01/gpu0", "b/gpu0", "bx/gpu0", "b1gpu0", "b1/", "c1/gpu0", "b-1/gpu0"})
        EXPECT_EQ(c.find(bad), -1) << bad;
    }
  }
}

}  // namespace
}  // namespace linkwise::topo
