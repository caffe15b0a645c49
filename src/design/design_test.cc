#include <gtest/gtest.h>

#include "linkwise/design/search.h"
#include "linkwise/topo/chassis.h"

namespace linkwise::design {
namespace {

TEST(DesignSpace, Placeholder) { SUCCEED(); }

}  // namespace
}  // namespace linkwise::design
