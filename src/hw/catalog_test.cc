#include "linkwise/hw/catalog.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "hw/catalog_codegen.h"
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

// The built-in catalog is data/catalog.yaml turned into tables at build time (catalog_codegen.h,
// catalog_builtin.cc): it must be exactly what Catalog::parse() of the file gives, entry for entry,
// every member of every entry (the structs' operator== compares them all, so a member the tables
// forget to carry fails here).
TEST(CatalogTest, BuiltinEqualsParsingTheFile) {
  std::ifstream in(std::string(LINKWISE_SOURCE_DIR) + "/data/catalog.yaml");
  std::stringstream text;
  text << in.rdbuf();
  const auto parsed = Catalog::parse(text.str(), "data/catalog.yaml");
  const auto& built = Catalog::builtin();
  ASSERT_EQ(parsed.link_techs().size(), built.link_techs().size());
  for (std::size_t i = 0; i < parsed.link_techs().size(); ++i)
    EXPECT_TRUE(parsed.link_techs()[i] == built.link_techs()[i]) << parsed.link_techs()[i].id;
  ASSERT_EQ(parsed.parts().size(), built.parts().size());
  for (std::size_t i = 0; i < parsed.parts().size(); ++i) {
    const auto& a = parsed.parts()[i];
    const auto& b = built.parts()[i];
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.figures.size(), b.figures.size()) << a.id;
    for (const auto& [field, f] : a.figures)
      EXPECT_TRUE(b.figures.count(field) && f == b.figures.at(field)) << a.id << "." << field;
    EXPECT_TRUE(a == b) << a.id;
  }
  EXPECT_TRUE(parsed.materials() == built.materials());
  EXPECT_TRUE(parsed.channels() == built.channels());
}

