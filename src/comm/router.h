// Routes between GPUs over chassis resources, as NCCL's transports would carry the traffic.
//
//   NVLink pair (the two GPUs share an NVLink fabric): striped over every parallel NVLink path,
//   each
//     path's share proportional to its bottleneck (hardware spreads a peer's traffic over all
//     links).
//   The transport follows NCCL's rules (transport_rules.h, linkwise/comm/transport.h):
//   P2P over PCIe: the widest PCIe path, GPU to GPU.
//   SHM: staged through the receiver's CPU memory (NCCL_SHM_LOCALITY=2, the default): GPU a ->
//     (socket link) -> b's CPU (written to memory), memory read, CPU -> GPU b; or the sender's
//     (NCCL_SHM_LOCALITY=1): GPU a -> a's CPU (written), memory read, (socket link) -> GPU b; the
//     memory resource counts twice (coefficient 2).
//   What the SMs write over PCIe (P2P, and SHM up to host memory) travels in 128 B payloads: each
//     PCIe link direction it crosses carries 1 / sm_write_share() link bytes per byte
//     (coefficient, transport_rules.h).
//   NET within a box (P2P and SHM off): GPU a -> the NIC nearest it -> GPU b.
//   GPUs in different boxes: the widest path over PCIe and the network, entering and leaving
//   through
//     NICs (GPUDirect RDMA); NVLink is not used.
// Widest paths maximise the bottleneck residual capacity, fewer hops among equals, over
// topo::LinkGraph (the chassis' one graph), passing only where topo/flow.h's rule lets traffic
// pass: switches, retimers, CPUs and (between boxes) NICs.
#pragma once

#include <boost/container/small_vector.hpp>
#include <memory>
#include <mutex>
#include <span>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "linkwise/comm/predict.h"
#include "linkwise/topo/paths.h"

namespace linkwise::comm::detail {

enum class HopKind { kNvlink, kPcie, kHost, kNet };

/// A route's entries, up to 8 of them in place: a hop striped over four NVSwitches names 8 link
/// directions, a hop between boxes 6 to 8 (GPU, PCIe switch, NIC, network and back), so the
/// thousands of hops of the rings on a large machine are stored without a heap block each.
template <class T>
using RouteVec = boost::container::small_vector<T, 8>;

struct Route {
  RouteVec<int> res;       ///< resource ids
  RouteVec<double> coeff;  ///< share of the hop's bytes on each resource
  HopKind kind = HopKind::kNvlink;
  double bytes_per_s = 0;  ///< what this route alone can carry on the residual it was found on
  bool found() const { return !res.empty(); }
  void append(const Route& o, double scale = 1.0);
};

/// How the boxes of a chassis mirror each other resource for resource (Router::mirrored()): per
/// node its place in its box; per box its nodes (per_box each); per resource its box (-1: none)
/// and place among its box's resources; per box its resources (per_box_res each). Built once per
/// chassis and shared by its routers (MirrorSource).
struct BoxMirror {
  std::size_t per_box = 0, per_box_res = 0;
  std::vector<int> node_local, box_nodes, res_box, res_local, box_res;
  /// The tables of a chassis of several boxes, or null for one box. Every box being a copy of box 0
  /// (topo::Chassis::boxes()) and `res` being sim::chassis_resources(chassis), the boxes always
  /// mirror each other: nothing is checked here.
  static std::shared_ptr<const BoxMirror> build(const topo::Chassis& chassis,
                                                const sim::ChassisResources& res);
};
/// A chassis' BoxMirror, built on first use by whichever router asks first.
struct MirrorSource {
  std::once_flag once;
  std::shared_ptr<const BoxMirror> tables;
};

class Router {
 public:
  /// `finder`: the chassis' path finder, shared between routers (built here when null).
  Router(const topo::Chassis& chassis, const sim::ChassisResources& res, const CommOptions& options,
         std::shared_ptr<const topo::PathFinder> finder = nullptr,
         std::shared_ptr<MirrorSource> mirror = nullptr);

