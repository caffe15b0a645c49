#include "linkwise/report/table.h"

#include <gtest/gtest.h>

namespace linkwise::report {
namespace {

TEST(ReportTable, WidthInDisplayColumns) {
  EXPECT_EQ(display_width("abc"), 3u);
  EXPECT_EQ(display_width("µs"), 2u);         // two bytes for µ, one column
  EXPECT_EQ(display_width("≤ 5"), 3u);        // three bytes for ≤
  EXPECT_EQ(display_width("表"), 2u);         // a wide character
  EXPECT_EQ(display_width("e\xcc\x81"), 1u);  // e + combining acute
  EXPECT_EQ(display_width("\xff"), 1u);       // a stray byte: one column
}

TEST(ReportTable, UnicodeCellsLineUp) {
  Table t;
  t.header({"name", "unit"});
  t.row({"latency", "µs"});
  t.row({"x", "s"});
  // Hand: column 1 is 7 wide ("latency"), so "x" takes 6 spaces of padding, then two spaces apart.
  EXPECT_EQ(t.render(), "name     unit\nlatency  µs\nx        s\n");
}

TEST(ReportTable, FitWidthWrapsLongLinesCleanly) {
  // Prose: wrapped at a space, continued four columns in from its indent.
  EXPECT_EQ(fit_width("  [kind] aaaa bbbb cccc dddd", 18), "  [kind] aaaa bbbb\n      cccc dddd");
  // A table row: continued under its last column.
  EXPECT_EQ(fit_width("name  one two three four", 16), "name  one two\n      three four");
  // A comment stays a comment.
  EXPECT_EQ(fit_width("# aaaa bbbb cccc", 10), "# aaaa\n#     bbbb\n#     cccc");
  // Short lines and words wider than the width are left alone.
  EXPECT_EQ(fit_width("short\n", 10), "short\n");
  EXPECT_EQ(fit_width("averyveryverylongword", 10), "averyveryverylongword");
}

}  // namespace
}  // namespace linkwise::report
