#include "linkwise/report/nccl_tests_table.h"

#include <gtest/gtest.h>

namespace linkwise::report {
namespace {

// A measured 8 GiB all-reduce on 8 ranks, checked (0 wrong): the figures of an nccl-tests log.
NcclTestsRow measured_row() {
  NcclTestsRow r;
  r.bytes = 8589934592ull;
  r.count = 2147483648ull;
  r.redop = "sum";
  r.groups[0] = {34719, 247.41, 463.90, 0};
  r.groups[1] = {34720, 247.41, 463.89, 0};
  return r;
}

TEST(ReportNcclTestsTable, LinesAsNcclTestsPrintsThem) {
  std::string t = nccl_tests_table({measured_row()}, 458.452);
  // NVIDIA/nccl-tests src/common.cu and src/util.cu: headers "# %10s  %12s  %8s  %6s  %6s  %7s
  // %6s  %6s  %6s ...", rows "%12li  %12li  %8s  %6s  %6s" then per group "  %7s  %6s  %6s  %6g".
  EXPECT_NE(t.find("#       size         count      type   redop    root     time   algbw   busbw  "
                   "#wrong     time   algbw   busbw  #wrong \n"),
            std::string::npos)
      << t;
  // 34719 us has five digits: one decimal in seven columns (getFloatStr).
  EXPECT_NE(t.find("  8589934592    2147483648     float     sum      -1  34719.0  247.41  463.90  "
                   "     0  34720.0  247.41  463.89       0\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 458.452 \n#\n"),
            std::string::npos)
      << t;
}

TEST(ReportNcclTestsTable, UncheckedGroupsPrintNotAvailable) {
  NcclTestsRow r;
  r.bytes = 2048, r.count = 512, r.redop = "sum";
  r.groups[0] = r.groups[1] = {2.0, 1.024, 1.536, -1};
  std::string t = nccl_tests_table({r}, 1.536);
  EXPECT_NE(t.find("\n        2048           512     float     sum      -1     2.00    1.02    1.54"
                   "    N/A     2.00    1.02    1.54    N/A\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("# Out of bounds values : 0 OK\n"), std::string::npos) << t;
}

TEST(ReportNcclTestsTable, WrongElementsAreSummedAndFail) {
  auto r = measured_row();
  r.groups[0].wrong = r.groups[1].wrong = 512;
  std::string t = nccl_tests_table({r}, 0);
  EXPECT_NE(t.find("     512\n"), std::string::npos) << t;
  EXPECT_NE(t.find("# Out of bounds values : 1024 FAILED\n"), std::string::npos) << t;
}

TEST(ReportNcclTestsTable, NumbersAsNcclTestsFitsThem) {
  EXPECT_EQ(nccl_tests_number(2.0, 7), "   2.00");
  EXPECT_EQ(nccl_tests_number(7828.36, 7), "7828.36");
  EXPECT_EQ(nccl_tests_number(31238.4, 7), "31238.4");
  EXPECT_EQ(nccl_tests_number(312384.0, 7), " 312384");
  EXPECT_EQ(nccl_tests_number(31238400.0, 7), "3.1e+07");
  EXPECT_EQ(nccl_tests_number(481.21, 6), "481.21");
  EXPECT_EQ(nccl_tests_number(1234.5, 6), "1234.5");
  EXPECT_EQ(nccl_tests_number(0.0, 6), "  0.00");
}

}  // namespace
}  // namespace linkwise::report
