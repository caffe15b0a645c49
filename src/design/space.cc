#include "linkwise/design/space.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <tuple>

#include "linkwise/hw/catalog.h"
#include "linkwise/topo/budget.h"
#include "linkwise/util/text.h"
#include "util/yaml_util.h"

namespace linkwise::design {

using detail::as_double;
using detail::as_int;
using detail::as_string;
using detail::check_keys;
using detail::location_of;

const char* to_string(Fabric f) {
  switch (f) {
    case Fabric::kNone:
      return "none";
    case Fabric::kNvSwitch:
      return "nvswitch";
    case Fabric::kMesh:
      return "mesh";
    case Fabric::kBridgePairs:
      return "bridge-pairs";
    case Fabric::kBridgeFours:
      return "bridge-fours";
  }
  return "?";
}

const char* to_string(Arrangement a) {
  switch (a) {
    case Arrangement::kRootPorts:
      return "root-ports";
    case Arrangement::kSwitchPer2:
      return "switch-per-2";
    case Arrangement::kSwitchPer4:
      return "switch-per-4";
    case Arrangement::kCascaded:
      return "cascaded";
  }
  return "?";
}

namespace {

struct GpuCombo {
  int choice, count;
  Fabric fabric;
};
struct CpuCombo {
  int choice, sockets;
};
struct NicCombo {
  int choice, count;  ///< choice -1: no NIC
};

std::vector<GpuCombo> gpu_combos(const DesignSpace& s) {
  std::vector<GpuCombo> out;
  for (int i = 0; i < static_cast<int>(s.gpus.size()); ++i)
    for (int c : s.gpus[i].counts)
      for (Fabric f : s.gpus[i].fabrics) out.push_back({i, c, f});
  return out;
}
std::vector<CpuCombo> cpu_combos(const DesignSpace& s) {
  std::vector<CpuCombo> out;
  for (int i = 0; i < static_cast<int>(s.cpus.size()); ++i)
    for (int k : s.cpus[i].sockets) out.push_back({i, k});
  return out;
}
std::vector<NicCombo> nic_combos(const DesignSpace& s) {
  std::vector<NicCombo> out;
  for (int i = 0; i < static_cast<int>(s.nics.size()); ++i)
    for (int c : s.nics[i].counts) out.push_back({i, c});
  if (out.empty()) out.push_back({-1, 0});
  return out;
}

template <typename T>
std::vector<T> parse_list(const YAML::Node& n, const std::string& file, const char* what,
                          T (*one)(const YAML::Node&, const std::string&, const char*)) {
  std::vector<T> out;
  if (!n.IsSequence() || n.size() == 0)
    throw InputError(fmt::format("'{}' must be a non-empty list", what), location_of(n, file));
  for (const auto& x : n) out.push_back(one(x, file, what));
  return out;
}

int read_int(const YAML::Node& n, const std::string& file, const char* what) {
  return as_int(n, file, what);
}
std::string read_string(const YAML::Node& n, const std::string& file, const char* what) {
  return as_string(n, file, what);
}

Fabric read_fabric(const YAML::Node& n, const std::string& file, const char*) {
  std::string s = as_string(n, file, "fabric");
  for (Fabric f : {Fabric::kNone, Fabric::kNvSwitch, Fabric::kMesh, Fabric::kBridgePairs,
                   Fabric::kBridgeFours})
    if (s == to_string(f)) return f;
  throw InputError(
      fmt::format("unknown fabric '{}' (none, nvswitch, mesh, bridge-pairs, bridge-fours)", s),
      location_of(n, file));
}

Arrangement read_arrangement(const YAML::Node& n, const std::string& file, const char*) {
  std::string s = as_string(n, file, "arrangement");
  for (Arrangement a : {Arrangement::kRootPorts, Arrangement::kSwitchPer2, Arrangement::kSwitchPer4,
                        Arrangement::kCascaded})
    if (s == to_string(a)) return a;
  throw InputError(
      fmt::format(
          "unknown PCIe arrangement '{}' (root-ports, switch-per-2, switch-per-4, cascaded)", s),
      location_of(n, file));
}

void check_part(const std::string& id, hw::PartKind kind, const YAML::Node& n,
                const std::string& file) {
  try {
    hw::Catalog::builtin().part(id, kind);
  } catch (const InputError& e) {
    throw InputError(e.bare_message(), location_of(n, file));
  }
}

void check_range(int v, int lo, int hi, const YAML::Node& n, const std::string& file,
                 const char* what) {
  if (v < lo || v > hi)
    throw InputError(fmt::format("'{}' must be {} to {}, not {}", what, lo, hi, v),
                     location_of(n, file));
}

IoSpec parse_io(const YAML::Node& n, const std::string& file, hw::PartKind kind, const char* what) {
  check_keys(n, {"part", "counts", "count", "width"}, file, what);
  if (!n["part"]) throw InputError(fmt::format("{} needs 'part'", what), location_of(n, file));
  IoSpec io;
  io.part = as_string(n["part"], file, "part");
  check_part(io.part, kind, n["part"], file);
  if (n["counts"]) io.counts = parse_list<int>(n["counts"], file, "counts", read_int);
  if (n["count"]) io.counts = {as_int(n["count"], file, "count")};
  if (io.counts.empty()) io.counts = {1};
  for (int c : io.counts) check_range(c, 0, 64, n, file, "count");
  if (n["width"]) io.width = as_int(n["width"], file, "width");
  check_range(io.width, 1, 16, n, file, "width");
  return io;
}

Workload parse_workload(const YAML::Node& n, const std::string& file) {
  check_keys(n,
             {"name", "kind", "weight", "model", "mode", "precision", "recompute", "seq",
              "micro_batch", "global_batch", "lora_rank", "offload", "min_tokens_per_s", "input",
              "output", "concurrency", "tp"},
             file, "a workload");
  Workload w;
  w.where = location_of(n, file);
  if (!n["name"] || !n["model"]) throw InputError("a workload needs 'name' and 'model'", w.where);
  w.name = as_string(n["name"], file, "name");
  w.model = as_string(n["model"], file, "model");
  if (n["kind"]) w.kind = as_string(n["kind"], file, "kind");
  if (w.kind != "train" && w.kind != "serve")
    throw InputError(fmt::format("unknown workload kind '{}' (train, serve)", w.kind),
                     location_of(n["kind"], file));
  for (auto [key, field, hi] :
       {std::tuple{"input", &w.input, 1 << 20}, std::tuple{"output", &w.output, 1 << 20},
        std::tuple{"concurrency", &w.concurrency, 1 << 16}, std::tuple{"tp", &w.tp, 64}})
    if (n[key]) {
      if (w.kind != "serve")
        throw InputError(fmt::format("'{}' applies to kind: serve workloads", key),
                         location_of(n[key], file));
      *field = as_int(n[key], file, key);
      check_range(*field, std::string(key) == "tp" ? 0 : 1, hi, n[key], file, key);
    }
  if (n["weight"]) w.weight = as_double(n["weight"], file, "weight");
  if (!(w.weight > 0 && w.weight <= 1e6))
    throw InputError(fmt::format("'weight' must be above 0 and at most 1e6, not {}", w.weight),
                     location_of(n["weight"], file));
  if (n["mode"]) w.mode = as_string(n["mode"], file, "mode");
  if (n["precision"]) w.precision = as_string(n["precision"], file, "precision");
  if (n["recompute"]) w.recompute = as_string(n["recompute"], file, "recompute");
  if (n["seq"]) w.seq = as_int(n["seq"], file, "seq");
  if (n["micro_batch"]) w.micro_batch = as_int(n["micro_batch"], file, "micro_batch");
  if (n["global_batch"]) w.global_batch = as_int(n["global_batch"], file, "global_batch");
  if (n["lora_rank"]) w.lora_rank = as_int(n["lora_rank"], file, "lora_rank");
  if (n["offload"]) w.offload = n["offload"].as<std::string>() == "true";
  if (n["min_tokens_per_s"]) {
    w.min_tokens_per_s = as_double(n["min_tokens_per_s"], file, "min_tokens_per_s");
    if (*w.min_tokens_per_s < 0)
      throw InputError("'min_tokens_per_s' must not be negative",
                       location_of(n["min_tokens_per_s"], file));
  }
  return w;
}

}  // namespace

std::vector<int> DesignSpace::radices() const {
  return {static_cast<int>(gpu_combos(*this).size()), static_cast<int>(cpu_combos(*this).size()),
          static_cast<int>(pcie_generations.size()),  static_cast<int>(arrangements.size()),
          static_cast<int>(uplink_widths.size()),     static_cast<int>(materials.size()),
          static_cast<int>(nic_combos(*this).size())};
}

std::uint64_t DesignSpace::candidate_count() const {
  std::uint64_t n = 1;  // saturates: a space too large to count is too large to search
  for (int r : radices()) {
    auto k = static_cast<std::uint64_t>(std::max(r, 0));
    n = (k != 0 && n > UINT64_MAX / k) ? UINT64_MAX : n * k;
  }
  return n;
}

std::vector<int> DesignSpace::choice(std::uint64_t i) const {
  auto r = radices();
  std::vector<int> out(r.size());
  for (int k = static_cast<int>(r.size()) - 1; k >= 0; --k) {
    out[k] = static_cast<int>(i % r[k]);
    i /= r[k];
  }
  return out;
}

DesignSpace parse_space(const std::string& text, const std::string& file) {
  YAML::Node root = detail::load_yaml(text, file);
  if (!root.IsMap())
    throw InputError("a design space file must be a map (docs/design-format.md)",
                     location_of(root, file));
  check_keys(root,
             {"name", "description", "gpus", "cpus", "pcie", "nvswitch", "board", "nics", "nvme",
              "budgets", "workloads"},
             file, "the design space");
  DesignSpace s;
  s.file = file;
  if (root["name"]) s.name = as_string(root["name"], file, "name");
  if (root["description"]) s.description = as_string(root["description"], file, "description");
  for (const char* key : {"gpus", "cpus", "workloads"})
    if (!root[key] || !root[key].IsSequence() || root[key].size() == 0)
      throw InputError(fmt::format("the design space needs a non-empty '{}' list", key),
                       location_of(root[key] ? root[key] : root, file));
  for (const auto& g : root["gpus"]) {
    check_keys(g, {"part", "counts", "fabrics"}, file, "a GPU choice");
    if (!g["part"] || !g["counts"])
      throw InputError("a GPU choice needs 'part' and 'counts'", location_of(g, file));
    GpuChoice c;
    c.where = location_of(g, file);
    c.part = as_string(g["part"], file, "part");
    check_part(c.part, hw::PartKind::kGpu, g["part"], file);
    c.counts = parse_list<int>(g["counts"], file, "counts", read_int);
    for (int n : c.counts) check_range(n, 1, 64, g["counts"], file, "counts");
    c.fabrics = g["fabrics"] ? parse_list<Fabric>(g["fabrics"], file, "fabrics", read_fabric)
                             : std::vector<Fabric>{Fabric::kNone};
    s.gpus.push_back(c);
  }
  for (const auto& g : root["cpus"]) {
    check_keys(g, {"part", "sockets", "socket_links"}, file, "a CPU choice");
    if (!g["part"]) throw InputError("a CPU choice needs 'part'", location_of(g, file));
    CpuChoice c;
    c.where = location_of(g, file);
    c.part = as_string(g["part"], file, "part");
    check_part(c.part, hw::PartKind::kCpu, g["part"], file);
    c.sockets = g["sockets"] ? parse_list<int>(g["sockets"], file, "sockets", read_int)
                             : std::vector<int>{1};
    for (int n : c.sockets) check_range(n, 1, 2, g["sockets"], file, "sockets");
    if (g["socket_links"]) {
      c.socket_links = as_int(g["socket_links"], file, "socket_links");
      check_range(*c.socket_links, 1, 8, g["socket_links"], file, "socket_links");
    }
    s.cpus.push_back(c);
  }
  s.pcie_generations = {5};
  s.arrangements = {Arrangement::kRootPorts};
  if (const auto& p = root["pcie"]) {
    check_keys(p, {"generations", "arrangements", "uplink_widths", "switch", "retimer"}, file,
               "'pcie'");
    if (p["generations"])
      s.pcie_generations = parse_list<int>(p["generations"], file, "generations", read_int);
    for (int g : s.pcie_generations) check_range(g, 3, 6, p["generations"], file, "generations");
    if (p["arrangements"])
      s.arrangements =
          parse_list<Arrangement>(p["arrangements"], file, "arrangements", read_arrangement);
    if (p["uplink_widths"])
      s.uplink_widths = parse_list<int>(p["uplink_widths"], file, "uplink_widths", read_int);
    for (int w : s.uplink_widths)
      if (w != 4 && w != 8 && w != 16)
        throw InputError(fmt::format("uplink width {} (4, 8, 16)", w),
                         location_of(p["uplink_widths"], file));
    if (p["switch"]) {
      s.pcie_switch = as_string(p["switch"], file, "switch");
      check_part(s.pcie_switch, hw::PartKind::kPcieSwitch, p["switch"], file);
    }
    if (p["retimer"]) {
      s.retimer = as_string(p["retimer"], file, "retimer");
      check_part(s.retimer, hw::PartKind::kRetimer, p["retimer"], file);
    }
  }
  bool switched = std::any_of(s.arrangements.begin(), s.arrangements.end(),
                              [](Arrangement a) { return a != Arrangement::kRootPorts; });
  if (switched && s.pcie_switch.empty())
    throw InputError("switch arrangements need 'pcie.switch' (a PCIe switch part)",
                     location_of(root["pcie"], file));
  if (const auto& n = root["nvswitch"]) {
    check_keys(n, {"part", "count"}, file, "'nvswitch'");
    if (!n["part"]) throw InputError("'nvswitch' needs 'part'", location_of(n, file));
    s.nvswitch = as_string(n["part"], file, "part");
    check_part(s.nvswitch, hw::PartKind::kNvSwitch, n["part"], file);
    if (n["count"]) s.nvswitch_count = as_int(n["count"], file, "count");
    check_range(s.nvswitch_count, 1, 64, n, file, "count");
  }
  for (const auto& g : s.gpus)
    if (std::count(g.fabrics.begin(), g.fabrics.end(), Fabric::kNvSwitch) && s.nvswitch.empty())
      throw InputError("the nvswitch fabric needs 'nvswitch: {part: ...}'", g.where);
  if (const auto& b = root["board"]) {
    check_keys(b, {"materials", "slots", "uplink"}, file, "'board'");
    if (b["materials"])
      s.materials = parse_list<std::string>(b["materials"], file, "materials", read_string);
    const auto& cat = hw::Catalog::builtin();
    auto check_material = [&](const std::string& m, const YAML::Node& at) {
      if (cat.find_material(m)) return;
      std::vector<std::string> ids;
      for (const auto& x : cat.materials()) ids.push_back(x.id);
      std::string hint = did_you_mean(m, ids);
      throw InputError(
          fmt::format("unknown board material '{}'{}", m, hint.empty() ? "" : "; " + hint),
          location_of(at, file));
    };
    for (const auto& m : s.materials) check_material(m, b["materials"]);
    if (const auto& sl = b["slots"]) {
      if (!sl.IsSequence())
        throw InputError("'slots' must be a list of {trace_mm, connectors}", location_of(sl, file));
      for (const auto& x : sl) {
        check_keys(x, {"trace_mm", "connectors"}, file, "a slot");
        SlotSpec slot;
        if (x["trace_mm"]) slot.trace_mm = as_double(x["trace_mm"], file, "trace_mm");
        if (x["connectors"]) slot.connectors = as_int(x["connectors"], file, "connectors");
        if (slot.trace_mm < 0 || slot.trace_mm > 1e5)
          throw InputError("'trace_mm' must be 0 to 100000", location_of(x, file));
        check_range(slot.connectors, 0, 16, x, file, "connectors");
        s.slots.push_back(slot);
      }
    }
    if (const auto& u = b["uplink"]) {
      check_keys(u, {"trace_mm", "material", "connectors"}, file, "'board.uplink'");
      if (u["trace_mm"]) s.uplink_trace_mm = as_double(u["trace_mm"], file, "trace_mm");
      if (s.uplink_trace_mm < 0 || s.uplink_trace_mm > 1e5)
        throw InputError("'trace_mm' must be 0 to 100000", location_of(u, file));
      if (u["material"]) s.uplink_material = as_string(u["material"], file, "material");
      check_material(s.uplink_material, u);
      if (u["connectors"]) s.uplink_connectors = as_int(u["connectors"], file, "connectors");
      check_range(s.uplink_connectors, 0, 16, u, file, "connectors");
    }
  }
  if (const auto& n = root["nics"]) {
    if (!n.IsSequence())
      throw InputError("'nics' must be a list of {part, counts}", location_of(n, file));
    for (const auto& x : n) s.nics.push_back(parse_io(x, file, hw::PartKind::kNic, "a NIC choice"));
  }
  if (const auto& n = root["nvme"]) {
    s.nvme = parse_io(n, file, hw::PartKind::kNvme, "'nvme'");
    if (s.nvme->counts.size() != 1)
      throw InputError("'nvme' takes one 'count'", location_of(n, file));
    if (!n["width"]) s.nvme->width = 4;
  }
  if (const auto& b = root["budgets"]) {
    check_keys(b, {"power", "cooling_zones", "max_cost_usd", "prices_usd"}, file, "'budgets'");
    // The chassis parser reads power, cost and prices; zones carry the node kinds they cool here.
    YAML::Node copy = YAML::Clone(b);
    copy.remove("cooling_zones");
    YAML::Emitter e;
    e << YAML::BeginMap << YAML::Key << "nodes" << YAML::Value
      << YAML::Load("[{id: c, kind: cpu, part: epyc-9654}]") << YAML::Key << "budgets"
      << YAML::Value << copy << YAML::EndMap;
    try {
      s.budgets = topo::parse_chassis_spec(e.c_str(), file).budgets;
    } catch (const InputError& err) {
      throw InputError(err.bare_message(), location_of(b, file));
    }
    s.budgets.where = location_of(b, file);
    if (const auto& z = b["cooling_zones"]) {
      if (!z.IsSequence()) throw InputError("'cooling_zones' must be a list", location_of(z, file));
      for (const auto& x : z) {
        check_keys(x, {"id", "capacity_w", "kinds"}, file, "a cooling zone");
        if (!x["id"] || !x["capacity_w"] || !x["kinds"])
          throw InputError("a cooling zone needs 'id', 'capacity_w' and 'kinds'",
                           location_of(x, file));
        ZoneSpec zs{as_string(x["id"], file, "id"), as_double(x["capacity_w"], file, "capacity_w"),
                    parse_list<std::string>(x["kinds"], file, "kinds", read_string)};
        for (const auto& k : zs.kinds)
          if (!hw::part_kind_from_string(k))
            throw InputError(fmt::format("unknown node kind '{}'", k),
                             location_of(x["kinds"], file));
        if (zs.capacity_w < 0)
          throw InputError("'capacity_w' must not be negative", location_of(x, file));
        s.zones.push_back(zs);
        s.budgets.cooling_zones.push_back({zs.id, zs.capacity_w, location_of(x, file)});
      }
    }
  }
  for (const auto& w : root["workloads"]) s.workloads.push_back(parse_workload(w, file));
  std::set<std::string> names;
  for (const auto& w : s.workloads)
    if (!names.insert(w.name).second)
      throw InputError(fmt::format("duplicate workload name '{}'", w.name), w.where);
  if (s.name.empty()) s.name = "design-space";
  if (s.candidate_count() > kMaxCandidates)
    throw InputError(
        fmt::format(
            "the design space has {} candidates; at most {} (split it, or narrow a choice list)",
            s.candidate_count(), kMaxCandidates),
        location_of(root, file));
  return s;
}

DesignSpace load_space(const std::string& path) { return parse_space(read_file(path), path); }

// ------------------------------------------------------------------------------------------------
// candidates

namespace {

struct SpecBuilder {
  const DesignSpace& space;
  const hw::Catalog& cat;
  topo::ChassisSpec spec;
  std::map<std::string, int> next_rc;  ///< per CPU: next root complex number
  int retimers = 0;

