#include "linkwise/util/option_spec.h"

#include <gtest/gtest.h>

namespace linkwise {
namespace {

struct Inner {
  std::string min = "8";
};
struct Request {
  int seq = 0;
  Inner sweep;
};

TEST(OptionSpec, FieldsAreReachedThroughMemberChains) {
  Request r;
  at<&Request::seq>(r) = 7;
  at<&Request::sweep, &Inner::min>(r) = "1M";
  EXPECT_EQ(r.seq, 7);
  EXPECT_EQ(r.sweep.min, "1M");
  OptionSpec<Request> spec{"-b,--minbytes", at<&Request::sweep, &Inner::min>, "Smallest size"};
  std::get<std::string& (*)(Request&)>(spec.field)(r) = "4K";
  EXPECT_EQ(r.sweep.min, "4K");
}

TEST(OptionSpec, NamesComeFromTheFlags) {
  using Spec = OptionSpec<Request>;
  Spec b{"-b,--minbytes", at<&Request::sweep, &Inner::min>, ""};
  EXPECT_EQ(b.cli_name(), "--minbytes");
  EXPECT_EQ(b.python_name(), "minbytes");
  Spec n = Spec{"-n,--micro-batch", at<&Request::seq>, ""}.range(1, 64);
  EXPECT_EQ(n.python_name(), "micro_batch");
  EXPECT_TRUE(n.lo < n.hi);
  Spec p = Spec{"CHASSIS", at<&Request::sweep, &Inner::min>, ""}.with(Spec::kRequired);
  EXPECT_TRUE(p.positional());
  EXPECT_TRUE(p.has(Spec::kRequired));
  EXPECT_EQ(p.cli_name(), "CHASSIS");
  EXPECT_EQ(p.python_name(), "chassis");
  Spec op = Spec{"-o,--op", at<&Request::seq>, ""}.python("redop");
  EXPECT_EQ(op.cli_name(), "--op");
  EXPECT_EQ(op.python_name(), "redop");
}

}  // namespace
}  // namespace linkwise
