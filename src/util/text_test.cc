#include "linkwise/util/text.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "cli/cli_runner.h"
#include "linkwise/util/error.h"
#include "linkwise/util/verbosity.h"

namespace linkwise {
namespace {

TEST(TextTest, EditDistance) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3);
  EXPECT_EQ(edit_distance("", "abc"), 3);
  EXPECT_EQ(edit_distance("h100-sxm", "h100-sxm"), 0);
}

TEST(TextTest, ClosestNamesPrefersNearAndPrefix) {
  std::vector<std::string> c = {"h100-sxm", "h100-pcie", "h200-sxm", "a100-sxm", "l40s"};
  auto best = closest_names("h100-sxn", c);
  ASSERT_FALSE(best.empty());
  EXPECT_EQ(best.front(), "h100-sxm");
  EXPECT_EQ(did_you_mean("zzzzzzzzzzzz", c), "");
  EXPECT_EQ(did_you_mean("h100", c).rfind("did you mean 'h100-sxm'", 0), 0u);
}

TEST(TextTest, ParseSizeAsNcclTestsReadsIt) {
  EXPECT_EQ(parse_size_bytes("8"), 8u);
  EXPECT_EQ(parse_size_bytes("64K"), 65536u);
  EXPECT_EQ(parse_size_bytes("8M"), 8u << 20);
  EXPECT_EQ(parse_size_bytes("8G"), 8ull << 30);
  EXPECT_EQ(parse_size_bytes("1T"), 1ull << 40);
  EXPECT_EQ(parse_size_bytes("4kb"), 4096u);
}

TEST(TextTest, ParseSizeRejectsZeroHugeAndGarbage) {
  EXPECT_THROW(parse_size_bytes("0"), InputError);
  EXPECT_THROW(parse_size_bytes("2T"), InputError);
  EXPECT_THROW(parse_size_bytes("99999999999999999999"), InputError);
  EXPECT_THROW(parse_size_bytes("8X"), InputError);
  EXPECT_THROW(parse_size_bytes(""), InputError);
  try {
    parse_size_bytes("12Q", "-b");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "bad -b '12Q': unknown suffix (use K, M, G or T)");
  }
}

TEST(TextTest, FormatSize) {
  EXPECT_EQ(format_size_bytes(8), "8");
  EXPECT_EQ(format_size_bytes(65536), "64K");
  EXPECT_EQ(format_size_bytes(8ull << 30), "8G");
  EXPECT_EQ(format_size_bytes(1000), "1000");
}

TEST(TextTest, AtomicWriteLeavesNoPartialFile) {
  std::string dir = testing::temp_dir();
  std::string path = dir + "/out.txt";
  write_file_atomic(path, "hello\n");
  EXPECT_EQ(read_file(path), "hello\n");
  // A folder that does not exist: an error, and nothing left behind.
  EXPECT_THROW(write_file_atomic(dir + "/missing/out.txt", "x"), RuntimeError);
  EXPECT_FALSE(std::filesystem::exists(dir + "/missing"));
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(TextTest, SourceLocationPrefix) {
  InputError e("bad value", {"box.yaml", 3, 7});
  EXPECT_STREQ(e.what(), "box.yaml:3:7: bad value");
  EXPECT_EQ(e.bare_message(), "bad value");
  EXPECT_STREQ(InputError("plain").what(), "plain");
}

TEST(Progress, SilentWhenStderrIsNotATerminal) {
  // Under the test runner stderr is a pipe or file: nothing is drawn.
  if (isatty(2) == 1) GTEST_SKIP() << "stderr is a terminal";
  ::testing::internal::CaptureStderr();
  {
    Progress p("work", 3);
    for (std::size_t i = 1; i <= 3; ++i) p.update(i);
    EXPECT_FALSE(p.shown());
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace linkwise