// Strings reach the generated tables byte for byte: quotes, backslashes, UTF-8 and control bytes
// are escaped in octal, which takes at most three digits, so a digit after one is not swallowed.
TEST(CatalogTest, GeneratedStringLiterals) {
  EXPECT_EQ(gen::cpp_string_literal("a \"b\" \\ c"), "\"a \\\"b\\\" \\\\ c\"");
  EXPECT_EQ(gen::cpp_string_literal("\xc2\xb5s 1\n2"), "\"\\302\\265s 1\\0122\"");
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

// The root-complex budget (topo/budget.h) needs each CPU's lanes per host bridge; without the
// figure it prints no limit and checks nothing (epyc-7763 and epyc-9755 lacked it). xeon-8480p
// still does: examples/validation/rtx5090-8gpu-2s.yaml puts four x16 GPUs on one of its root
// complexes (16 lanes as on the 8480C), a layout docs/VALIDATION.md rows 4-5 rest on; the figure
// waits for that file.
TEST(CatalogTest, EveryCpuHasItsRootComplexLanes) {
  const auto& cat = Catalog::builtin();
  for (const auto& id : cat.part_ids(PartKind::kCpu)) {
    if (id == "xeon-8480p") continue;
    const auto& p = cat.part(id, PartKind::kCpu);
    EXPECT_TRUE(p.has("root_complex_lanes")) << id;
    if (p.get("socket_links") > 0) EXPECT_TRUE(p.has("socket_link_pcie_lanes")) << id;
  }
}

// CPU-Adam (--offload) scales the ZeRO-Offload paper's per-core rate by clock x SIMD lanes: every
// CPU part carries both, in the paper host's terms (16 lanes: AVX-512 with two 512-bit FMA units;
// 8: AVX2, or AVX-512 double-pumped on Zen 4's 256-bit datapaths), at a base clock of 1-4 GHz.
TEST(CatalogTest, EveryCpuHasItsClockAndSimdLanes) {
  const auto& cat = Catalog::builtin();
  for (const auto& id : cat.part_ids(PartKind::kCpu)) {
    const auto& p = cat.part(id, PartKind::kCpu);
    ASSERT_TRUE(p.has("clock_hz")) << id;
    ASSERT_TRUE(p.has("simd_fp32_lanes")) << id;
    EXPECT_TRUE(p.get("simd_fp32_lanes") == 8 || p.get("simd_fp32_lanes") == 16) << id;
    EXPECT_GE(p.get("clock_hz"), 1e9) << id;
    EXPECT_LE(p.get("clock_hz"), 4e9) << id;
  }
  EXPECT_EQ(cat.part("epyc-7763", PartKind::kCpu).get("simd_fp32_lanes"), 8);
  EXPECT_EQ(cat.part("xeon-8380", PartKind::kCpu).get("clock_hz"), 2.3e9);
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

// NCCL's width figures (nccl_bw_GBps) travel with the link technologies. PCIe's follow NCCL's
// rule (src/graph/topo.cc): lanes x speed code / 80 GB/s, the code 15 at Gen1 doubling each
// generation, so per lane 15 x 2^(gen-1) / 80: Gen3 0.75 (x16 = 12), Gen5 3 (x16 = 48). Every
// PCIe, NVLink and socket technology carries one; network ones none.
TEST(CatalogTest, NcclBandwidthPerTechnology) {
  const auto& cat = Catalog::builtin();
  for (const auto& t : cat.link_techs()) {
    SCOPED_TRACE(t.id);
    if (t.family == LinkFamily::kNetwork) {
      EXPECT_TRUE(t.nccl_bw_GBps.source.empty());
      continue;
    }
    EXPECT_GT(t.nccl_bw_GBps.value, 0);
    EXPECT_FALSE(t.nccl_bw_GBps.source.empty());
    if (t.family == LinkFamily::kPcie)
      EXPECT_DOUBLE_EQ(t.nccl_bw_GBps.value, 15.0 * (1 << (t.generation - 1)) / 80.0);
  }
  EXPECT_DOUBLE_EQ(16 * cat.link_tech("pcie5").nccl_bw_GBps.value, 48.0);
  EXPECT_DOUBLE_EQ(cat.link_tech("nvlink4").nccl_bw_GBps.value, 20.6);  // SM90_NVLINK_BW
  EXPECT_DOUBLE_EQ(cat.link_tech("upi-16").nccl_bw_GBps.value, 22.0);   // SRP_QPI_BW
}

std::string parse_error(const std::string& yaml) {
  try {
    Catalog::parse(yaml, "cat.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// A malformed or missing nccl_bw_GBps is an input error naming the file, line and value.
TEST(CatalogTest, NcclBandwidthMustBeAPositiveFigure) {
  const std::string head = R"(
link_technologies:
  - id: x
    family: socket
    unit: link
    unit_bytes_per_s: [5.0e+9, "s"]
)";
  EXPECT_EQ(parse_error(head + "    nccl_bw_GBps: [-3, \"s\"]\nparts: []\n"),
            "cat.yaml:7:20: link technology 'x': nccl_bw_GBps must be more than 0 GB/s, not -3");
  EXPECT_EQ(parse_error(head + "    nccl_bw_GBps: [0, \"s\"]\nparts: []\n"),
            "cat.yaml:7:20: link technology 'x': nccl_bw_GBps must be more than 0 GB/s, not 0");
  EXPECT_EQ(parse_error(head + "    nccl_bw_GBps: [fast, \"s\"]\nparts: []\n"),
            "cat.yaml:7:20: 'nccl_bw_GBps' must be a number, not 'fast'");
  EXPECT_EQ(parse_error(head + "    nccl_bw_GBps: 16\nparts: []\n"),
            "cat.yaml:7:19: figure 'nccl_bw_GBps' must be [value, \"source\"]");
  EXPECT_EQ(parse_error(head + "parts: []\n"),
            "cat.yaml:3:5: link technology 'x' (socket) needs nccl_bw_GBps: NCCL's bandwidth "
            "figure for it, [GB/s, \"source\"] (docs/catalog.md)");
  // A network technology needs none.
  EXPECT_EQ(parse_error(R"(
link_technologies:
  - id: y
    family: network
    unit: link
    unit_bytes_per_s: [5.0e+9, "s"]
parts: []
)"),
            "(no error)");
}

}  // namespace
}  // namespace linkwise::hw
