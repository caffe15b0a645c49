// The chassis graph: nodes (catalog parts) and links (a technology at a width), resolved and
// checked.
//
// A Chassis is immutable once built. Node and link indices are dense and stable, so other modules
// keep per-node and per-link arrays. Several boxes joined by a network are one Chassis: each box's
// nodes are copied with a "b<k>/" prefix, and every NIC links to a network switch node ("net")
// directly, or through a per-box leaf ("b<k>/leaf") when the network is oversubscribed.
//
//   auto chassis = linkwise::topo::load_chassis("dgx-h100");         // a preset or a YAML path
//   for (int g : chassis.gpus()) fmt::print("{}\n", chassis.node(g).name);
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "linkwise/hw/catalog.h"
#include "linkwise/topo/spec.h"

namespace linkwise::topo {

using NodeKind = hw::PartKind;

struct Node {
  int index = -1;
  std::string name;  ///< unique, e.g. "gpu3" or "b1/gpu3"
  NodeKind kind = NodeKind::kGpu;
  const hw::Part* part = nullptr;  ///< never null
  std::map<std::string, double> overrides;
  int box = 0;    ///< which copy of the chassis
  int numa = -1;  ///< CPUs: their NUMA node; others: the NUMA node of the CPU above them, or -1
  int cpu = -1;   ///< index of the CPU whose PCIe tree holds this node, or -1
  int pcie_parent =
      -1;  ///< the node above this one towards its CPU (a switch, retimer or the CPU), or -1
  int pcie_uplink = -1;  ///< the PCIe link to pcie_parent, or -1
  std::string pci_address;
  std::string label;
  std::string cpulist;  ///< CPUs: the probed logical CPU list ("0-55,112-167"), or ""
  std::string zone;     ///< cooling zone id, or ""
  std::string slot;     ///< card slot, or ""
  SourceLocation where;

  /// A figure of the part, with this node's override applied.
  double fig(const std::string& field, double fallback = 0) const;
};

struct Link {
  int index = -1;
  int a = -1, b = -1;                  ///< node indices
  const hw::LinkTech* tech = nullptr;  ///< never null
  int width = 0;                       ///< lanes (PCIe) or links
  double efficiency = 1;               ///< fraction of line rate large transfers reach on this link
  std::optional<double> trace_mm;
  std::string material;
  int root_complex = -1;  ///< host bridge number on the CPU side, or -1 (each link its own)
  int trained_gen = 0;    ///< generation the link trained at (probe), 0 = as designed
  int trained_width = 0;  ///< width the link trained at (probe), 0 = as designed
  /// False where the host (a VM) does not report the link's speed and width to the guest: NCCL
  /// then counts it at its fallback figure (src/comm/nccl_channels.cc). PCIe links only.
  bool reported = true;
  /// True when the rates below are the trained link's (trained_gen/trained_width recorded below the
  /// design, chassis built LinkRates::kAsBuilt): line rate of the trained generation at the trained
  /// width, and that generation's efficiency unless the file gives one.
  bool as_built = false;
  double built_line_bytes_per_s = 0;
  int spec_link = -1;  ///< index in spec().links of the line that made it; -1 for network links
  int connectors = 0;  ///< connectors the channel crosses (channel loss)
  int vias = 0;        ///< extra via transitions (channel loss)
  SourceLocation where;