  /// Route of GPU a -> GPU b on `residual` capacities (by resource id). Not found: empty route.
  Route route(int a, int b, const std::vector<double>& residual);
  /// route() on the full capacities, cached per pair.
  const Route& route_full(int a, int b);
  /// A quick estimate of what a -> b can carry on `residual`, for ordering rings: for NVLink peers
  /// the direct links plus, per switch both reach, the lesser of a's links into it and its links to
  /// b (exact on single-level switch fabrics); for the others, route(a, b, residual).bytes_per_s
  /// (route_full()'s cached route where `residual` is this router's full capacities themselves).
  double pair_rate(int a, int b, const std::vector<double>& residual);
  /// How a and b exchange traffic (cached).
  HopKind kind(int a, int b);
  /// Whether some route this router gave was staged through host memory (SHM); the two tables below
  /// are filled on the first such route and empty before it.
  bool host_routes() const { return !leaves_gpu_.empty(); }
  /// Per resource: 1 on a link direction that leaves a GPU.
  const std::vector<char>& leaves_gpu() const { return leaves_gpu_; }
  /// Per resource: 1 on a link direction that some P2P-over-PCIe route this router gave crosses
  /// (SM-written peer traffic); empty before the first such route.
  const std::vector<char>& peer_pcie() const { return peer_pcie_; }
  /// Per resource: on a link direction into a GPU, the most that GPU's SMs read from host memory
  /// (its host_read_bytes_per_s; 0 where the part gives none); -1 on every other resource. It binds
  /// where an SHM route ends (Communicator::Impl::capacities_for).
  const std::vector<double>& host_read_into() const { return host_read_into_; }
  /// How near `gpu` is to `nic` of its box over PCIe and socket links at full capacities: the
  /// bottleneck of the widest path, bytes/s, and its hops (NCCL's "most local GPUs" of a NIC:
  /// greatest path bandwidth, then fewest hops). {0, 0} when there is no path.
  std::pair<double, int> nic_nearness(int gpu, int nic);
  /// Appends to `to` the path GPU -> every NVSwitch it links to, one entry per link direction (for
  /// NVLS): up = true for GPU to switch. Coefficients are each link's share of the GPU's NVLink
  /// bandwidth; to.bytes_per_s is left as it was.
  void add_switch_links(int gpu, bool up, Route& to) const;

  /// Whether the boxes mirror each other resource for resource: every box has the same nodes,
  /// links and memories in the same order with the same capacities (every box is a copy of box 0,
  /// topo::Chassis::boxes()), so that a route between boxes fa and fb, with the residual
  /// capacities of those two boxes alike, maps onto boxes ta and tb (where ta < tb if fa < fb: the
  /// search settles ties by node order). Tables built on the first call; false for one box.
  bool mirrored();
  /// The node of box `box` at the place `node` has in its own box (mirrored() only).
  int mirror_node(int node, int box) const {
    return mirror_
        ->box_nodes[static_cast<std::size_t>(box) * mirror_->per_box + mirror_->node_local[node]];
  }
  /// `from`, a route from a node of box fa to one of box fb, moved to boxes ta and tb: each
  /// resource of box fa becomes its counterpart in ta, of fb in tb; resources outside every box
  /// stay (mirrored() only).
  void mirror(const Route& from, int fa, int fb, int ta, int tb, Route& out) const;
  /// Records `r`, a route made by mirror(), as given by this router, as route() records the routes
  /// it finds (peer_pcie()).
  void gave(const Route& r);

 private:
  using Arc = topo::LinkGraph::Arc;
  /// The resource carrying an arc's direction, and the one carrying the way back.
  static int out_res(const Arc& arc) {
    return sim::ChassisResources::link_dir(arc.link, arc.from_a);
  }
  static int in_res(const Arc& arc) {
    return sim::ChassisResources::link_dir(arc.link, !arc.from_a);
  }
  /// Widest path src -> dst on `residual` less taken_; its resources go to path_ (empty: none).
  /// Returns its bottleneck (0 when there is none).
  double widest(int src, int dst, unsigned families, bool nic_transit,
                const std::vector<double>& residual);
  /// A path between a GPU and a CPU (one leg of an SHM route): its bottleneck and resources.
  struct Leg {
    double bottleneck = 0;
    std::vector<int> res;  ///< empty: no path
  };
  /// widest() into `out`, which it returns.
  const Leg& leg(int src, int dst, unsigned families, const std::vector<double>& residual,
                 Leg& out);
  /// leg() on the full capacities, cached per (src, dst, families): a GPU's way up to a CPU and the
  /// CPU's way down to a GPU serve every SHM peer on the other side.
  const Leg& full_leg(int src, int dst, unsigned families);
  /// Fills leaves_gpu_ and host_read_into_ (on the first SHM route).
  void host_tables();
  /// Fills sm_coeff_ (on the first P2P-over-PCIe or SHM route).
  void sm_table();
  /// NVLink striping where every path is the direct link or one hop through a switch that joins
  /// GPUs only: fills r as route() would and returns true; false where that does not hold.
  bool stripe_one_level(int a, int b, const std::vector<double>& residual, Route& r);
  /// NET between two GPUs of one box: through the NIC nearest `a`; fills r (left empty: no NIC).
  void net_within_box(int a, int b, const std::vector<double>& residual, Route& r);
  static long long pair_key(int a, int b) { return static_cast<long long>(a) * 1000003LL + b; }

