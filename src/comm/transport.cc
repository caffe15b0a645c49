// NCCL settings by name, and the transport names. The per-pair choice itself is made by
// detail::choose_transport (transport_rules.h), used by the router.
#include "linkwise/comm/transport.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "linkwise/comm/predict.h"
#include "linkwise/hw/catalog.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"
#include "transport_rules.h"

namespace linkwise::comm {

const char* to_string(Transport t) {
  switch (t) {
    case Transport::kP2pNvlink:
      return "P2P/NVLink";
    case Transport::kP2pPcie:
      return "P2P/PCIe";
    case Transport::kShm:
      return "SHM";
    case Transport::kNet:
      return "NET";
  }
  return "?";
}

namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

[[noreturn]] void bad(const std::string& where, const std::string& name, const std::string& value,
                      const std::string& why) {
  throw InputError(fmt::format("{}: {}={}: {}", where, name, value, why));
}

bool parse_bool(const std::string& where, const std::string& name, const std::string& value) {
  if (value == "0") return false;
  if (value == "1") return true;
  bad(where, name, value, "must be 0 or 1");
}

int parse_channels(const std::string& where, const std::string& name, const std::string& value) {
  int v = 0;
  std::size_t used = 0;
  try {
    v = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || value.empty() || v < 1 || v > 64)
    bad(where, name, value, "must be a whole number from 1 to 64");
  return v;
}

std::vector<std::string> split(const std::string& s, const std::string& seps) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (seps.find(c) != std::string::npos) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(trim(cur));
  return out;
}

}  // namespace

void apply_nccl_setting(CommOptions& o, const std::string& raw_name, const std::string& raw_value,
                        const std::string& where) {
  const std::string name = trim(raw_name);
  const std::string value = trim(raw_value);
  if (name == "NCCL_P2P_LEVEL") {
    // NCCL takes the names or the legacy numbers 0-5 (src/graph/paths.cc, ncclGetLevel /
    // levelsOldToNew).
    static const char* legacy[] = {"LOC", "PIX", "PXB", "PHB", "SYS", "SYS"};
    std::string v = upper(value);
    if (v.size() == 1 && v[0] >= '0' && v[0] <= '5') v = legacy[v[0] - '0'];
    if (!detail::parse_path_level(v))
      bad(where, name, value, "not a level NCCL has (LOC, NVL, PIX, PXB, PHB, NODE, SYS or 0-5)");
    o.p2p_level = v;
  } else if (name == "NCCL_P2P_DISABLE") {
    o.p2p_disable = parse_bool(where, name, value);
  } else if (name == "NCCL_SHM_DISABLE") {
    o.shm_disable = parse_bool(where, name, value);
  } else if (name == "NCCL_NVLS_ENABLE") {
    o.allow_nvls = parse_bool(where, name, value);
  } else if (name == "NCCL_ALGO" || name == "NCCL_PROTO") {
    // NCCL: a list, optionally starting with '^' to exclude (src/graph/tuning.cc, parseList).
    std::string v = value;
    bool exclude = !v.empty() && v[0] == '^';
    if (exclude) v = v.substr(1);
    const bool algo = name == "NCCL_ALGO";
    static const std::vector<std::pair<std::string, Algo>> algos = {
        {"RING", Algo::kRing}, {"TREE", Algo::kTree}, {"NVLS", Algo::kNvls}};
    static const std::vector<std::pair<std::string, Protocol>> protos = {
        {"LL", Protocol::kLL}, {"LL128", Protocol::kLL128}, {"SIMPLE", Protocol::kSimple}};
    std::vector<bool> chosen(3, exclude);
    for (const auto& item : split(v, ",;+")) {
      std::string u = upper(item);
      bool found = false;
      for (std::size_t i = 0; i < 3; ++i)
        if (algo ? algos[i].first == u : protos[i].first == u) chosen[i] = !exclude, found = true;
      if (!found) {
        // Algorithms NCCL has that this model does not: named so the user knows why.
        if (algo && (u == "COLLNET" || u == "COLLNETDIRECT" || u == "COLLNETCHAIN" ||
                     u == "NVLSTREE" || u == "PAT"))
          bad(where, name, value,
              fmt::format(
                  "'{}' is an NCCL algorithm this model does not have (modelled: ring, tree, nvls)",
                  item));
        bad(where, name, value,
            fmt::format("'{}' is not {} NCCL has ({})", item, algo ? "an algorithm" : "a protocol",
                        algo ? "ring, tree, nvls" : "LL, LL128, Simple"));
      }
    }
    if (algo) {
      o.algos.clear();
      for (std::size_t i = 0; i < 3; ++i)
        if (chosen[i]) o.algos.push_back(algos[i].second);
      if (o.algos.empty()) bad(where, name, value, "leaves no algorithm");
    } else {
      o.protocols.clear();
      for (std::size_t i = 0; i < 3; ++i)
        if (chosen[i]) o.protocols.push_back(protos[i].second);
      if (o.protocols.empty()) bad(where, name, value, "leaves no protocol");
    }
  } else if (name == "NCCL_SHM_LOCALITY") {
    // src/transport/shm.cc: SHM_SEND_SIDE 1, SHM_RECV_SIDE 2 (the default). NCCL warns and keeps 2
    // for any other value ("Ignoring SHM locality"); here it is refused, as a value NCCL does not
    // take.
    if (value != "1" && value != "2")
      bad(where, name, value,
          "must be 1 (the sender's side) or 2 (the receiver's side, NCCL's default)");
    o.shm_locality = value == "1" ? 1 : 2;
  } else if (name == "NCCL_MAX_NCHANNELS") {
    o.max_channels = parse_channels(where, name, value);
  } else if (name == "NCCL_MIN_NCHANNELS") {
    o.min_channels = parse_channels(where, name, value);
  } else {
    throw InputError(fmt::format(
        "{}: unknown NCCL setting '{}' (value '{}'); known: NCCL_P2P_LEVEL, NCCL_P2P_DISABLE, "
        "NCCL_SHM_DISABLE, NCCL_SHM_LOCALITY, NCCL_NVLS_ENABLE, NCCL_ALGO, NCCL_PROTO, "
        "NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS",
        where, name, value));
  }
}

