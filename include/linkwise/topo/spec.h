// Plain descriptions of a chassis, as a YAML file or C++ code states them (docs/chassis-format.md).
//
// Parsers fill these structs and nothing else; build_chassis() (topo/chassis.h) checks them against
// the catalog and turns them into a Chassis. A file and C++ code therefore build the same chassis
// through one API:
//
//   linkwise::topo::ChassisSpec spec;
//   spec.name = "two-gpus";
//   spec.nodes.push_back({.id = "cpu0", .kind = "cpu", .part = "xeon-8480c"});
//   spec.nodes.push_back({.id = "gpu{0..1}", .kind = "gpu", .part = "h100-pcie"});
//   spec.links.push_back({.a = "gpu{0..1}", .b = "cpu0", .tech = "pcie5", .width = 16});
//   auto chassis = linkwise::topo::build_chassis(spec);
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "linkwise/util/error.h"

namespace linkwise::topo {

/// One node or, with a brace pattern in `id` ("gpu{0..7}"), several.
struct NodeSpec {
  std::string id;    ///< unique name; may hold {a..b}, {a..b:r} (each repeated r times) or {x,y,z}
  std::string kind;  ///< gpu, cpu, pcie_switch, nvswitch, nic, nvme, retimer
  std::string part;  ///< catalog part id
  std::optional<int> numa;                  ///< cpu only: NUMA node (default: order among CPUs)
  std::map<std::string, double> overrides;  ///< replaces the part's figures, by field name
  std::string pci_address;                  ///< optional, e.g. "0000:1b:00.0" (probe output)
  /// cpu only, optional: the logical CPUs of the socket's NUMA node(s) as Linux lists them, SMT
  /// siblings included ("0-55,112-167"; probe output from node*/cpulist); the CPU Affinity column
  /// prints it.
  std::string cpulist;
  std::string label;  ///< optional free text (slot name, board position)
  std::string zone;   ///< cooling zone id (budgets.cooling_zones), or ""
  std::string slot;   ///< the card slot it occupies (budgets.slots), or ""
  SourceLocation where;
};

/// One link or, with patterns in `a`/`b`, several.
struct LinkSpec {
  std::string a, b;  ///< node ids or patterns
  std::string tech;  ///< catalog link technology id: pcie3, pcie5, nvlink4, upi-16, ib-ndr, ...
  int width = 0;     ///< lanes (PCIe) or links (NVLink, socket and network links); 0 = the default
  std::string match =
      "zip";  ///< "zip": pair the i-th of a with the i-th of b; "all": every a with every b
  std::optional<double> trace_mm{};    ///< board trace or cable length, millimetres
  std::string material{};              ///< board material, e.g. "megtron6", "fr4"
  std::optional<double> efficiency{};  ///< replaces the technology's efficiency for this link
  std::optional<int>
      root_complex{};  ///< links from one CPU with the same number share a host bridge
  std::optional<int> trained_gen{};    ///< probe: generation the link trained at, when below `tech`
  std::optional<int> trained_width{};  ///< probe: width the link trained at, when below `width`
  /// 0: the host (a VM) does not report the link's speed and width to the guest (NCCL's topology
  /// shows link_speed "" and link_width 0); 1 (the default): it does. PCIe links only.
  std::optional<int> reported{};
  int connectors = 0;  ///< connectors the channel crosses (CEM slot, MCIO), for channel loss
  int vias = 0;        ///< via transitions beyond the two package breakouts, for channel loss
  SourceLocation where{};
};

/// Several boxes joined by a network through their NICs.
struct NetworkSpec {
  int boxes = 1;                  ///< copies of the chassis
  std::string tech;               ///< network technology id; default: the NICs' own
  double oversubscription = 1.0;  ///< of the network switch's bisection (1 = non-blocking)
  SourceLocation where;
};

/// A part the chassis file defines itself (`parts:`), optionally starting from a catalog part
/// (`like:`) and changing only what differs. Figures are in the unit their name says; names ending
/// `_GiB`, `_GB`, `_GBps`, `_TBps`, `_us`, `_ns` are converted to the catalog's `_bytes`,
/// `_bytes_per_s` and `_s` figures.
struct PartSpec {
  std::string id, kind, like;
  std::map<std::string, double> figures;  ///< catalog field name -> value (converted)
  std::map<std::string, std::string>
      attributes;  ///< name, vendor, arch, pcie, nvlink, socket, network
  std::map<std::string, SourceLocation>
      field_where;  ///< where each figure or attribute was written
  SourceLocation where;
};

/// One NCCL setting a chassis file gives (`nccl: {NCCL_P2P_LEVEL: PHB}`), applied by the
/// collectives model (linkwise/comm/transport.h) before any given on the command line.
struct NcclSettingSpec {
  std::string name, value;
  SourceLocation where;
};

/// What the box must fit in: power supplies, cooling zones, price (docs/chassis-format.md,
/// Budgets).
struct CoolingZoneSpec {
  std::string id;
  double capacity_w = 0;  ///< heat the zone's fans or cold plates remove at sustained load
  SourceLocation where;
};
struct BudgetSpec {
  int supplies = 0;     ///< power supplies fitted (0: power not checked)
  double supply_w = 0;  ///< output of one supply, watts
  int redundant =
      0;  ///< supplies held in reserve (N+1: 1); usable = (supplies - redundant) x supply_w
  std::vector<CoolingZoneSpec> cooling_zones;
  int slots = 0;                             ///< card slots the box has (0: not checked)
  std::optional<double> max_cost_usd;        ///< price ceiling of the parts
  std::map<std::string, double> prices_usd;  ///< part id -> unit price, USD
  SourceLocation where;
  bool empty() const {
    return supplies == 0 && cooling_zones.empty() && slots == 0 && !max_cost_usd &&
           prices_usd.empty();
  }
};

struct ChassisSpec {
  std::string name;
  std::string description;
  std::vector<std::string> sources;  ///< where the machine's layout comes from
  std::vector<NodeSpec> nodes;
  std::vector<LinkSpec> links;
  NetworkSpec network;
  std::vector<NcclSettingSpec> nccl;  ///< NCCL settings the machine runs with, in file order
  std::vector<PartSpec> parts;  ///< parts the file defines (nodes may name them like catalog parts)
  BudgetSpec budgets;
  std::string file;  ///< the file it was read from, or "" for code
};

/// Expands a brace pattern: "gpu{0..3}" -> gpu0..gpu3, "sw{0..1:2}" -> sw0 sw0 sw1 sw1,
/// "n{a,b}" -> na nb. Several braces expand left to right, the leftmost outermost.
/// Throws InputError (with `where`) on a malformed pattern.
std::vector<std::string> expand_pattern(const std::string& pattern,
                                        const SourceLocation& where = {});

/// Parses a chassis file's text. Throws InputError with file:line:column on any problem.
ChassisSpec parse_chassis_spec(const std::string& yaml_text, const std::string& filename);
/// Reads and parses a chassis file.
ChassisSpec load_chassis_spec_file(const std::string& path);
/// Writes a spec back as YAML that parse_chassis_spec() reads.
std::string chassis_spec_to_yaml(const ChassisSpec& spec);

}  // namespace linkwise::topo
