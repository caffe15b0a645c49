// CLI tests of linkwise draw and linkwise report on their real output.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli/cli_runner.h"

namespace linkwise::testing {
namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(DrawCliTest, SvgOfEveryGpuAndLinkOnSeveralBoxes) {
  std::string out = temp_dir() + "/ta.svg";
  auto r = run_cli("draw training-appliance --nodes 2 -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string svg = read_text(out);
  // 2 boxes of 8 GPUs; 65 links each, 8 NICs each to the network switch (topo --json agrees).
  EXPECT_EQ(count(svg, "data-kind=\"gpu\""), 16);
  EXPECT_EQ(count(svg, "class=\"link\""), 2 * 65 + 16);
  EXPECT_EQ(count(svg, "data-kind=\"retimer\""), 8);
}

TEST(DrawCliTest, JobColoursLinksByUse) {
  std::string out = temp_dir() + "/job.svg";
  auto r =
      run_cli("draw dgx-h100 --job \"train --model llama3-8b --mode lora --plan tp=8\" -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string svg = read_text(out);
  EXPECT_NE(svg.find("% used"), std::string::npos);
  EXPECT_NE(svg.find("links coloured by use in one step of Llama 3 8B (tp=8"), std::string::npos);
}

TEST(DrawCliTest, PngThroughRsvgConvert) {
  if (std::system("command -v rsvg-convert >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "rsvg-convert (librsvg2-bin) not installed";
  std::string out = temp_dir() + "/x.png";
  auto r = run_cli("draw dgx1-v100 -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_text(out).substr(1, 3), "PNG");
}

TEST(DrawCliTest, ReportHasItsSections) {
  std::string out = temp_dir() + "/r.html";
  auto r = run_cli("report dgx-h100 --job \"--model llama3-8b --mode lora\" -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string html = read_text(out);
  for (const char* id : {"id=\"drawing\"", "id=\"collectives\"", "id=\"step\"", "id=\"scaling\""})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  EXPECT_EQ(html.find("<script"), std::string::npos);  // nothing to run, nothing to fetch
  EXPECT_EQ(html.find("http://w"), html.find("http://www.w3.org/2000/svg"));
  EXPECT_EQ(html.find("https:"), std::string::npos);
}

TEST(DrawCliTest, BadInputExitsTwoAndWritesNothing) {
  std::string dir = temp_dir();
  struct Case {
    std::string args, message;
  } cases[] = {
      {"draw no-such-box -o " + dir + "/a.svg", "'no-such-box' is neither a preset"},
      {"draw dgx-h100 -o " + dir + "/a.gif", "a drawing is written as .svg or .png, not '.gif'"},
      {"report dgx-h100 -o " + dir + "/a.svg", "the report is written as .html"},
      {"draw dgx-h100 -o " + dir + "/missing/a.svg", "does not exist"},
      {"draw dgx-h100 --job \"--bogus 1\" -o " + dir + "/a.svg", "--job '--bogus 1'"},
  };
  for (const auto& c : cases) {
    auto r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

}  // namespace
}  // namespace linkwise::testing