void apply_nccl_settings(CommOptions& o, const std::string& list, const std::string& where) {
  if (trim(list).empty()) throw InputError(fmt::format("{}: empty list of NCCL settings", where));
  // NCCL_ALGO and NCCL_PROTO values are lists themselves: an item without '=' right after one of
  // them continues its value (NCCL_ALGO=ring,tree,NCCL_PROTO=Simple).
  std::vector<std::pair<std::string, std::string>> settings;
  for (const auto& item : split(list, ",")) {
    auto eq = item.find('=');
    if (eq == std::string::npos && !settings.empty() &&
        (settings.back().first == "NCCL_ALGO" || settings.back().first == "NCCL_PROTO") &&
        !item.empty()) {
      settings.back().second += "," + item;
      continue;
    }
    if (eq == std::string::npos || eq == 0)
      throw InputError(
          fmt::format("{}: '{}' is not NAME=VALUE (e.g. NCCL_P2P_LEVEL=PHB)", where, item));
    settings.emplace_back(trim(item.substr(0, eq)), item.substr(eq + 1));
  }
  for (const auto& [name, value] : settings) apply_nccl_setting(o, name, value, where);
}

CommOptions nccl_options(const topo::Chassis& chassis, const std::vector<std::string>& cli) {
  CommOptions o;
  for (const auto& x : chassis.spec().nccl) {
    std::string where = x.where.prefix();
    while (!where.empty() && (where.back() == ' ' || where.back() == ':')) where.pop_back();
    apply_nccl_setting(o, x.name, x.value, where.empty() ? "nccl" : where);
  }
  for (const auto& list : cli) apply_nccl_settings(o, list, "--nccl");
  return o;
}

const char* nccl_settings_help() {
  return "NCCL_P2P_LEVEL=LOC|NVL|PIX|PXB|PHB|NODE|SYS, NCCL_P2P_DISABLE=0|1, NCCL_SHM_DISABLE=0|1, "
         "NCCL_NVLS_ENABLE=0|1, NCCL_ALGO=ring+tree+nvls (or ^x), NCCL_PROTO=LL+LL128+Simple (or "
         "^x), "
         "NCCL_MIN_NCHANNELS=n, NCCL_MAX_NCHANNELS=n, NCCL_SHM_LOCALITY=1|2";
}

}  // namespace linkwise::comm

namespace linkwise::comm::detail {

std::optional<topo::PathType> parse_path_level(const std::string& name) {
  using topo::PathType;
  if (name == "LOC") return PathType::kSelf;
  if (name == "NVL") return PathType::kNvlink;
  if (name == "PIX") return PathType::kPix;
  if (name == "PXB") return PathType::kPxb;
  if (name == "PHB") return PathType::kPhb;
  if (name == "NODE") return PathType::kNode;
  if (name == "SYS") return PathType::kSys;
  return std::nullopt;
}

Transport choose_transport(const PairFacts& f, const CommOptions& o) {
  using topo::PathType;
  // src/graph/paths.cc, ncclTopoCheckP2p: PXB by default; SYS on AMD x86 hosts with at most two
  // GPUs; NCCL_P2P_LEVEL overrides.
  PathType level = f.amd_cpu && f.host_gpus <= 2 ? PathType::kSys : PathType::kPxb;
  if (!o.p2p_level.empty()) {
    auto l = parse_path_level(o.p2p_level);
    if (!l) throw InputError(fmt::format("NCCL_P2P_LEVEL={}: not a level NCCL has", o.p2p_level));
    level = *l;
  }
  const PathType path = f.nvlink ? PathType::kNvlink : f.path;
  // NVML's P2P status gates PCIe peers only: NVLink-bridged cards reach each other over the bridge.
  const bool p2p = !o.p2p_disable && path <= level && (f.nvlink || f.peer_access);
  if (p2p) return f.nvlink ? Transport::kP2pNvlink : Transport::kP2pPcie;
  if (!o.shm_disable) return Transport::kShm;  // src/transport/shm.cc, shmCanConnect
  return Transport::kNet;
}

double sm_write_share(const hw::LinkTech& tech) {
  if (tech.family != hw::LinkFamily::kPcie || tech.generation >= 6) return 1.0;
  using P = PcieWritePayload;
  return (P::kSmBytes / (P::kSmBytes + P::kTlpOverheadBytes)) /
         (P::kCeBytes / (P::kCeBytes + P::kTlpOverheadBytes));
}

}  // namespace linkwise::comm::detail
