#include "linkwise/report/catalog_report.h"

#include <gtest/gtest.h>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"

namespace linkwise::report {
namespace {

TEST(ReportCatalog, EntryShowsEachFigureWithItsSource) {
  hw::EntryFigures e;
  e.id = "x";
  e.figures.push_back({"latency_s", {1.5e-6, "spec 1.2"}});
  e.attributes.push_back({"pcie", "pcie5"});
  EXPECT_EQ(entry_text(e),
            "field      value    source\nlatency_s  1.5e-06  spec 1.2\npcie       pcie5\n");
  auto j = entry_json(e);
  EXPECT_EQ(j["id"], "x");
  EXPECT_DOUBLE_EQ(j["figures"]["latency_s"]["value"].get<double>(), 1.5e-6);
  EXPECT_EQ(j["figures"]["latency_s"]["source"], "spec 1.2");
  EXPECT_EQ(j["attributes"]["pcie"], "pcie5");
  EXPECT_EQ(j["schema_version"], 1);
}

TEST(ReportCatalog, ListsAreInAnObject) {
  const auto& cat = hw::Catalog::builtin();
  auto j = catalog_json(cat);
  EXPECT_EQ(j["entries"].size(), cat.link_techs().size() + cat.parts().size());
  EXPECT_EQ(presets_json()["presets"].size(), topo::presets().size());
  EXPECT_THROW(hw::describe(cat, "no-such-part"), InputError);
}

}  // namespace
}  // namespace linkwise::report
