#include "linkwise/report/drawing.h"

#include <gtest/gtest.h>

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "linkwise/report/html_report.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"

namespace linkwise::report {
namespace {

namespace pt = boost::property_tree;

struct Rect {
  double x, y, w, h;
  std::string what;
};

/// What the structural checks read from a drawing, parsed as XML (a parse error fails the test).
struct Parsed {
  std::map<std::string, Rect> nodes;  // name -> its box
  std::map<std::string, int> kinds;   // data-kind -> count
  std::vector<Rect> rects;            // every box: nodes, frames, legend
  int links = 0;
  std::map<std::string, std::vector<std::string>> labels;  // node -> its label lines
  std::vector<std::pair<std::string, Rect>> label_boxes;   // node -> where a label line sits
};

std::string attr(const pt::ptree& t, const std::string& key) {
  return t.get<std::string>("<xmlattr>." + key, "");
}

Rect rect_of(const pt::ptree& r, const std::string& what) {
  return {r.get<double>("<xmlattr>.x"), r.get<double>("<xmlattr>.y"),
          r.get<double>("<xmlattr>.width"), r.get<double>("<xmlattr>.height"), what};
}

void walk(const pt::ptree& t, Parsed& p) {
  for (const auto& [tag, child] : t) {
    if (tag == "g" && attr(child, "class") == "node") {
      std::string name = attr(child, "data-node");
      ++p.kinds[attr(child, "data-kind")];
      Rect r = rect_of(child.get_child("rect"), name);
      EXPECT_EQ(p.nodes.count(name), 0u) << "drawn twice: " << name;
      p.nodes[name] = r;
      p.rects.push_back(r);
    } else if (tag == "rect" &&
               (attr(child, "class") == "frame" || attr(child, "class") == "legend-box")) {
      p.rects.push_back(rect_of(child, attr(child, "class")));
    } else if (tag == "path" && attr(child, "class") == "link") {
      ++p.links;
    } else if (tag == "text" && !attr(child, "data-for").empty()) {
      std::string text = child.get_value<std::string>();
      double x = child.get<double>("<xmlattr>.x"), y = child.get<double>("<xmlattr>.y");
      p.labels[attr(child, "data-for")].push_back(text);
      // Monospace at 11 px advances 0.6 em = 6.6 px per character; the text's ascent is ~9 px.
      double chars = 0;
      for (unsigned char ch : text) chars += (ch & 0xC0) != 0x80;
      p.label_boxes.push_back({attr(child, "data-for"), {x, y - 9, chars * 6.6, 11, text}});
    }
    walk(child, p);
  }
}

Parsed parse(const std::string& svg) {
  std::istringstream in(svg);
  pt::ptree tree;
  pt::read_xml(in, tree);  // throws on XML that is not well-formed
  Parsed p;
  walk(tree, p);
  return p;
}

bool inside(const Rect& a, const Rect& b) {  // a within b
  constexpr double e = 0.05;
  return a.x >= b.x - e && a.y >= b.y - e && a.x + a.w <= b.x + b.w + e &&
         a.y + a.h <= b.y + b.h + e;
}

bool disjoint(const Rect& a, const Rect& b) {
  return a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
}

/// The structural checks every drawing must pass.
void check_drawing(const topo::Chassis& c, const std::string& svg) {
  SCOPED_TRACE(c.name());
  Parsed p;
  ASSERT_NO_THROW(p = parse(svg));
  // One box per node, one element per link, one GPU box per GPU.
  EXPECT_EQ(p.nodes.size(), c.nodes().size());
  EXPECT_EQ(p.links, static_cast<int>(c.links().size()));
  EXPECT_EQ(p.kinds["gpu"], static_cast<int>(c.gpus().size()));
  EXPECT_EQ(p.kinds["retimer"], static_cast<int>(c.nodes_of_kind(topo::NodeKind::kRetimer).size()));
  // Every node labelled with its name and part, the label inside its own box.
  for (const auto& n : c.nodes()) {
    ASSERT_EQ(p.labels.count(n.name), 1u) << n.name;
    const auto& lines = p.labels[n.name];
    ASSERT_GE(lines.size(), 2u) << n.name;
    EXPECT_EQ(lines[0], n.name);
    std::string rest;  // the part name, perhaps over two lines, then the label
    for (std::size_t i = 1; i < lines.size(); ++i) rest += (i > 1 ? " " : "") + lines[i];
    EXPECT_EQ(rest.rfind(n.part->name, 0), 0u) << rest;
  }
  for (const auto& [node, box] : p.label_boxes)
    EXPECT_TRUE(inside(box, p.nodes.at(node))) << "label '" << box.what << "' leaves " << node;
  // No two boxes overlap unless one holds the other.
  for (std::size_t i = 0; i < p.rects.size(); ++i)
    for (std::size_t j = i + 1; j < p.rects.size(); ++j) {
      const Rect &a = p.rects[i], &b = p.rects[j];
      EXPECT_TRUE(disjoint(a, b) || inside(a, b) || inside(b, a))
          << a.what << " and " << b.what << " overlap";
    }
}

TEST(ReportDrawing, EveryPresetIsWellFormedCountedLabelledAndUncrossed) {
  for (const auto& preset : topo::presets()) {
    auto c = topo::load_chassis(preset.id);
    check_drawing(c, chassis_svg(c));
  }
}

TEST(ReportDrawing, EveryExampleAndSeveralBoxes) {
  for (const char* dir : {"/examples", "/examples/validation"})
    for (const auto& e :
         std::filesystem::directory_iterator(std::string(LINKWISE_SOURCE_DIR) + dir)) {
      if (e.path().extension() != ".yaml") continue;
      auto c = topo::load_chassis(e.path().string());
      check_drawing(c, chassis_svg(c));
    }
  for (const char* preset : {"training-appliance", "dgx-h100"}) {
    auto c = topo::load_chassis(preset, 4);
    check_drawing(c, chassis_svg(c));
  }
}

// The training appliance on one box drew 7,681 px wide as DOT; the nested layout keeps it to a
// screen or two.
TEST(ReportDrawing, TrainingApplianceFitsAReadableSize) {
  auto c = topo::load_chassis("training-appliance");
  std::istringstream in(chassis_svg(c));
  pt::ptree tree;
  pt::read_xml(in, tree);
  EXPECT_LT(tree.get<double>("svg.<xmlattr>.width"), 2000);
  EXPECT_LT(tree.get<double>("svg.<xmlattr>.height"), 1400);
}

TEST(ReportDrawing, NamesAreEscaped) {
  auto spec = topo::load_spec(std::string(LINKWISE_SOURCE_DIR) + "/examples/two-gpu-pcie.yaml");
  const std::string odd = "cpu \"A\" <&> 'b'";
  for (auto& n : spec.nodes)
    if (n.id == "cpu0") n.id = odd, n.label = "a\x01label";
  for (auto& l : spec.links) {
    if (l.a == "cpu0") l.a = odd;
    if (l.b == "cpu0") l.b = odd;
  }
  auto c = topo::build_chassis(spec);
  std::string svg = chassis_svg(c);
  check_drawing(c, svg);
  EXPECT_NE(svg.find("cpu &quot;A&quot; &lt;&amp;&gt; &apos;b&apos;"), std::string::npos);
  EXPECT_NE(svg.find("a?label"), std::string::npos);  // a control character is not XML
}

TEST(ReportDrawing, UtilisationColoursLinksAndSaysSo) {
  auto c = topo::load_chassis("dgx-h100");
  DrawOptions o;
  o.utilisation.assign(c.links().size(), -1);
  o.utilisation[0] = 0.5;
  std::string svg = chassis_svg(c, o);
  check_drawing(c, svg);
  EXPECT_NE(svg.find("50% used"), std::string::npos);
  EXPECT_NE(svg.find("carried nothing"), std::string::npos);
  EXPECT_NE(svg.find("share of capacity used"), std::string::npos);
}

// Utilisation = bytes / (capacity x time). gpu0 -> gpu1 on two-gpu-pcie goes through the CPU, so
// take the GPU's uplink: 1e9 bytes in a 1 s step over its effective rate.
TEST(ReportDrawing, UtilisationIsBytesOverCapacityTimesTime) {
  auto c = topo::load_chassis(std::string(LINKWISE_SOURCE_DIR) + "/examples/two-gpu-pcie.yaml");
  int g = c.gpus()[0];
  const auto& up = c.link(c.node(g).pcie_uplink);
  work::StepResult step;
  step.step_time_s = 1;
  step.links.push_back({c.node(g).name + "->" + c.node(up.other(g)).name, "", 0, 1e9, "dp"});
  step.links.push_back({"cpu0 memory", "", 0, 1e9, "io"});  // not a link: left out
  auto u = link_utilisation(c, step);
  ASSERT_EQ(u.size(), c.links().size());
  EXPECT_NEAR(u[up.index], 1e9 / up.effective_bytes_per_s(), 1e-12);
  for (const auto& l : c.links())
    if (l.index != up.index) EXPECT_EQ(u[l.index], -1);
}

TEST(ReportDrawing, OnlySvgOrPngAndNothingWrittenOtherwise) {
  auto dir = std::filesystem::temp_directory_path() / "linkwise-drawing-test";
  std::filesystem::create_directories(dir);
  ReportRequest r;
  r.chassis = "dgx-h100";
  r.output = (dir / "x.jpg").string();
  EXPECT_THROW(write_report(r, false), InputError);
  EXPECT_FALSE(std::filesystem::exists(r.output));
  r.output = (dir / "x.svg").string();
  EXPECT_THROW(write_report(r, true), InputError);
  EXPECT_FALSE(std::filesystem::exists(r.output));
  r.chassis = "no-such-preset";
  EXPECT_THROW(write_report(r, false), InputError);
  EXPECT_FALSE(std::filesystem::exists(r.output));
  std::filesystem::remove_all(dir);
}

// Without rsvg-convert on PATH, PNG output says which package to install and writes nothing.
TEST(ReportDrawing, PngWithoutRsvgConvertSaysWhatToInstall) {
  std::string saved = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", "/nonexistent-linkwise-test", 1);
  auto path = std::filesystem::temp_directory_path() / "linkwise-no-rsvg.png";
  try {
    write_drawing("<svg/>", path.string());
    ADD_FAILURE() << "no error without rsvg-convert";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("librsvg2-bin"), std::string::npos) << e.what();
  }
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace linkwise::report
