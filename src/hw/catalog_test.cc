#include "linkwise/hw/catalog.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "linkwise/util/error.h"

namespace linkwise::hw {
namespace {

constexpr double kGB = 1e9;

TEST(CatalogTest, EveryFigureNamesASource) {
  const auto& cat = Catalog::builtin();
  for (const auto& t : cat.link_techs())
    for (const Figure* f : {&t.unit_bytes_per_s, &t.efficiency, &t.duplex_efficiency, &t.latency_s})
      EXPECT_FALSE(f->source.empty()) << t.id;
  for (const auto& p : cat.parts())
    for (const auto& [field, f] : p.figures) EXPECT_GE(f.source.size(), 8u) << p.id << "." << field;
}

// The built-in catalog is parsed in two halves at once (util/yaml_util.h, load_yaml_halves): the
// result must be what one parse of the whole file gives, entry for entry and figure for figure.
TEST(CatalogTest, BuiltinParsedInHalvesEqualsOneParse) {
  std::ifstream in(std::string(LINKWISE_SOURCE_DIR) + "/data/catalog.yaml");
  std::stringstream text;
  text << in.rdbuf();
  const auto whole = Catalog::parse(text.str(), "data/catalog.yaml");
  const auto& halves = Catalog::builtin();
  ASSERT_EQ(whole.parts().size(), halves.parts().size());
  ASSERT_EQ(whole.link_techs().size(), halves.link_techs().size());
  EXPECT_EQ(whole.materials().size(), halves.materials().size());
  for (std::size_t i = 0; i < whole.parts().size(); ++i) {
    const auto& a = whole.parts()[i];
    const auto& b = halves.parts()[i];
    EXPECT_EQ(a.id, b.id);
    ASSERT_EQ(a.figures.size(), b.figures.size()) << a.id;
    for (const auto& [field, f] : a.figures) {
      EXPECT_EQ(f.value, b.figures.at(field).value) << a.id << "." << field;
      EXPECT_EQ(f.source, b.figures.at(field).source) << a.id << "." << field;
    }
    EXPECT_EQ(a.attributes, b.attributes) << a.id;
  }
  for (std::size_t i = 0; i < whole.link_techs().size(); ++i)
    EXPECT_EQ(whole.link_techs()[i].id, halves.link_techs()[i].id);
}

// PCIe line rate per direction = transfer rate x lanes x encoding / 8 bits.
//   Gen5 x16: 32 GT/s x 16 x 128/130 / 8 = 63.015 GB/s
//   Gen4 x16: 16 GT/s x 16 x 128/130 / 8 = 31.508 GB/s
//   Gen3 x16:  8 GT/s x 16 x 128/130 / 8 = 15.754 GB/s
//   Gen2 x16:  5 GT/s x 16 x 8/10 / 8    =  8.0 GB/s
TEST(CatalogTest, PcieLineRatesComeFromTheStandard) {
  const auto& cat = Catalog::builtin();
  constexpr double kTol = 0.01e9;  // 10 MB/s: rounding of the written figures
  EXPECT_NEAR(cat.link_tech("pcie5").line_bytes_per_s(16), 32e9 * 16 * 128 / 130 / 8, kTol);
  EXPECT_NEAR(cat.link_tech("pcie5").line_bytes_per_s(16) / kGB, 63.0, 0.05);
  EXPECT_NEAR(cat.link_tech("pcie4").line_bytes_per_s(16) / kGB, 31.5, 0.05);
  EXPECT_NEAR(cat.link_tech("pcie3").line_bytes_per_s(16) / kGB, 15.75, 0.05);
  EXPECT_NEAR(cat.link_tech("pcie2").line_bytes_per_s(16) / kGB, 8.0, 0.05);
  // Each technology's unit rate agrees with its transfer rate and encoding.
  for (const auto& t : cat.link_techs()) {
    if (t.family != LinkFamily::kPcie) continue;
    EXPECT_NEAR(t.unit_bytes_per_s.value, t.transfer_rate_GTps.value * 1e9 * t.encoding.value / 8,
                1e6)
        << t.id;
  }
}

// NVLink per GPU, both directions = links x per-link rate per direction x 2:
//   A100: 12 x 25 GB/s x 2 = 600 GB/s;  H100: 18 x 25 GB/s x 2 = 900 GB/s;  V100: 6 x 25 x 2 = 300
//   GB/s
TEST(CatalogTest, NvlinkTotalsPerGpu) {
  const auto& cat = Catalog::builtin();
  auto total = [&](const std::string& gpu) {
    const Part& p = cat.part(gpu, PartKind::kGpu);
    return 2 *
           cat.link_tech(p.attr("nvlink"))
               .line_bytes_per_s(static_cast<int>(p.get("nvlink_links"))) /
           kGB;
  };
  EXPECT_NEAR(total("a100-sxm"), 600, 0.5);
  EXPECT_NEAR(total("h100-sxm"), 900, 0.5);
  EXPECT_NEAR(total("v100-sxm2"), 300, 0.5);
  EXPECT_NEAR(total("b200"), 1800, 0.5);
}

TEST(CatalogTest, RequiredPartsExist) {
  const auto& cat = Catalog::builtin();
  for (const char* id : {"v100-sxm2", "a100-sxm", "a100-pcie", "h100-sxm", "h100-pcie", "h100-nvl",
                         "h200-sxm", "l40s", "rtx-4090", "b200", "mi300x"})
    EXPECT_NO_THROW(cat.part(id, PartKind::kGpu)) << id;
  for (const char* id : {"ib-edr", "ib-hdr", "ib-ndr", "ib-xdr", "eth-100", "eth-400", "eth-800",
                         "nvlink1", "nvlink5", "pcie1", "pcie6"})
    EXPECT_NE(cat.find_link_tech(id), nullptr) << id;
  EXPECT_FALSE(cat.part_ids(PartKind::kCpu).empty());
  EXPECT_FALSE(cat.part_ids(PartKind::kPcieSwitch).empty());
  EXPECT_FALSE(cat.part_ids(PartKind::kNvSwitch).empty());
  EXPECT_FALSE(cat.part_ids(PartKind::kRetimer).empty());
  EXPECT_FALSE(cat.part_ids(PartKind::kNvme).empty());
  // NVSwitch gen 3 and later reduce in the switch.
  EXPECT_EQ(cat.part("nvswitch-gen3").get("in_switch_reduction"), 1);
  EXPECT_EQ(cat.part("nvswitch-gen2").get("in_switch_reduction"), 0);
}

TEST(CatalogTest, UnknownIdsSuggestTheClosest) {
  const auto& cat = Catalog::builtin();
  try {
    cat.part("h100-sxn", PartKind::kGpu);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown gpu part 'h100-sxn'; did you mean 'h100-sxm'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(cat.link_tech("pcie9"), InputError);
  EXPECT_THROW(cat.part("h100-sxm", PartKind::kCpu), InputError);
}

TEST(CatalogTest, ParseRejectsFiguresWithoutSources) {
  const char* bad = R"(
link_technologies:
  - id: x
    family: pcie
    unit: lane
    unit_bytes_per_s: 5.0e+9
parts: []
)";
  try {
    Catalog::parse(bad, "cat.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "cat.yaml:6:23: figure 'unit_bytes_per_s' must be [value, \"source\"]");
  }
}

// Every PCIe generation says what each direction keeps with both loaded; other families default
// to 1.
TEST(CatalogTest, DuplexEfficiency) {
  const auto& cat = Catalog::builtin();
  for (const auto& t : cat.link_techs()) {
    EXPECT_GT(t.duplex_efficiency.value, 0) << t.id;
    EXPECT_LE(t.duplex_efficiency.value, 1) << t.id;
    if (t.family == LinkFamily::kPcie) EXPECT_LT(t.duplex_efficiency.value, 1) << t.id;
  }
  EXPECT_EQ(cat.link_tech("nvlink4").duplex_efficiency.value, 1.0);
  const char* bad = R"(
link_technologies:
  - id: x
    family: pcie
    unit: lane
    unit_bytes_per_s: [5.0e+9, "s"]
    duplex_efficiency: [1.2, "s"]
parts: []
)";
  try {
    Catalog::parse(bad, "cat.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "cat.yaml:3:5: link technology 'x': duplex_efficiency must be in (0, 1]");
  }
}

}  // namespace
}  // namespace linkwise::hw
