// The step's periods run on the engine: concurrent groups' collectives as flows sharing the links.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "linkwise/sim/engine.h"
#include "work/step_impl.h"

namespace linkwise::work {

using comm::Op;

namespace {

/// A graph under construction: per TP group a list of tasks the next step waits for.
struct Builder {
  StepModel::Impl& impl;
  sim::TaskGraph g;
  std::vector<std::vector<int>> last;  // by group index

  int coll(const std::vector<int>& nodes, Op op, double bytes, const std::string& kind,
           std::vector<int> deps) {
    if (nodes.size() < 2 || bytes <= 0) return -1;
    int first = g.size(), id = -1;
    const double pieces = message_pieces(bytes);
    for (int k = 0; k < pieces; ++k) {
      id = comm::add_schedule(g, impl.comm(nodes).schedule(op, bytes / pieces), deps, {}, kind);
      deps = {id};
    }
    for (int t = first; t < g.size(); ++t) g.task(t).tag = kind;
    return id;
  }
  void compute(int gi, double seconds, const char* name) {
    if (seconds <= 0) return;
    last[gi] = {g.add_compute(gi, 0, seconds, name, last[gi])};
  }
  /// A TP collective of group gi; `beside_s` > 0: compute of that long runs beside it (TP
  /// overlap) and what follows waits for both.
  void tp(int gi, const std::vector<int>& nodes, Op op, double bytes, double beside_s = 0) {
    int id = coll(nodes, op, bytes, "tp", last[gi]);
    std::vector<int> next;
    if (id >= 0) next.push_back(id);
    if (beside_s > 0) next.push_back(g.add_compute(gi, 0, beside_s, "beside tp", last[gi]));
    if (!next.empty()) last[gi] = next;
  }
  /// Runs the graph; adds its resource use times `occurrences` to `use`. Returns the makespan.
  double run(double occurrences, std::map<int, ResUse>* use) {
    if (g.size() == 0) return 0;
    sim::SimResult r = sim::Engine(impl.res.capacity).run(g);
    if (use && occurrences > 0) {
      for (int i = 0; i < static_cast<int>(r.resources.size()); ++i) {
        if (r.resources[i].bytes <= 0) continue;
        auto& u = (*use)[i];
        u.busy_s += r.resources[i].busy_s * occurrences;
        u.bytes += r.resources[i].bytes * occurrences;
      }
      for (const auto& t : g.tasks())
        for (const auto& f : t.flows)
          for (int res : f.route) (*use)[res].by_kind[t.tag] += f.bytes * occurrences;
    }
    return r.makespan_s;
  }
};

struct Groups {
  std::vector<std::pair<int, int>> tp;  // (dp_r, pp_r) of the TP groups simulated
  std::set<int> stages;
};

// The TP groups with a GPU in the boxes of the first group (and of its EP block): the others repeat
// them.
Groups representative(const topo::Chassis& c, const Plan& p, const Placement& pl) {
  // An EP block or a CP ring (data ranks [k·block, +block)) runs whole.
  const int block = std::max({1, p.ep, p.cp});
  std::set<int> boxes;
  for (int d = 0; d < block; ++d)
    for (int n : pl.tp_group(d, 0)) boxes.insert(c.node(n).box);
  Groups out;
  for (int s = 0; s < p.pp; ++s)
    for (int d = 0; d < pl.dp; ++d) {
      bool in = false;
      for (int n : pl.tp_group(d, s)) in = in || boxes.count(c.node(n).box);
      if (in) out.tp.push_back({d, s}), out.stages.insert(s);
    }
  if (block > 1) {  // whole EP blocks and CP rings only
    std::set<std::pair<int, int>> have(out.tp.begin(), out.tp.end());
    for (auto [d, s] : std::vector<std::pair<int, int>>(out.tp))
      for (int k = d / block * block; k < (d / block + 1) * block; ++k)
        if (have.insert({k, s}).second) out.tp.push_back({k, s});
  }
  return out;
}

// DP-like groups of one (tp rank, stage): the DP group, or with HSDP its dp/shard shard groups and
// its shard replica groups (block k of each kind).
int blocks(const Plan& p) {
  return p.zero >= 3 && p.shard > 0 && p.shard < p.dp ? p.dp / p.shard : 1;
}
// Shard blocks with a simulated TP group in them (the others repeat them in other boxes).
bool simulated_block(const Plan& p, const std::vector<std::pair<int, int>>& tp_groups, GroupKind g,
                     int blk) {
  if (g != GroupKind::kShard) return true;
  for (auto [d, s] : tp_groups)
    if (d / p.shard == blk) return true;
  return false;
}
std::vector<int> dp_like_group(const Placement& pl, const Plan& p, GroupKind g, int t, int blk,
                               int s) {
  if (g == GroupKind::kShard) return pl.shard_group(t, blk, s);
  if (g == GroupKind::kReplica)
    return blk < p.shard ? pl.replica_group(t, blk, s) : std::vector<int>{};
  return blk == 0 ? pl.dp_group(t, s) : std::vector<int>{};
}

struct LayerSpec {
  const Plan& p;
  const Placement& pl;
  const Groups& groups;
  const StepTraffic& t;
};

// One collective for every block of `width` TP groups of a stage: the MoE all-to-all of an EP
// block (each GPU exchanges its tokens with its block), or one step of the ring attention of a CP
// ring (each ring's TP ranks send their K,V to the next cp rank). It is issued per TP rank on
// `group_of(tp rank, block, stage)` once every member's previous work is done; a member's compute
// of `beside_s` runs beside it (CP's attention block), and what follows waits for both (TE waits
// for the step's send and receive before the next block).
void block_collective(Builder& b, const LayerSpec& x, int width,
                      std::vector<int> (Placement::*group_of)(int, int, int) const, const Coll& c,
                      double beside_s) {
  std::map<std::pair<int, int>, std::vector<int>> blocks;  // (block, stage) -> group indices
  for (int gi = 0; gi < static_cast<int>(x.groups.tp.size()); ++gi)
    blocks[{x.groups.tp[gi].first / width, x.groups.tp[gi].second}].push_back(gi);
  for (const auto& [key, members] : blocks) {
    std::vector<int> deps, ids;
    for (int gi : members) deps.insert(deps.end(), b.last[gi].begin(), b.last[gi].end());
    for (int t = 0; t < x.p.tp; ++t)
      ids.push_back(
          b.coll((x.pl.*group_of)(t, key.first, key.second), c.op, c.bytes, c.kind, deps));
    ids.erase(std::remove(ids.begin(), ids.end(), -1), ids.end());
    for (int gi : members) {
      std::vector<int> next = ids;
      if (beside_s > 0)
        next.push_back(b.g.add_compute(gi, 0, beside_s, "attention beside cp", b.last[gi]));
      if (!next.empty()) b.last[gi] = next;
    }
  }
}

// One layer forward (or backward) for every simulated TP group, as the step's traffic list gives
// it. `with_cp`, `with_ep`, `with_zero` add the ring attention's transfers (without them only the
// attention beside each runs), the expert all-to-alls and the ZeRO-3 collectives beside the
// compute.
double layer_run(StepModel::Impl& impl, const LayerSpec& x, bool backward, bool with_cp,
                 bool with_ep, bool with_zero, double occurrences, std::map<int, ResUse>* use) {
  Builder b{impl, {}, std::vector<std::vector<int>>(x.groups.tp.size())};
  auto tpg = [&](int gi) { return x.pl.tp_group(x.groups.tp[gi].first, x.groups.tp[gi].second); };
  int groups = static_cast<int>(x.groups.tp.size());
  for (const PathItem& it : backward ? x.t.backward : x.t.forward) {
    if (it.is_compute()) {
      for (int gi = 0; gi < groups; ++gi) b.compute(gi, it.compute_s, it.name);
    } else if (it.coll.group == GroupKind::kEp) {
      if (with_ep) block_collective(b, x, x.p.ep, &Placement::ep_group, it.coll, 0);
    } else if (it.coll.group == GroupKind::kCp) {
      if (with_cp)
        block_collective(b, x, x.p.cp, &Placement::cp_group, it.coll, it.beside_s);
      else
        for (int gi = 0; gi < groups; ++gi) b.compute(gi, it.beside_s, it.name);
    } else {
      for (int gi = 0; gi < groups; ++gi) b.tp(gi, tpg(gi), it.coll.op, it.coll.bytes, it.beside_s);
    }
  }
  if (with_zero) {
    for (int s : x.groups.stages)
      for (int t = 0; t < x.p.tp; ++t)
        for (int blk = 0; blk < blocks(x.p);
             ++blk) {  // one chain per DP group (per shard group with HSDP)
          int prev = -1;
          for (const Coll& c : backward ? x.t.beside_b : x.t.beside_f) {
            if (!simulated_block(x.p, x.groups.tp, c.group, blk)) continue;
            auto g = dp_like_group(x.pl, x.p, c.group, t, blk, s);
            int id = b.coll(g, c.op, c.bytes, c.kind,
                            prev >= 0 ? std::vector<int>{prev} : std::vector<int>{});
            if (id >= 0) prev = id;
          }
        }
  }
  return b.run(occurrences, use);
}

// One collective run by every DP group (or shard group, or replica group) of the simulated stages
// at once.
double dp_run(StepModel::Impl& impl, const Plan& p, const Placement& pl, const Groups& groups,
              const Coll& c, double occurrences, std::map<int, ResUse>* use) {
  Builder b{impl, {}, {}};
  for (int s : groups.stages)
    for (int t = 0; t < p.tp; ++t)
      for (int blk = 0; blk < blocks(p); ++blk)
        if (simulated_block(p, groups.tp, c.group, blk))
          b.coll(dp_like_group(pl, p, c.group, t, blk, s), c.op, c.bytes, c.kind, {});
  return b.run(occurrences, use);
}

}  // namespace

Periods simulate_periods(StepModel::Impl& impl, const Model& m, const Job& job, const Plan& p,
                         const GpuSpec& gpu, const Shape& sh) {
  Periods r;
  Placement pl = place(p, impl.chassis);
  Groups groups = representative(impl.chassis, p, pl);
  r.lc = layer_compute(m, job, p, gpu);
  double head = head_compute(m, job, p, gpu);
  r.head_f = head / 3, r.head_b = head - r.head_f;
  StepTraffic t = step_traffic(m, job, p, sh, r.lc);
  LayerSpec x{p, pl, groups, t};
  double occ = static_cast<double>(sh.m) * sh.layers_per_stage;
  bool ep = p.ep > 1;
  for (bool backward : {false, true}) {
    double compute = backward ? r.lc.backward() : r.lc.forward();
    bool zero = !(backward ? t.beside_b : t.beside_f).empty();
    const bool cp = p.cp > 1;
    double t_tp =
        layer_run(impl, x, backward, false, false, false, (cp || ep || zero) ? 0 : occ, &r.use);
    double t_cp =
        cp ? layer_run(impl, x, backward, true, false, false, (ep || zero) ? 0 : occ, &r.use)
           : t_tp;
    double t_ep = ep ? layer_run(impl, x, backward, cp, true, false, zero ? 0 : occ, &r.use) : t_cp;
    double t_all = zero ? layer_run(impl, x, backward, cp, ep, true, occ, &r.use) : t_ep;
    // The ring's blocks split the attention into pieces whose sum may differ from the whole in
    // the last bits: differences below 1e-9 of the layer are none.
    auto exposed = [&](double with, double without) {
      return with - without > 1e-9 * compute ? with - without : 0.0;
    };
    (backward ? r.tp_b : r.tp_f) = exposed(t_tp, compute);
    (backward ? r.cp_b : r.cp_f) = exposed(t_cp, t_tp);
    (backward ? r.ep_b : r.ep_f) = std::max(0.0, t_ep - t_cp);
    (backward ? r.zero_b : r.zero_f) = std::max(0.0, t_all - t_ep);
  }
  for (const Coll& c : t.after_b)
    r.zero_after_b += c.host_s + dp_run(impl, p, pl, groups, c, occ, &r.use);
  r.zero_b += r.zero_after_b;
  for (const Coll& c : t.after_f)
    r.zero_after_f += c.host_s + dp_run(impl, p, pl, groups, c, occ, &r.use);
  r.zero_f += r.zero_after_f;
  for (const Coll& c : t.fill_f)
    r.fill_f += c.host_s + dp_run(impl, p, pl, groups, c, sh.m, &r.use);
  for (const Coll& c : t.fill_b)
    r.fill_b += c.host_s + dp_run(impl, p, pl, groups, c, sh.m, &r.use);
  for (const Coll& c : t.boundary) {
    if (c.group == GroupKind::kStagePair) {  // every TP rank of the simulated groups of stage 0
                                             // sends its shard
      Builder b{impl, {}, {}};
      for (auto [d, s] : groups.tp) {
        if (s != 0) continue;
        for (int k = 0; k < p.tp; ++k)
          b.coll({pl.node(k, d, 0), pl.node(k, d, 1)}, c.op, c.bytes, c.kind, {});
      }
      r.p2p += b.run(2.0 * sh.m * p.vpp, &r.use);
    } else {  // the receiving stage's TP group
      r.p2p += impl.time(pl.tp_group(0, 1), c.op, c.bytes);
    }
  }
  if (t.buckets > 0) {
    r.buckets = t.buckets;
    r.bucket_overlap = t.bucket_overlap;
    r.bucket = dp_run(impl, p, pl, groups, t.bucket, r.buckets, &r.use);
  }
  if (t.param_gather.bytes > 0)
    r.param_gather = t.param_gather.host_s + dp_run(impl, p, pl, groups, t.param_gather, 1, &r.use);
  if (job.offload_optimizer) offload_periods(impl, p, pl, sh, r, &r.use);
  contention_periods(impl, t, pl, gpu, job, r);
  return r;
}

// DeepSpeed CPU-Adam (csrc/adam/cpu_adam_impl.cpp, Step_AVX / Step_8): the fused Adam update in
// AVX-512 (16 fp32 lanes) or AVX2 (8) registers, unrolled 8 wide, over tiles of the flat buffer,
// the tile's elements split over the cores by OpenMP; it reads the fp32 master weight, gradient, m
// and v and writes master, m and v (28 bytes a parameter) and each finished tile's half-precision
// copy goes back to the GPU while the next tile is updated (ZeRO-Offload paper, Ren et al., USENIX
// ATC 2021, section 5.1, Algorithm 1).
//
// Per core: the paper's Table 4 (CPU-Adam latency; in its text, section 6.2.4: more than 5x faster
// than PyTorch's CPU Adam from 1 to 10 billion parameters, 6.4x at 1 billion) gives 0.22 s for 1e9
// parameters, 1.03 s for 4e9 and 2.57 s for 1e10 (PyTorch CPU: 1.39, 5.71, 14.76 s). Its host is
// one DGX-2 (section 6.1, Table 2): 2x Xeon Platinum 8168, 24 cores each at 2.7 GHz base, AVX-512
// (NVIDIA DGX-2 specifications); all 48 cores are taken to run the step. derived from the 1e10 row,
// the largest, nearest the billions of parameters a CPU updates in multi-GPU plans: 1e10 / 2.57 s /
// 48 cores = 8.11e7 parameters/s per core = 2.7e9 Hz x 16 lanes / 533 lane-cycles per parameter.
// The 4e9 row gives the same rate within 0.3%; the 1e9 row took 14% less (0.22 s where this gives
// 0.257 s). The host's memory, 2 sockets x 6 channels x DDR4-2666 x 8 bytes = 256 GB/s, would move
// 1e10 x 28 bytes in 1.09 s: the measured update was bound by the cores, not the memory. The cycles
// per parameter belong to the kernel, so a core of another width or clock scales with lanes x
// clock.
constexpr double kAdamHostCores = 24, kAdamHostClockHz = 2.7e9;    // per socket of the paper's host
constexpr double kAdamHostParams = 1e10, kAdamHostSeconds = 2.57;  // Table 4, the 10B row
constexpr double kAdamLaneCyclesPerParam =
    kAdamHostClockHz * 16 / (kAdamHostParams / kAdamHostSeconds / (2 * kAdamHostCores));
constexpr double kAdamBytesPerParam = 28;

double cpu_adam_time(double params, double cores, double simd_fp32_lanes, double clock_hz,
                     double memory_bytes_per_s) {
  if (params <= 0) return 0;
  double per_core = clock_hz * simd_fp32_lanes / kAdamLaneCyclesPerParam;
  return std::max(params / (cores * per_core), kAdamBytesPerParam * params / memory_bytes_per_s);
}

void offload_periods(StepModel::Impl& impl, const Plan& p, const Placement& pl, const Shape& sh,
                     Periods& r, std::map<int, ResUse>* use) {
  const auto& c = impl.chassis;
  int box = c.node(pl.gpus.front()).box;
  // Every trainable parameter this GPU's optimizer shard holds: its layers' and, on the first and
  // last pipeline stages, the embedding, final norm and LM head (what memory counts on the host).
  double params = sh.stage_trainable / (p.zero >= 1 ? p.shard_size() : 1);
  std::vector<int> gpus;  // the first box's GPUs that offload
  std::map<int, double> cpu_params;
  for (int n : pl.gpus)
    if (c.node(n).box == box && c.node(n).cpu >= 0)
      gpus.push_back(n), cpu_params[c.node(n).cpu] += params;
  // DeepSpeed CPU-Adam on each CPU for the parameters of all the GPUs it serves (cpu_adam_time). A
  // part without SIMD width or clock figures runs as the host the per-core rate was measured on.
  for (const auto& [cpu, n] : cpu_params) {
    const auto& node = c.node(cpu);
    r.cpu_optimizer =
        std::max(r.cpu_optimizer, cpu_adam_time(n, node.fig("cores", kAdamHostCores),
                                                node.fig("simd_fp32_lanes", 16),
                                                node.fig("clock_hz", kAdamHostClockHz),
                                                node.fig("memory_bytes_per_s", 100e9)));
  }
  // One flow per GPU at a time: the makespan is proportional to the bytes, so the estimate keeps
  // the seconds per byte of each GPU set (the plan search tries offload with thousands of plans).
  std::sort(gpus.begin(), gpus.end());
  if (!use) {
    auto it = impl.offload_per_byte.find(gpus);
    if (it != impl.offload_per_byte.end()) {
      r.d2h = it->second.first * 2 * params, r.h2d = it->second.second * 2 * params;
      return;
    }
  }
  const double bytes = use ? 2 * params : 1e9;  // bf16 gradients down, bf16 weights up
  double t[2] = {0, 0};
  for (bool to_host : {true, false}) {
    Builder b{impl, {}, {}};
    for (int n : gpus) {
      int cpu = c.node(n).cpu;
      auto path = impl.finder().widest_path(n, cpu, topo::Fabric::kHost);
      sim::FlowSpec f;
      f.bytes = bytes;
      for (std::size_t i = 0; i < path.links.size(); ++i) {
        int l = path.links[i];
        bool from_a = c.link(l).a == path.nodes[i];
        f.route.push_back(sim::ChassisResources::link_dir(l, to_host ? from_a : !from_a));
      }
      if (impl.res.memory(cpu) >= 0) f.route.push_back(impl.res.memory(cpu));
      int id = b.g.add_transfer({f}, 0, to_host ? "offload gradients" : "offload weights");
      b.g.task(id).tag = "offload";
    }
    t[to_host ? 0 : 1] = b.run(1, use);
  }
  if (use) {
    r.d2h = t[0], r.h2d = t[1];
  } else {
    impl.offload_per_byte[gpus] = {t[0] / bytes, t[1] / bytes};
    r.d2h = t[0] / bytes * 2 * params, r.h2d = t[1] / bytes * 2 * params;
  }
}

}  // namespace linkwise::work
