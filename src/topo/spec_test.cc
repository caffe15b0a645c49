#include "linkwise/topo/spec.h"

#include <gtest/gtest.h>

namespace linkwise::topo {
namespace {

using Names = std::vector<std::string>;

TEST(PatternTest, Expands) {
  EXPECT_EQ(expand_pattern("gpu{0..3}"), (Names{"gpu0", "gpu1", "gpu2", "gpu3"}));
  EXPECT_EQ(expand_pattern("sw{0..1:2}"), (Names{"sw0", "sw0", "sw1", "sw1"}));
  EXPECT_EQ(expand_pattern("n{a,b}"), (Names{"na", "nb"}));
  EXPECT_EQ(expand_pattern("b{0..1}/g{0..1}"), (Names{"b0/g0", "b0/g1", "b1/g0", "b1/g1"}));
  EXPECT_EQ(expand_pattern("cpu0"), (Names{"cpu0"}));
}

TEST(PatternTest, RejectsMalformed) {
  EXPECT_THROW(expand_pattern("gpu{0..3"), InputError);
  EXPECT_THROW(expand_pattern("gpu{3..0}"), InputError);
  EXPECT_THROW(expand_pattern("gpu{a..b}"), InputError);
  EXPECT_THROW(expand_pattern("gpu{0..999999}"), InputError);
  try {
    expand_pattern("g{1,,2}", {"f.yaml", 4, 9});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "f.yaml:4:9: bad pattern 'g{1,,2}': empty item in {x,y}");
  }
}

TEST(SpecTest, ParsesNodesLinksAndNetwork) {
  auto spec = parse_chassis_spec(R"(
name: t
nodes:
  - {id: cpu0, kind: cpu, part: xeon-8480c, numa: 0}
  - {id: "gpu{0..1}", kind: gpu, part: h100-pcie, overrides: {power_w: 300}}
links:
  - {a: "gpu{0..1}", b: cpu0, tech: pcie5, width: 16, trace_mm: 120, material: megtron6, root_complex: 1}
  - {a: gpu0, b: gpu1, tech: nvlink4, links: 4, efficiency: 0.8}
network: {boxes: 2, tech: ib-ndr}
)",
                                 "t.yaml");
  ASSERT_EQ(spec.nodes.size(), 2u);
  EXPECT_EQ(spec.nodes[1].overrides.at("power_w"), 300);
  ASSERT_EQ(spec.links.size(), 2u);
  EXPECT_EQ(spec.links[0].width, 16);
  EXPECT_EQ(*spec.links[0].trace_mm, 120);
  EXPECT_EQ(*spec.links[0].root_complex, 1);
  EXPECT_EQ(spec.links[1].width, 4);
  EXPECT_DOUBLE_EQ(*spec.links[1].efficiency, 0.8);
  EXPECT_EQ(spec.network.boxes, 2);
  EXPECT_EQ(spec.links[0].where.line, 7);  // the text starts with an empty line
  // Written back and read again, the spec is the same.
  auto again = parse_chassis_spec(chassis_spec_to_yaml(spec), "again.yaml");
  EXPECT_EQ(chassis_spec_to_yaml(again), chassis_spec_to_yaml(spec));
}

std::string error_of(const std::string& text) {
  try {
    parse_chassis_spec(text, "box.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SpecTest, SyntaxErrorsCarryFileLineColumn) {
  EXPECT_EQ(error_of("nodes:\n  - {id: a, kind: gpu\n"),
            "box.yaml:3:1: YAML syntax error: end of map flow not found");
}

TEST(SpecTest, UnknownKeysSuggestTheClosest) {
  EXPECT_EQ(error_of("nodes:\n  - {id: g, kind: gpu, prat: h100-sxm}\n"),
            "box.yaml:2:24: unknown key 'prat' in a node; did you mean 'part'?");
  EXPECT_EQ(error_of("nodes:\n  - {id: g, kind: gpu, part: x}\nlinkz: []\n"),
            "box.yaml:3:1: unknown key 'linkz' in the chassis; did you mean 'links'?");
}

TEST(SpecTest, BadValuesAreNamed) {
  EXPECT_EQ(error_of("nodes:\n  - {id: g, kind: gpu, part: x}\nlinks:\n  - {a: g, b: h, tech: "
                     "pcie5, width: wide}\n"),
            "box.yaml:4:38: 'width' must be a number, not 'wide'");
  EXPECT_EQ(error_of("nodes: []\n"), "box.yaml:1:8: the chassis needs a non-empty 'nodes' list");
  EXPECT_EQ(error_of("- 1\n- 2\n"),
            "box.yaml:1:1: a chassis file must be a map with 'nodes' and 'links'");
}

}  // namespace
}  // namespace linkwise::topo