  hw::LinkFamily family() const { return tech->family; }
  /// Line rate per direction, bytes/s: the trained link's when as_built, else the technology's unit
  /// rate × width.
  double line_bytes_per_s() const {
    return as_built ? built_line_bytes_per_s : design_line_bytes_per_s();
  }
  /// Line rate per direction as designed: the technology's unit rate × width.
  double design_line_bytes_per_s() const { return tech->line_bytes_per_s(width); }
  /// Trained below its design (probe recorded trained_gen or trained_width below tech and width).
  bool below_design() const {
    return (trained_gen > 0 && trained_gen < tech->generation) ||
           (trained_width > 0 && trained_width < width);
  }
  /// What large transfers reach per direction, bytes/s: line rate × efficiency.
  double effective_bytes_per_s() const { return line_bytes_per_s() * efficiency; }
  double latency_s() const { return tech->latency_s.value; }
  int other(int node) const { return node == a ? b : a; }
};

/// Which rates links get where the chassis records a trained state below the design (`probe -o`
/// writes `trained_gen` / `trained_width`): the trained ones (default, the box as built) or the
/// design's.
enum class LinkRates { kAsBuilt, kAsDesigned };
/// kAsDesigned when `as_designed` (the --as-designed flag), else kAsBuilt.
inline LinkRates link_rates(bool as_designed) {
  return as_designed ? LinkRates::kAsDesigned : LinkRates::kAsBuilt;
}

/// The most copies of a chassis one model holds (`network.boxes`, `--nodes`).
inline constexpr int kMaxBoxes = 1024;

/// Built-in presets: id and one-line description.
struct PresetInfo {
  std::string id;
  std::string description;
};

class Chassis {
 public:
  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const ChassisSpec& spec() const { return spec_; }
  /// Copies of the chassis it holds (`network.boxes`, `--nodes`). Every box is a copy of box 0, as
  /// build_chassis() makes them (and comm's mirrored routes rely on): box b's nodes, in index
  /// order, are box 0's at the same places with the same kind, part and overrides (a node's CPU at
  /// the same place too), and its links, in index order, are box 0's between the corresponding
  /// nodes with the same technology, width, efficiency and trained state; that holds for the
  /// network links as well (each NIC's link up, the box's leaf and its uplink). Nodes outside every
  /// box (box -1: the network switch) are shared.
  int boxes() const { return boxes_; }
  LinkRates rates() const { return rates_; }

  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Link>& links() const { return links_; }
  const Node& node(int i) const { return nodes_.at(i); }
  const Link& link(int i) const { return links_.at(i); }
  /// Link indices at a node.
  const std::vector<int>& incident(int node) const { return incident_.at(node); }
  /// Node index by name, or -1.
  int find(const std::string& name) const;

  /// Node indices of one kind, in order (GPUs in rank order: box by box, then as declared).
  std::vector<int> nodes_of_kind(NodeKind kind) const;
  const std::vector<int>& gpus() const { return gpus_; }
  /// "GPU3", "NIC0", "NVME1", "CPU0": the name `nvidia-smi topo -m` style tables use (global
  /// numbering).
  std::string display_name(int node) const;
  /// Node index by display name ("GPU3") or by name ("gpu3"), or -1.
  int find_display(const std::string& name) const;

 private:
  friend Chassis build_chassis(const ChassisSpec&, const hw::Catalog&, int, bool, LinkRates);
  std::string name_, description_;
  LinkRates rates_ = LinkRates::kAsBuilt;
  ChassisSpec spec_;
  int boxes_ = 1;
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<std::vector<int>> incident_;
  std::vector<int> gpus_;
  std::vector<int> display_index_;  ///< per node: index among nodes of its kind
  /// Names, for find(): box b's node at place k is named "b<b>/<id>" (plain "<id>" with one box)
  /// and has index b·per_box_ + k, so one table of the ids of a box serves every box; the network's
  /// switches (after all boxes' nodes) are looked up by their whole names.
  std::unordered_map<std::string, int> place_of_id_;
  std::unordered_map<std::string, int> network_by_name_;
  int per_box_ = 0;
  std::shared_ptr<std::deque<hw::Part>>
      own_parts_;  ///< parts the file defined; nodes point into it
};

/// Checks a spec against the catalog and builds the chassis. `boxes` > 0 replaces
/// spec.network.boxes. Throws InputError naming the file, line and value for: unknown parts or
/// technologies, links to missing nodes, widths the technology does not allow, more lanes or NVLink
/// ports than a part has, GPUs connected to nothing, duplicate ids, PCIe links that form a loop, a
/// box without a CPU, CPUs not joined by socket links, and GPUs, NICs or NVMe drives without a PCIe
/// path to a CPU; and, unless `enforce_budgets` is false, any budget check_budgets()
/// (topo/budget.h) finds exceeded: root-complex and socket lanes, power, heat, cost, channel loss,
/// retimer generation. `rates`: links recorded as trained below their design run at the trained
/// rate (kAsBuilt) or the design's.
Chassis build_chassis(const ChassisSpec& spec, const hw::Catalog& catalog = hw::Catalog::builtin(),
                      int boxes = 0, bool enforce_budgets = true,
                      LinkRates rates = LinkRates::kAsBuilt);

/// Loads a preset by id, or a chassis YAML file by path. Throws InputError for neither.
Chassis load_chassis(const std::string& preset_or_path, int boxes = 0,
                     LinkRates rates = LinkRates::kAsBuilt);

/// One line saying which rates the links below their design got ("links as built: gpu5 - sw5 at
/// Gen4 x8 (designed pcie5 x16, 2.0x less); --as-designed for the design figures"), or "" when no
/// link of box 0 trained below its design.
std::string link_rates_note(const Chassis& c);
/// The spec of a preset by id or of a file by path.
ChassisSpec load_spec(const std::string& preset_or_path);

/// The built-in presets, sorted by id.
std::vector<PresetInfo> presets();

}  // namespace linkwise::topo
