#include "linkwise/report/topo_report.h"

#include <gtest/gtest.h>

#include "linkwise/topo/chassis.h"

namespace linkwise::report {
namespace {

// A node whose name holds a quote and a space: Boost.Graph's writer quotes and escapes it.
TEST(ReportTopo, DotEscapesNames) {
  auto spec = topo::load_spec(std::string(LINKWISE_SOURCE_DIR) + "/examples/two-gpu-pcie.yaml");
  for (auto& n : spec.nodes)
    if (n.id == "cpu0") n.id = "cpu \"A\"";
  for (auto& l : spec.links)
    if (l.b == "cpu0") l.b = "cpu \"A\"";
  auto c = topo::build_chassis(spec);
  auto dot = topo_dot(c);
  EXPECT_EQ(dot.rfind("graph \"two-gpu-pcie\" {\n", 0), 0u) << dot;
  EXPECT_NE(dot.find("\"cpu \\\"A\\\"\""), std::string::npos) << dot;  // "cpu \"A\""
  EXPECT_NE(dot.find("label=\"gpu0\\nrtx-4090\""), std::string::npos)
      << dot;  // name, new line, part
  EXPECT_NE(dot.find("label=\"pcie4 x16\""), std::string::npos) << dot;
  // Every quote is escaped or paired: an even count of unescaped quotes on each line.
  std::size_t start = 0;
  while (start < dot.size()) {
    std::size_t end = dot.find('\n', start);
    int quotes = 0;
    for (std::size_t i = start; i < end; ++i)
      if (dot[i] == '"' && (i == start || dot[i - 1] != '\\')) ++quotes;
    EXPECT_EQ(quotes % 2, 0) << dot.substr(start, end - start);
    start = end + 1;
  }
}

TEST(ReportTopo, JsonHasSchemaVersion) {
  auto c = topo::load_chassis("dgx-h100");
  EXPECT_EQ(topo_json(c, topo::analyse(c))["schema_version"], 1);
}

}  // namespace
}  // namespace linkwise::report
