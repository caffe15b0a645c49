// NCCL's transport rules and settings by name.
#include "linkwise/comm/transport.h"

#include <gtest/gtest.h>

#include "linkwise/comm/predict.h"
#include "linkwise/hw/catalog.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/topo/spec.h"
#include "linkwise/util/error.h"
#include "topo/testing/four_under_switch.h"
#include "transport_rules.h"

namespace linkwise::comm {
namespace {

using detail::choose_transport;
using detail::PairFacts;
using topo::PathType;

TEST(CommTransport, NcclsP2pRules) {
  CommOptions o;
  PairFacts f;
  f.host_gpus = 8;
  // src/graph/paths.cc: P2P up to PXB by default; beyond it SHM.
  f.path = PathType::kPix;
  EXPECT_EQ(choose_transport(f, o), Transport::kP2pPcie);
  f.path = PathType::kPxb;
  EXPECT_EQ(choose_transport(f, o), Transport::kP2pPcie);
  f.path = PathType::kPhb;
  EXPECT_EQ(choose_transport(f, o), Transport::kShm);
  f.path = PathType::kSys;
  EXPECT_EQ(choose_transport(f, o), Transport::kShm);
  // AMD x86 hosts with at most two GPUs: P2P up to SYS.
  f.amd_cpu = true;
  EXPECT_EQ(choose_transport(f, o), Transport::kShm);
  f.host_gpus = 2;
  EXPECT_EQ(choose_transport(f, o), Transport::kP2pPcie);
  // No peer access (GeForce cards): never P2P over PCIe, whatever the level.
  f.peer_access = false;
  EXPECT_EQ(choose_transport(f, o), Transport::kShm);
  o.p2p_level = "SYS";
  EXPECT_EQ(choose_transport(f, o), Transport::kShm);
  // ... but an NVLink bridge still carries P2P.
  f.nvlink = true;
  EXPECT_EQ(choose_transport(f, o), Transport::kP2pNvlink);
  // NCCL_P2P_DISABLE turns NVLink P2P off too; NCCL_SHM_DISABLE then leaves NET.
  o.p2p_disable = true;
  EXPECT_EQ(choose_transport(f, o), Transport::kShm);
  o.shm_disable = true;
  EXPECT_EQ(choose_transport(f, o), Transport::kNet);
  // NCCL_P2P_LEVEL=LOC: no P2P even over NVLink.
  CommOptions loc;
  loc.p2p_level = "LOC";
  EXPECT_EQ(choose_transport(f, loc), Transport::kShm);
}

TEST(CommTransport, SettingsByNcclNames) {
  CommOptions o;
  apply_nccl_settings(o,
                      "NCCL_P2P_LEVEL=phb,NCCL_NVLS_ENABLE=0,NCCL_ALGO=ring,tree,NCCL_PROTO=^LL,"
                      "NCCL_MAX_NCHANNELS=4",
                      "--nccl");
  EXPECT_EQ(o.p2p_level, "PHB");
  EXPECT_FALSE(o.allow_nvls);
  EXPECT_EQ(o.algos, (std::vector<Algo>{Algo::kRing, Algo::kTree}));
  EXPECT_EQ(o.protocols, (std::vector<Protocol>{Protocol::kLL128, Protocol::kSimple}));
  EXPECT_EQ(o.max_channels, 4);
  apply_nccl_settings(o, "NCCL_P2P_LEVEL=2", "--nccl");  // the legacy number for PXB
  EXPECT_EQ(o.p2p_level, "PXB");
  auto msg = [](const std::string& list) {
    CommOptions x;
    try {
      apply_nccl_settings(x, list, "--nccl");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(msg("NCCL_P2P_LEVEL=PCI"),
            "--nccl: NCCL_P2P_LEVEL=PCI: not a level NCCL has (LOC, NVL, PIX, PXB, PHB, NODE, SYS "
            "or 0-5)");
  EXPECT_EQ(msg("NCCL_P2P_DISABLE=yes"), "--nccl: NCCL_P2P_DISABLE=yes: must be 0 or 1");
  EXPECT_EQ(msg("NCCL_MAX_NCHANNELS=0"),
            "--nccl: NCCL_MAX_NCHANNELS=0: must be a whole number from 1 to 64");
  EXPECT_EQ(msg("NCCL_PROTO=LL129"),
            "--nccl: NCCL_PROTO=LL129: 'LL129' is not a protocol NCCL has (LL, LL128, Simple)");
  EXPECT_EQ(msg("P2P_LEVEL"), "--nccl: 'P2P_LEVEL' is not NAME=VALUE (e.g. NCCL_P2P_LEVEL=PHB)");
  // NCCL_SHM_LOCALITY: 1 (SHM_SEND_SIDE) or 2 (SHM_RECV_SIDE, the default), src/transport/shm.cc.
  EXPECT_EQ(CommOptions{}.shm_locality, 2);
  apply_nccl_settings(o, "NCCL_SHM_LOCALITY=1", "--nccl");
  EXPECT_EQ(o.shm_locality, 1);
  apply_nccl_settings(o, "NCCL_SHM_LOCALITY=2", "--nccl");
  EXPECT_EQ(o.shm_locality, 2);
  EXPECT_EQ(msg("NCCL_SHM_LOCALITY=3"),
            "--nccl: NCCL_SHM_LOCALITY=3: must be 1 (the sender's side) or 2 (the receiver's "
            "side, NCCL's default)");
  EXPECT_EQ(msg("NCCL_SHM_LOCALITY=sender"),
            "--nccl: NCCL_SHM_LOCALITY=sender: must be 1 (the sender's side) or 2 (the "
            "receiver's side, NCCL's default)");
  EXPECT_NE(msg("NCCL_IB_HCA=mlx5_0").find("unknown NCCL setting 'NCCL_IB_HCA'"),
            std::string::npos);
}

// Four A100 PCIe under one Gen4 switch with P2P off in the file (its `nccl:` list on lines 10-11).
const std::string kFourP2pOff =
    std::string(topo::testing::kFourUnderSwitch) + "nccl:\n  NCCL_P2P_DISABLE: 1\n";

TEST(CommTransport, ChassisFileSettingsAndCommandLine) {
  auto c = topo::build_chassis(topo::parse_chassis_spec(kFourP2pOff, "box.yaml"));
  auto o = nccl_options(c);
  EXPECT_TRUE(o.p2p_disable);
  auto p = nccl_options(c, {"NCCL_P2P_DISABLE=0"});  // the command line wins
  EXPECT_FALSE(p.p2p_disable);
  // Staged through host memory, the ring through the switch goes up to the CPU and back: every GPU
  // link and the switch uplink carry host traffic both ways, so the uplink (25 GB/s one way) is
  // shared by the four hops' writes and reads.
  Communicator shm(c, {}, o), p2p(c, {}, p);
  EXPECT_LT(shm.predict(Op::kAllReduce, 1 << 30).busbw_Bps,
            p2p.predict(Op::kAllReduce, 1 << 30).busbw_Bps);
  std::string bad = std::string(kFourP2pOff) + "  NCCL_SHM_DISABLE: maybe\n";
  auto c2 = topo::build_chassis(topo::parse_chassis_spec(bad, "box.yaml"));
  try {
    nccl_options(c2);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "box.yaml:12:3: NCCL_SHM_DISABLE=maybe: must be 0 or 1");
  }
}

TEST(CommTransport, ChassisFileShmLocality) {
  std::string text = std::string(kFourP2pOff) + "  NCCL_SHM_LOCALITY: 1\n";
  auto c = topo::build_chassis(topo::parse_chassis_spec(text, "box.yaml"));
  EXPECT_EQ(nccl_options(c).shm_locality, 1);
  EXPECT_EQ(nccl_options(c, {"NCCL_SHM_LOCALITY=2"}).shm_locality, 2);  // the command line wins
  std::string bad = std::string(kFourP2pOff) + "  NCCL_SHM_LOCALITY: 0\n";
  auto c2 = topo::build_chassis(topo::parse_chassis_spec(bad, "box.yaml"));
  try {
    nccl_options(c2);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "box.yaml:12:3: NCCL_SHM_LOCALITY=0: must be 1 (the sender's side) or 2 (the "
                 "receiver's side, NCCL's default)");
  }
}

TEST(CommTransport, NoP2pNoShmAndNoNicIsAnError) {
  // With P2P and SHM both off NCCL falls back to its NET transport between GPUs of one host
  // (src/transport.cc: p2p, shm, net in that order), which needs a network device: NCCL's
  // environment documentation (NCCL_SHM_DISABLE) says NCCL then uses the network, InfiniBand or
  // IP sockets. kFourP2pOff has no NIC: every pair is left without a transport to time.
  auto c = topo::build_chassis(topo::parse_chassis_spec(kFourP2pOff, "box.yaml"));
  auto msg = [&](const std::vector<std::string>& cli) {
    try {
      Communicator comm(c, {}, nccl_options(c, cli));
      comm.predict(Op::kAllReduce, 1 << 30);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string off = msg({"NCCL_SHM_DISABLE=1"});
  EXPECT_NE(off.find("NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1"), std::string::npos) << off;
  EXPECT_NE(off.find("NET transport"), std::string::npos) << off;
  EXPECT_NE(off.find("no NIC"), std::string::npos) << off;
  // P2P back on (PIX, within NCCL's default level): no NET, no error; the same with SHM alone.
  EXPECT_EQ(msg({"NCCL_SHM_DISABLE=1,NCCL_P2P_DISABLE=0"}), "no error");
  EXPECT_EQ(msg({}), "no error");
  // P2P allowed but not reaching the pair (NCCL_P2P_LEVEL=LOC): the message names that instead.
  const std::string loc = msg({"NCCL_P2P_DISABLE=0,NCCL_P2P_LEVEL=LOC,NCCL_SHM_DISABLE=1"});
  EXPECT_NE(loc.find("beyond NCCL_P2P_LEVEL=LOC and NCCL_SHM_DISABLE=1"), std::string::npos) << loc;
}

TEST(CommTransport, SmWritesOverPcieCarry128BytePayloads) {
  // NCCL's P2P and SHM transports write with the SMs: 128 B per TLP against the copy engines' 256 B
  // (NVIDIA, nccl-tests issue 149), 24 B of overhead each (4 DW header, LCRC, framing):
  // (128 / 152) / (256 / 280) = 0.92105. nvbandwidth issue 24 measured 52.77 / 57.0 = 0.926 on H100
  // Gen5 (SM writes to host memory against copy-engine copies): within 1 %.
  const auto& cat = hw::Catalog::builtin();
  for (const char* id : {"pcie3", "pcie4", "pcie5"})
    EXPECT_NEAR(detail::sm_write_share(cat.link_tech(id)), 0.92105, 1e-5) << id;
  EXPECT_NEAR(detail::sm_write_share(cat.link_tech("pcie5")), 52.77 / 57.0, 0.01);
  EXPECT_EQ(detail::sm_write_share(cat.link_tech("nvlink4")), 1.0);
  EXPECT_EQ(detail::sm_write_share(cat.link_tech("pcie6")), 1.0);
}

}  // namespace
}  // namespace linkwise::comm
