#include <gtest/gtest.h>

#include <algorithm>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <set>
#include <sstream>

#include "linkwise/probe/discover.h"
#include "linkwise/probe/nccl_xml.h"
#include "linkwise/probe/nvml_fake.h"
#include "linkwise/topo/analysis.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"

namespace linkwise::probe {
namespace {

namespace pt = boost::property_tree;

TEST(ProbeNvmlTest, BusIdsAndVersions) {
  EXPECT_EQ(normalize_bus_id("00000000:1B:00.0"), "0000:1b:00.0");
  EXPECT_EQ(normalize_bus_id("0000:1b:00.0"), "0000:1b:00.0");
  EXPECT_EQ(nvlink_generation(6), 4);  // NVML_NVLINK_VERSION_4_0
  EXPECT_EQ(nvlink_generation(4), 3);  // NVML_NVLINK_VERSION_3_0
  EXPECT_EQ(nvlink_generation(7), 5);
  EXPECT_EQ(nvlink_generation(99), 0);
}

TEST(ProbeNvmlTest, MissingLibraryIsAStatusWithTheReason) {
  std::string why;
  EXPECT_EQ(open_nvml(&why, "libnvidia-ml-does-not-exist.so.1"), nullptr);
  EXPECT_NE(why.find("libnvidia-ml-does-not-exist.so.1"), std::string::npos) << why;
}

TEST(ProbeNvmlTest, FailedInitSaysWhyNvlinkWasNotRead) {
  FakeNvml nvml;
  nvml.init_result = kNvmlErrorDriverNotLoaded;
  auto m = read_machine(SysfsReader("/nonexistent-sys", ""), &nvml);
  EXPECT_FALSE(m.nvml.read);
  EXPECT_EQ(m.nvml.why_not, "nvmlInit_v2 failed: Driver Not Loaded");
}

TEST(ProbeNvmlTest, FakeAnswersLikeNvml) {
  FakeNvml nvml;
  nvml.gpus.push_back({});
  nvml.gpus[0].bus_id = "00000000:1B:00.0";
  nvml.gpus[0].links.push_back({});
  NvmlDevice d = 0;
  ASSERT_EQ(nvml.device_handle(0, &d), kNvmlSuccess);
  NvmlPciInfo pci;
  ASSERT_EQ(nvml.device_pci_info(d, &pci), kNvmlSuccess);
  EXPECT_EQ(pci.bus_id, "0000:1b:00.0");
  bool active = false;
  EXPECT_EQ(nvml.nvlink_state(d, 0, &active), kNvmlSuccess);
  EXPECT_TRUE(active);
  EXPECT_EQ(nvml.nvlink_state(d, 1, &active), kNvmlErrorNotSupported);  // no such link
  unsigned mw = 0, t = 0, mhz = 0;
  EXPECT_EQ(nvml.power_mw(d, &mw), kNvmlSuccess);
  EXPECT_EQ(nvml.temperature_c(d, &t), kNvmlSuccess);
  EXPECT_EQ(nvml.clock_mhz(d, NvmlClock::kSm, &mhz), kNvmlSuccess);
  EXPECT_EQ(nvml.device_handle(5, &d), kNvmlErrorInvalidArgument);
}

std::vector<std::vector<std::string>> matrix(const topo::ChassisSpec& spec) {
  topo::TopoOptions opt;
  opt.pairs = false;
  opt.bisection = false;
  auto a = topo::analyse(topo::build_chassis(spec), opt);
  auto m = a.matrix;
  m.insert(m.begin(), a.devices);
  return m;
}

// Every preset exported as NCCL XML and imported again has the same `topo` matrix (GPUs, NICs,
// NVMe).
TEST(ProbeNcclXmlTest, PresetsRoundTrip) {
  for (const auto& p : topo::presets()) {
    auto spec = topo::load_spec(p.id);
    auto xml = export_nccl_topology(topo::build_chassis(spec));
    auto back = import_nccl_topology(xml, p.id + ".xml");
    EXPECT_EQ(matrix(back), matrix(spec)) << p.id << "\n" << xml;
  }
}

// What NCCL's loader requires of each element (NCCL src/graph/topo.cc: ncclTopoAddCpu,
// ncclTopoAddPci, ncclTopoAddGpu, ncclTopoAddNvLinks, ncclTopoAddNic; src/graph/xml.cc
// ncclTopoXmlLoadSystem; xml.h MAX_ATTR_COUNT 16), checked on every preset's export.
void expect_nccl_accepts(const pt::ptree& node, const std::string& tag, const std::string& where) {
  auto has = [&](const char* a) {
    return node.get_optional<std::string>(std::string("<xmlattr>.") + a).has_value();
  };
  auto get = [&](const char* a) {
    return node.get<std::string>(std::string("<xmlattr>.") + a, "");
  };
  auto is_int = [&](const char* a) {
    std::string v = get(a);
    return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
  };
  std::size_t attrs = node.count("<xmlattr>") ? node.get_child("<xmlattr>").size() : 0;
  EXPECT_LE(attrs, 16u) << where << " <" << tag << ">";
  if (tag == "system") EXPECT_EQ(get("version"), "1") << where;
  if (tag == "cpu") {
    EXPECT_TRUE(is_int("numaid")) << where;
    EXPECT_TRUE(get("arch") == "x86_64" || get("arch") == "arm64") << where;
    if (get("arch") == "x86_64")
      EXPECT_TRUE(get("vendor") == "GenuineIntel" || get("vendor") == "AuthenticAMD") << where;
    if (get("vendor") == "GenuineIntel")
      EXPECT_TRUE(is_int("familyid") && is_int("modelid")) << where;
    if (get("vendor") == "AuthenticAMD") EXPECT_TRUE(is_int("familyid")) << where;
  }
  if (tag == "pci") {
    EXPECT_TRUE(has("busid") && has("class")) << where;
    EXPECT_TRUE(is_int("link_width")) << where << " " << get("busid");
    // NCCL's kvDictPciGen keys (sysfs text of kernels after 5.6); anything else falls back to Gen3.
    static const std::set<std::string> kGen = {"2.5 GT/s PCIe",  "5.0 GT/s PCIe",
                                               "8.0 GT/s PCIe",  "16.0 GT/s PCIe",
                                               "32.0 GT/s PCIe", "64.0 GT/s PCIe"};
    EXPECT_TRUE(kGen.count(get("link_speed")))
        << where << " " << get("busid") << " '" << get("link_speed") << "'";
  }
  if (tag == "gpu")
    EXPECT_TRUE(is_int("dev") && is_int("sm") && is_int("rank") && is_int("gdr")) << where;
  if (tag == "nvlink") EXPECT_TRUE(has("target") && is_int("count") && has("tclass")) << where;
  if (tag == "net") EXPECT_TRUE(has("name") && is_int("dev")) << where;
  for (const auto& [t, child] : node)
    if (t != "<xmlattr>") expect_nccl_accepts(child, t, where);
}

// dgx-h100 gives no pci_address: every exported GPU, NIC, NVMe drive and switch gets a made-up bus
// ID, marked in the file and listed; the matrix still survives the round trip (PresetsRoundTrip).
TEST(ProbeNcclXmlTest, SyntheticBusIdsAreMarkedAndListed) {
  auto c = topo::load_chassis("dgx-h100");
  std::vector<std::string> synthetic;
  std::string xml = export_nccl_topology(c, &synthetic);
  ASSERT_FALSE(synthetic.empty());
  EXPECT_TRUE(std::any_of(synthetic.begin(), synthetic.end(), [](const auto& s) {
    return s.rfind("GPU0 0000:", 0) == 0;
  })) << synthetic.front();
  std::size_t marked = 0;
  for (std::size_t p = 0; (p = xml.find("linkwise_busid=\"synthetic\"", p)) != std::string::npos;
       ++p)
    ++marked;
  EXPECT_EQ(marked, synthetic.size()) << xml;
  std::size_t pci = 0;
  for (std::size_t p = 0; (p = xml.find("<pci ", p)) != std::string::npos; ++p) ++pci;
  EXPECT_EQ(marked, pci);  // not one device of the preset has a bus ID of its own
}

TEST(ProbeNcclXmlTest, ExportHasEveryAttributeNcclRequires) {
  for (const auto& p : topo::presets()) {
    std::istringstream in(export_nccl_topology(topo::build_chassis(topo::load_spec(p.id))));
    pt::ptree tree;
    pt::read_xml(in, tree);
    expect_nccl_accepts(tree.get_child("system"), "system", p.id);
  }
  // Sapphire Rapids is CPUID family 6 model 0x8F (Intel SDM Vol. 4, Table 2-1): NCCL reads it as
  // SRP.
  auto xml = export_nccl_topology(topo::build_chassis(topo::load_spec("dgx-h100")));
  EXPECT_NE(xml.find("<cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" "
                     "modelid=\"143\">"),
            std::string::npos)
      << xml;
  // EPYC 7742 (Rome): family 17h model 31h.
  xml = export_nccl_topology(topo::build_chassis(topo::load_spec("dgx-a100")));
  EXPECT_NE(xml.find("<cpu numaid=\"1\" arch=\"x86_64\" vendor=\"AuthenticAMD\" familyid=\"23\" "
                     "modelid=\"49\">"),
            std::string::npos)
      << xml;
}

TEST(ProbeNcclXmlTest, ImportsAnNcclDumpWithoutLinkwiseAttributes) {
  // The shape NCCL writes (NCCL src/graph/xml.cc): switches as <pci> bridges, NVLinks to
  // NVSwitches.
  const char* xml = R"(<system version="1">
  <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="0000:18:00.0" class="0x060400" vendor="0x1000" device="0xc030" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:1b:00.0" class="0x030200" vendor="0x10de" device="0x2330" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="0" sm="90" rank="0" gdr="1"><nvlink target="0000:05:00.0" count="18" tclass="0x068000"/></gpu>
      </pci>
      <pci busid="0000:1c:00.0" class="0x020700" vendor="0x15b3" device="0x1021" link_speed="32.0 GT/s PCIe" link_width="16">
        <nic><net name="mlx5_0" dev="0" speed="400000" port="1" latency="0" guid="0x1" maxconn="131072" gdr="1"/></nic>
      </pci>
    </pci>
    <pci busid="0000:2b:00.0" class="0x030200" vendor="0x10de" device="0x2330" link_speed="32.0 GT/s PCIe" link_width="16">
      <gpu dev="1" sm="90" rank="1" gdr="1"><nvlink target="0000:05:00.0" count="18" tclass="0x068000"/></gpu>
    </pci>
  </cpu>
</system>)";
  auto spec = import_nccl_topology(xml, "dump.xml");
  EXPECT_EQ(spec.name, "dump");
  auto m = matrix(spec);
  ASSERT_EQ(m[0], (std::vector<std::string>{"GPU0", "GPU1", "NIC0"}));
  // m[0] is the device list; m[1 + i][j] is device i against device j.
  EXPECT_EQ(m[1][1], "NV18");
  EXPECT_EQ(m[1][2], "PIX");
  EXPECT_EQ(m[2][2], "NODE");  // NCCL records no host bridges: each device under a CPU gets its own
  EXPECT_EQ(spec.nodes.front().part, "xeon-8480c");
}

TEST(ProbeNcclXmlTest, MalformedXmlNamesFileAndLine) {
  try {
    import_nccl_topology("<system version=\"1\">\n  <cpu numaid=\"0\">\n</system>\n", "bad.xml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "bad.xml");
    EXPECT_GT(e.where().line, 0);
    EXPECT_NE(std::string(e.what()).find("malformed NCCL topology XML"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(import_nccl_topology("<other/>", "x.xml"), InputError);
  EXPECT_THROW(import_nccl_topology("<system version=\"1\"/>", "x.xml"), InputError);
}

}  // namespace
}  // namespace linkwise::probe
