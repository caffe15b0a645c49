// A design space: the choices a sealed box may be built from, the budgets it must fit and the
// workloads it is sold for (docs/design-format.md).
//
// Every combination of choices is one candidate; make_candidate() turns it into a topo::ChassisSpec
// that topo::build_chassis() checks and builds like any chassis file, so the search runs on the
// same model every other command uses.
//
//   auto space = linkwise::design::load_space("examples/design/training-appliance-space.yaml");
//   for (std::size_t i = 0; i < space.candidate_count(); ++i) {
//     auto spec = linkwise::design::make_candidate(space, space.choice(i));
//   }
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "linkwise/topo/spec.h"
#include "linkwise/util/error.h"

namespace linkwise::design {

/// The most candidates one space may hold (the search keeps a small record of each: ~200 bytes).
inline constexpr std::uint64_t kMaxCandidates = 2'000'000;

/// Ways the GPUs of a box are joined to each other.
enum class Fabric { kNone, kNvSwitch, kMesh, kBridgePairs, kBridgeFours };
/// Ways the GPUs reach their CPU: each on its own root port, or behind PCIe switches.
enum class Arrangement { kRootPorts, kSwitchPer2, kSwitchPer4, kCascaded };
const char* to_string(Fabric f);
const char* to_string(Arrangement a);

struct GpuChoice {
  std::string part;
  std::vector<int> counts;  ///< GPUs per box
  std::vector<Fabric> fabrics;
  SourceLocation where;
};

struct CpuChoice {
  std::string part;
  std::vector<int> sockets;  ///< 1 or 2
  std::optional<int>
      socket_links;  ///< socket links between two sockets (default: all the part has)
  SourceLocation where;
};

struct SlotSpec {
  double trace_mm = 0;  ///< board trace from the GPU's upstream port (CPU or switch) to the GPU
  int connectors = 0;   ///< connectors on the way (a CEM slot: 1)
};

/// Where NICs and drives go: beside the GPUs (under their switch; on root ports otherwise).
struct IoSpec {
  std::string part;
  std::vector<int> counts;  ///< per box
  int width = 16;           ///< lanes each
};

struct ZoneSpec {
  std::string id;
  double capacity_w = 0;
  std::vector<std::string>
      kinds;  ///< node kinds it cools: gpu, nvswitch, cpu, pcie_switch, nic, nvme, retimer
};

/// A workload the box is sold for. kind "train" is scored by work::StepModel (tokens/s trained),
/// kind "serve" by work::serve (output tokens/s of a closed loop of `concurrency` clients, the best
/// tensor-parallel width that runs). A new kind adds a branch in score_workload()
/// (design/search.cc).
struct Workload {
  std::string name;
  std::string kind = "train";
  int input = 1024, output = 256, concurrency = 32;  ///< serve: tokens per request, clients
  int tp = 0;  ///< serve: tensor-parallel width; 0 = best of 1, 2, 4, 8
  double weight = 1;
  std::string model;              ///< model id or file (work::find_model)
  std::string mode = "pretrain";  ///< pretrain, full, lora
  std::string precision = "auto";
  std::string recompute = "selective";
  int seq = 0, micro_batch = 1, global_batch = 0, lora_rank = 16;
  bool offload = false;
  std::optional<double> min_tokens_per_s;  ///< target: candidates below it are excluded
  SourceLocation where;
};

struct DesignSpace {
  std::string name, description, file;
  std::vector<GpuChoice> gpus;
  std::vector<CpuChoice> cpus;
  std::vector<int> pcie_generations;  ///< 3..6
  std::vector<Arrangement> arrangements;
  std::vector<int> uplink_widths = {16};  ///< switch uplinks
  std::string pcie_switch;                ///< part id for switch arrangements
  std::string nvswitch;                   ///< part id for the nvswitch fabric
  int nvswitch_count = 4;
  std::string retimer;  ///< part id placed where a channel needs one; "" = never
  std::vector<std::string> materials = {"megtron6"};
  std::vector<SlotSpec> slots;  ///< GPU positions, in order; empty = 150 mm, no connector
  double uplink_trace_mm = 0;   ///< CPU to switch
  std::string uplink_material = "megtron6";
  int uplink_connectors = 0;
  std::vector<IoSpec> nics;  ///< alternatives (one is chosen)
  std::optional<IoSpec> nvme;
  topo::BudgetSpec budgets;  ///< supplies, max cost, prices (cooling zones: `zones`)
  std::vector<ZoneSpec> zones;
  std::vector<Workload> workloads;

  /// The mixed-radix sizes of the choice vector and their product.
  std::vector<int> radices() const;
  std::uint64_t candidate_count() const;
  /// The i-th combination, one index per radix.
  std::vector<int> choice(std::uint64_t i) const;
};

/// Parses a design space file; InputError with file:line:column for anything malformed or unknown.
DesignSpace parse_space(const std::string& yaml_text, const std::string& filename);
DesignSpace load_space(const std::string& path);

/// What a candidate is, in words and as choices.
struct Candidate {
  std::uint64_t index = 0;
  std::string
      name;  ///< "8x h200-sxm nvswitch, 2x xeon-6960p, pcie5 switch-per-2 x16, megtron6, 8 nic"
  std::string gpu, cpu, material, nic;
  int gpus = 0, sockets = 0, generation = 0, uplink_width = 0, nics = 0;
  Fabric fabric = Fabric::kNone;
  Arrangement arrangement = Arrangement::kRootPorts;
};

/// The candidate for a choice vector, and its chassis. Retimers are placed (when the space names
/// one) on every link whose channel loss would exceed its budget. Returns nullopt for combinations
/// that do not exist (a fabric the GPU cannot join, GPUs that do not split over the sockets or
/// switches), with `why`.
std::optional<topo::ChassisSpec> make_candidate(const DesignSpace& space,
                                                const std::vector<int>& choice, Candidate* out,
                                                std::string* why);

}  // namespace linkwise::design
