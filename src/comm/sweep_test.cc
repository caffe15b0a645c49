#include "linkwise/comm/sweep.h"

#include <gtest/gtest.h>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"

namespace linkwise::comm {
namespace {

TEST(CommSweep, FactorsAsNcclTests) {
  EXPECT_EQ(sweep_sizes(8, 64, 2), (std::vector<std::uint64_t>{8, 16, 32, 64}));
  EXPECT_EQ(sweep_sizes(8, 100, 4), (std::vector<std::uint64_t>{8, 32}));
  EXPECT_EQ(sweep_sizes(8, 64, 1), (std::vector<std::uint64_t>{8}));
  EXPECT_THROW(sweep_sizes(64, 8, 2), InputError);
  // No overflow near the top of the range: 2^63 × 2 would wrap.
  EXPECT_EQ(sweep_sizes(1ull << 62, ~0ull, 2),
            (std::vector<std::uint64_t>{1ull << 62, 1ull << 63}));
}

TEST(CommSweep, FlagsAsGiven) {
  SweepFlags f;
  f.min = "1M";
  f.max = "8M";
  EXPECT_EQ(sweep_sizes(f), (std::vector<std::uint64_t>{1 << 20, 2 << 20, 4 << 20, 8 << 20}));
  f.step = "3M";
  EXPECT_EQ(sweep_sizes(f), (std::vector<std::uint64_t>{1 << 20, 4 << 20, 7 << 20}));
  f.factor = "2";
  EXPECT_THROW(sweep_sizes(f), InputError);
  f.step.reset();
  f.factor = "1";
  try {
    sweep_sizes(f);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "-f/--stepfactor must be a whole number of at least 2, not '1'");
  }
  f.factor.reset();
  f.min = "8G";
  f.max = "8";
  try {
    sweep_sizes(f);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "-b 8G is larger than -e 8");
  }
}

TEST(CommSweep, WholeElements) {
  // float all-gather on 3 ranks: a size is whole floats on each rank, 12 bytes a unit.
  EXPECT_EQ(element_unit(Op::kAllGather, 4, 3), 12u);
  EXPECT_EQ(element_unit(Op::kAllReduce, 4, 3), 4u);
  SweepFlags f;
  EXPECT_EQ(whole_elements({8, 16, 32, 64}, 12, f, "x"), (std::vector<std::uint64_t>{12, 24, 60}));
  EXPECT_THROW(whole_elements({8}, 12, f, "x"), InputError);
}

}  // namespace
}  // namespace linkwise::comm

namespace linkwise::comm {
namespace {

// A chassis built once gives the sweep the request's name gives: the same chassis, so the same
// rows to the last bit (no tolerance: the same arithmetic on the same inputs).
TEST(CommSweep, OnABuiltChassisAsByName) {
  SweepRequest req;
  req.chassis = "dgx-h100";
  req.op = "all_gather";
  req.sweep.min = "1M";
  req.sweep.max = "16M";
  auto by_name = predict_sweep(req);
  auto chassis = topo::load_chassis("dgx-h100");
  req.chassis = "not read";
  auto built = predict_sweep(req, chassis);
  ASSERT_EQ(built.rows.size(), by_name.rows.size());
  for (std::size_t i = 0; i < built.rows.size(); ++i)
    EXPECT_EQ(built.rows[i].prediction.time_s, by_name.rows[i].prediction.time_s);
  EXPECT_EQ(built.chassis, "dgx-h100");
  req.op = "all_smush";
  EXPECT_THROW(predict_sweep(req, chassis), InputError);
}

}  // namespace
}  // namespace linkwise::comm