  std::string zone_of(const std::string& kind) const {
    for (const auto& z : space.zones)
      if (std::count(z.kinds.begin(), z.kinds.end(), kind)) return z.id;
    return "";
  }
  void node(const std::string& id, const std::string& kind, const std::string& part) {
    topo::NodeSpec n;
    n.id = id, n.kind = kind, n.part = part, n.zone = zone_of(kind);
    spec.nodes.push_back(n);
  }
  int gen_of(const std::string& part) const {
    const auto* t = cat.find_link_tech(cat.part(part).attr("pcie"));
    return t ? t->generation : 6;
  }
  // A PCIe link from `up` (CPU or switch) to `down`, at the lowest generation of the two ends and
  // the space's, with retimers inserted where the channel would exceed its loss budget.
  void pcie(const std::string& up, const std::string& up_part, bool up_is_cpu,
            const std::string& down, const std::string& down_part, int gen, int width,
            double trace_mm, const std::string& material, int connectors) {
    gen = std::min({gen, gen_of(up_part), gen_of(down_part)});
    std::string tech = fmt::format("pcie{}", gen);
    std::optional<int> rc;
    if (up_is_cpu) rc = next_rc[up]++;
    int pieces = 1;
    if (trace_mm > 0 && !space.retimer.empty() && cat.channel_budget(tech)) {
      auto ch = topo::channel_loss(tech, trace_mm, material, connectors, 0, cat);
      if (ch.retimers_needed > 0) pieces = ch.retimers_needed + 1;
    }
    std::string from = up;
    for (int i = 0; i < pieces; ++i) {
      std::string to = down;
      if (i + 1 < pieces) {
        to = fmt::format("rt{}", retimers++);
        node(to, "retimer", space.retimer);
      }
      topo::LinkSpec l;
      l.a = from, l.b = to, l.tech = tech, l.width = width;
      if (trace_mm > 0) l.trace_mm = trace_mm / pieces, l.material = material;
      if (i == 0) l.connectors = connectors, l.root_complex = rc;
      spec.links.push_back(l);
      from = to;
    }
  }
};

}  // namespace

std::optional<topo::ChassisSpec> make_candidate(const DesignSpace& space,
                                                const std::vector<int>& choice, Candidate* out,
                                                std::string* why) {
  const auto& cat = hw::Catalog::builtin();
  auto g = gpu_combos(space)[choice.at(0)];
  auto c = cpu_combos(space)[choice.at(1)];
  int gen = space.pcie_generations[choice.at(2)];
  Arrangement arr = space.arrangements[choice.at(3)];
  int uplink = space.uplink_widths[choice.at(4)];
  const std::string& material = space.materials[choice.at(5)];
  auto nc = nic_combos(space)[choice.at(6)];
  const auto& gc = space.gpus[g.choice];
  const auto& cc = space.cpus[c.choice];
  const auto& gpu = cat.part(gc.part, hw::PartKind::kGpu);
  const auto& cpu = cat.part(cc.part, hw::PartKind::kCpu);
  int n = g.count, s = c.sockets;
  Candidate cand;
  cand.gpu = gc.part, cand.cpu = cc.part, cand.material = material, cand.gpus = n, cand.sockets = s;
  cand.generation = gen, cand.uplink_width = uplink, cand.fabric = g.fabric, cand.arrangement = arr;
  cand.nic = nc.choice >= 0 ? space.nics[nc.choice].part : "", cand.nics = nc.count;
  cand.name = fmt::format(
      "{}x {} {}, {}x {}, pcie{} {}{}, {}{}", n, gc.part, to_string(g.fabric), s, cc.part, gen,
      to_string(arr), arr == Arrangement::kRootPorts ? "" : fmt::format(" x{}", uplink), material,
      nc.count > 0 ? fmt::format(", {}x {}", nc.count, cand.nic) : "");
  if (out) *out = cand;
  auto fail = [&](std::string w) -> std::optional<topo::ChassisSpec> {
    if (why) *why = std::move(w);
    return std::nullopt;
  };
  int links = static_cast<int>(gpu.get("nvlink_links"));
  if (g.fabric != Fabric::kNone && links <= 0) return fail("fabric needs NVLink");
  if (g.fabric == Fabric::kMesh && (n < 2 || links < n - 1))
    return fail("too few NVLink links for a mesh");
  if (g.fabric == Fabric::kBridgePairs && n % 2) return fail("bridges need GPUs in pairs");
  if (g.fabric == Fabric::kBridgeFours && n % 4) return fail("bridges need GPUs in fours");
  if (n % s) return fail("GPUs do not split over the sockets");
  if (s == 2 && cpu.attr("socket").empty()) return fail("single-socket CPU");
  int per_switch = arr == Arrangement::kSwitchPer4 ? 4 : 2;
  int switches = arr == Arrangement::kRootPorts ? 0 : n / per_switch;
  if (arr != Arrangement::kRootPorts && (n % per_switch || switches % s))
    return fail("GPUs do not split over the switches");

  SpecBuilder b{space, cat, {}, {}, 0};
  b.spec.name = "design";
  b.spec.description = cand.name;
  b.spec.sources = {"linkwise design: generated from " +
                    (space.file.empty() ? space.name : space.file)};
  for (int i = 0; i < s; ++i) b.node(fmt::format("cpu{}", i), "cpu", cc.part);
  for (int i = 0; i < n; ++i) b.node(fmt::format("gpu{}", i), "gpu", gc.part);
  if (s == 2)
    b.spec.links.push_back(
        {.a = "cpu0",
         .b = "cpu1",
         .tech = cpu.attr("socket"),
         .width = cc.socket_links.value_or(static_cast<int>(cpu.get("socket_links", 1)))});
  // Upstream ports of the GPUs (and of NICs and drives): the CPUs, or the (leaf) switches.
  std::vector<std::string> ports;
  std::vector<std::string> port_cpu;
  if (arr == Arrangement::kRootPorts) {
    for (int i = 0; i < s; ++i) ports.push_back(fmt::format("cpu{}", i));
  } else {
    const auto& sw = space.pcie_switch;
    if (arr == Arrangement::kCascaded) {
      for (int i = 0; i < s; ++i) {
        std::string top = fmt::format("top{}", i);
        b.node(top, "pcie_switch", sw);
        b.pcie(fmt::format("cpu{}", i), cc.part, true, top, sw, gen, uplink, space.uplink_trace_mm,
               space.uplink_material, space.uplink_connectors);
      }
      for (int j = 0; j < switches; ++j) {
        std::string leaf = fmt::format("pxs{}", j);
        b.node(leaf, "pcie_switch", sw);
        b.pcie(fmt::format("top{}", j / (switches / s)), sw, false, leaf, sw, gen, 16, 100,
               material, 0);
        ports.push_back(leaf);
      }
    } else {
      for (int j = 0; j < switches; ++j) {
        std::string name = fmt::format("pxs{}", j);
        b.node(name, "pcie_switch", sw);
        b.pcie(fmt::format("cpu{}", j / (switches / s)), cc.part, true, name, sw, gen, uplink,
               space.uplink_trace_mm, space.uplink_material, space.uplink_connectors);
        ports.push_back(name);
      }
    }
  }
  auto port_part = [&](const std::string& p) {
    return p.rfind("cpu", 0) == 0 ? cc.part : space.pcie_switch;
  };
  auto gpu_port = [&](int i) {
    return arr == Arrangement::kRootPorts ? ports[i / (n / s)] : ports[i / per_switch];
  };
  int gpu_width = std::min(16, static_cast<int>(gpu.get("pcie_width", 16)));
  for (int i = 0; i < n; ++i) {
    SlotSpec slot = i < static_cast<int>(space.slots.size()) ? space.slots[i] : SlotSpec{150, 0};
    std::string p = gpu_port(i);
    b.pcie(p, port_part(p), p.rfind("cpu", 0) == 0, fmt::format("gpu{}", i), gc.part, gen,
           gpu_width, slot.trace_mm, material, slot.connectors);
  }
  for (int i = 0; i < nc.count; ++i) {
    const auto& io = space.nics[nc.choice];
    std::string id = fmt::format("nic{}", i), p = ports[i % ports.size()];
    b.node(id, "nic", io.part);
    b.pcie(p, port_part(p), p.rfind("cpu", 0) == 0, id, io.part, gen, io.width, 0, "", 0);
  }
  if (space.nvme) {
    const auto& io = *space.nvme;
    for (int i = 0; i < io.counts[0]; ++i) {
      std::string id = fmt::format("nvme{}", i), p = ports[i % ports.size()];
      b.node(id, "nvme", io.part);
      b.pcie(p, port_part(p), p.rfind("cpu", 0) == 0, id, io.part, gen, io.width, 0, "", 0);
    }
  }
  std::string nvl = gpu.attr("nvlink");
  auto nvlink = [&](const std::string& a, const std::string& bb, int w) {
    if (w > 0) b.spec.links.push_back({.a = a, .b = bb, .tech = nvl, .width = w});
  };
  switch (g.fabric) {
    case Fabric::kNone:
      break;
    case Fabric::kNvSwitch: {
      int k = space.nvswitch_count;
      for (int j = 0; j < k; ++j) b.node(fmt::format("nvsw{}", j), "nvswitch", space.nvswitch);
      // Each GPU's links spread over the switches as evenly as they go (18 over 4: 5, 5, 4, 4).
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < k; ++j)
          nvlink(fmt::format("gpu{}", i), fmt::format("nvsw{}", j), links / k + (j < links % k));
      break;
    }
    case Fabric::kMesh:
      for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j)
          nvlink(fmt::format("gpu{}", i), fmt::format("gpu{}", j), links / (n - 1));
      break;
    case Fabric::kBridgePairs:
      for (int i = 0; i + 1 < n; i += 2)
        nvlink(fmt::format("gpu{}", i), fmt::format("gpu{}", i + 1), links);
      break;
    case Fabric::kBridgeFours:
      for (int q = 0; q + 3 < n; q += 4)
        for (int i = q; i < q + 4; ++i)
          for (int j = i + 1; j < q + 4; ++j)
            nvlink(fmt::format("gpu{}", i), fmt::format("gpu{}", j), links / 3);
      break;
  }
  b.spec.budgets = space.budgets;
  return b.spec;
}

}  // namespace linkwise::design
