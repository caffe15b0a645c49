// XID events read from kernel log text as dmesg, journalctl -k and /dev/kmsg print it.
#include "xid.h"

#include <gtest/gtest.h>

namespace linkwise::probe::detail {
namespace {

TEST(ProbeXid, ParsesTheThreeLogLayouts) {
  const std::string log =
      "[  812.402311] NVRM: Xid (PCI:0000:3B:00): 79, pid=2291, name=python3, GPU has fallen off "
      "the bus.\n"
      "Nov 30 09:12:01 node7 kernel: NVRM: Xid (PCI:0000:1a:00): 63, pid=1896, Row Remapper: New "
      "row marked for remapping, reset gpu to activate.\n"
      "4,1931,912044551,-;NVRM: Xid (PCI:0000:1a:00): 94, pid='<unknown>', name=<unknown>, "
      "Contained: SM (0x1). RST: No, D-RST: No\n"
      "6,1932,912044600,-;nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver\n"
      "[  900.1] NVRM: Xid (PCI:0000:zz:00): 13, garbage address\n"
      "[  901.2] NVRM: Xid (PCI:0000:1a:00): abc, no number\n";
  auto e = parse_xid_events(log);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].address, "0000:3b:00.0");
  EXPECT_EQ(e[0].xid, 79);
  EXPECT_EQ(e[0].text, "GPU has fallen off the bus.");
  EXPECT_EQ(e[1].address, "0000:1a:00.0");
  EXPECT_EQ(e[1].xid, 63);
  EXPECT_EQ(e[1].text, "Row Remapper: New row marked for remapping, reset gpu to activate.");
  EXPECT_EQ(e[2].xid, 94);
  EXPECT_EQ(e[2].text, "Contained: SM (0x1). RST: No, D-RST: No");
}

TEST(ProbeXid, MeaningsFollowTheCatalog) {
  EXPECT_EQ(xid_meaning(79).severity, Severity::kFault);
  EXPECT_EQ(xid_meaning(48).severity, Severity::kFault);
  EXPECT_EQ(xid_meaning(95).severity, Severity::kFault);
  EXPECT_EQ(xid_meaning(94).severity, Severity::kWarning);
  EXPECT_EQ(xid_meaning(13).severity, Severity::kWarning);
  EXPECT_EQ(xid_meaning(45).severity, Severity::kInfo);
  EXPECT_EQ(std::string(xid_meaning(999).what), "driver-reported error");
}

}  // namespace
}  // namespace linkwise::probe::detail
