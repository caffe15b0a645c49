#include "linkwise/report/html_report.h"

#include <gtest/gtest.h>

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <sstream>

#include "charts.h"

namespace linkwise::report {
namespace {

namespace pt = boost::property_tree;

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

pt::ptree parse(const std::string& xml) {
  std::istringstream in(xml);
  pt::ptree t;
  pt::read_xml(in, t);
  return t;
}

TEST(ReportHtml, ChassisAloneHasTheDrawingAndTheCollectives) {
  ReportRequest r;
  r.chassis = "dgx-h100";
  auto in = gather_report(r);
  ASSERT_FALSE(in.sweeps.empty());
  // nvls applies to an NVSwitch box; every sweep is named by the algorithm it ran.
  bool nvls = false;
  for (const auto& s : in.sweeps)
    nvls = nvls || s.rows.front().prediction.algorithm == comm::Algo::kNvls;
  EXPECT_TRUE(nvls);
  std::string html = html_report(in);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(html, "class=\"linkwise-drawing\""), 1);
  EXPECT_EQ(count(html, "data-kind=\"gpu\""), 8);
  EXPECT_EQ(count(html, "class=\"link\""), static_cast<int>(in.chassis->links().size()));
  EXPECT_NE(html.find("id=\"collectives\""), std::string::npos);
  EXPECT_NE(html.find("cut bound"), std::string::npos);
  for (const char* absent : {"id=\"step\"", "id=\"scaling\"", "id=\"design\"", "<script", "<link "})
    EXPECT_EQ(html.find(absent), std::string::npos) << absent;
}

// A step made by hand: the stacked bar shows each non-zero part with its share, the links chart
// the one link that moved bytes: 1e9 bytes in 1 s over its effective rate.
TEST(ReportHtml, StepSectionFromAStepResult) {
  ReportInputs in;
  in.chassis = std::make_shared<const topo::Chassis>(topo::load_chassis("dgx-h100"));
  work::TrainResult t;
  t.kind = work::TrainResult::Kind::kStep;
  t.setup.model_name = "Test Model";
  t.step.step_time_s = 1;
  t.step.gpus = 8;
  t.step.breakdown.compute_s = 0.75;
  t.step.breakdown.tp_s = 0.25;
  t.step.breakdown.exposed_comm_s = 0.25;
  in.step = t;
  in.utilisation.assign(in.chassis->links().size(), -1);
  in.utilisation[3] = 0.4;
  std::string html = html_report(in);
  EXPECT_NE(html.find("id=\"step\""), std::string::npos);
  EXPECT_NE(html.find("compute                            0.75 s   75.0%"), std::string::npos)
      << html;
  EXPECT_NE(html.find("tensor-parallel                    0.25 s   25.0%"), std::string::npos);
  EXPECT_EQ(html.find("pipeline bubble"), std::string::npos);  // zero parts are left out
  EXPECT_EQ(count(html, "class=\"bar\""), 1);
  EXPECT_NE(html.find("40.0%"), std::string::npos);
}

TEST(ReportCharts, WellFormedWithOneLinePerSeries) {
  charts::LineChart c;
  c.title = "a <title> & more";
  c.log2_x = true;
  c.series = {{"ring", {{1024, 1}, {1 << 20, 5}}, false},
              {"bound", {{1024, 9}, {1 << 20, 9}}, true}};
  auto t = parse(charts::line_chart(c));
  int series = 0;
  for (const auto& [tag, child] : t.get_child("svg"))
    if (tag == "path" && child.get<std::string>("<xmlattr>.class", "") == "series") ++series;
  EXPECT_EQ(series, 2);
  // Degenerate input still draws: one point, no points.
  c.series = {{"one", {{8, 3}}, false}};
  EXPECT_NO_THROW(parse(charts::line_chart(c)));
  c.series.clear();
  EXPECT_NO_THROW(parse(charts::line_chart(c)));
  EXPECT_NO_THROW(parse(charts::scatter("s", "x", "y", {}, true)));
  EXPECT_NO_THROW(parse(charts::stacked_bar("b", {{"all", 0}}, "s")));
  EXPECT_NO_THROW(parse(charts::bar_chart("b", {}, 0, 100, "%")));
}

}  // namespace
}  // namespace linkwise::report