  const topo::Chassis& chassis_;
  const sim::ChassisResources& res_;
  CommOptions options_;
  std::shared_ptr<const topo::PathFinder> finder_;
  const topo::LinkGraph& graph_;  // finder_'s: the chassis as one graph, with the pass-through rule
  std::vector<char> nvswitch_;    // per node: an NVSwitch
  std::vector<char> peer_access_;  // per node: a GPU with peer access (its peer_access figure)
  std::vector<char> leaf_switch_;  // per node: an NVSwitch whose NVLinks all end at GPUs
  std::vector<std::tuple<double, int, double, int, int, int>> one_level_scratch_;
  // How each ordered pair of GPUs of one box exchanges traffic (GPUs of different boxes always use
  // the network): box b's pairs are kinds_[kind_offset_[b] + i·m_b + j] for the GPUs of local index
  // i and j (gpu_local_), m_b GPUs in the box; -1 = not yet known.
  std::vector<int> gpu_local_, box_gpus_, kind_offset_;
  std::vector<signed char> kinds_;
  // Per node outside every box (network switches): its arcs by the far end's box + 1; empty for
  // the others.
  std::vector<std::vector<std::vector<Arc>>> by_box_;
  // Routes on full capacities per ordered GPU pair, kept in a node-based map so that references to
  // them stay valid as it grows.
  std::unordered_map<long long, Route> full_;
  std::unordered_map<long long, Leg> full_legs_;  // full_leg()'s, by (src, dst, families)
  Leg legs_[2];                                   // route()'s legs off the full capacities
  // Dijkstra scratch
  std::vector<double> best_;
  std::vector<int> hops_, via_res_, via_from_, stamp_;
  int epoch_ = 0;
  using Item = std::tuple<double, int, int>;  // -bottleneck, hops, node
  std::vector<Item> heap_;
  std::vector<int> path_;  // widest()'s result
  std::vector<std::tuple<int, double, double>> pair_scratch_;
  std::vector<char> leaves_gpu_;        // per resource: see leaves_gpu()
  std::vector<char> peer_pcie_;         // per resource: see peer_pcie()
  std::vector<double> host_read_into_;  // per resource: see host_read_into()
  // Per resource: link bytes per byte the SMs write across it (P2P over PCIe, SHM into host
  // memory): 1 / sm_write_share() on PCIe link directions, 1 elsewhere (transport_rules.h).
  std::vector<double> sm_coeff_;
  std::vector<double> taken_;    // capacity taken by earlier parallel paths of the current hop
  std::vector<int> taken_list_;  // the resources of those paths, in order
  // mirrored()'s tables, from mirror_source_ on first use (null: the boxes differ).
  std::shared_ptr<MirrorSource> mirror_source_;
  const BoxMirror* mirror_ = nullptr;
  bool mirror_asked_ = false;
  std::vector<double> stripe_coeff_;  // per entry of taken_list_: its path's bottleneck
};

/// Family bit masks for widest().
constexpr unsigned kFamNvlink = topo::family_bit(hw::LinkFamily::kNvlink),
                   kFamPcie = topo::family_bit(hw::LinkFamily::kPcie),
                   kFamSocket = topo::family_bit(hw::LinkFamily::kSocket),
                   kFamNet = topo::family_bit(hw::LinkFamily::kNetwork);

}  // namespace linkwise::comm::detail
