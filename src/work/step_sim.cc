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

  int coll(const std::vector<int>& nodes, Op op, double bytes, const std::string& kind, std::vector<int> deps) {
    if (nodes.size() < 2 || bytes <= 0) return -1;
    int first = g.size();
    int id = comm::add_schedule(g, impl.comm(nodes).schedule(op, bytes), deps, {}, kind);
    for (int t = first; t < g.size(); ++t) g.task(t).tag = kind;
    return id;
  }
  void compute(int gi, double seconds, const char* name) {
    if (seconds <= 0) return;
    last[gi] = {g.add_compute(gi, 0, seconds, name, last[gi])};
  }
  void tp(int gi, const std::vector<int>& nodes, Op op, double bytes) {
    int id = coll(nodes, op, bytes, "tp", last[gi]);
    if (id >= 0) last[gi] = {id};
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

// The TP groups with a GPU in the boxes of the first group (and of its EP block): the others repeat them.
Groups representative(const topo::Chassis& c, const Plan& p, const Placement& pl) {
  std::set<int> boxes;
  for (int d = 0; d < std::max(1, p.ep); ++d)
    for (int n : pl.tp_group(d, 0)) boxes.insert(c.node(n).box);
  Groups out;
  for (int s = 0; s < p.pp; ++s)
    for (int d = 0; d < p.dp; ++d) {
      bool in = false;
      for (int n : pl.tp_group(d, s)) in = in || boxes.count(c.node(n).box);
      if (in) out.tp.push_back({d, s}), out.stages.insert(s);
    }
  if (p.ep > 1) {  // whole EP blocks only
    std::set<std::pair<int, int>> have(out.tp.begin(), out.tp.end());
    for (auto [d, s] : std::vector<std::pair<int, int>>(out.tp))
      for (int k = d / p.ep * p.ep; k < (d / p.ep + 1) * p.ep; ++k)
        if (have.insert({k, s}).second) out.tp.push_back({k, s});
  }
  return out;
}

struct LayerSpec {
  const Model& m;
  const Job& job;
  const Plan& p;
  const Placement& pl;
  const Groups& groups;
  const Shape& sh;
  const LayerCompute& lc;
};

// Adds the MoE all-to-alls of every EP block (each GPU exchanges its tokens with its block).
void all_to_all(Builder& b, const LayerSpec& x) {
  if (x.p.ep < 2) return;
  double per_rank = x.sh.act_bytes * x.m.top_k / ((x.p.sp && x.p.tp > 1) ? x.p.tp : 1);
  std::map<std::pair<int, int>, std::vector<int>> blocks;  // (block, stage) -> group indices
  for (int gi = 0; gi < static_cast<int>(x.groups.tp.size()); ++gi)
    blocks[{x.groups.tp[gi].first / x.p.ep, x.groups.tp[gi].second}].push_back(gi);
  for (const auto& [key, members] : blocks) {
    std::vector<int> deps, ids;
    for (int gi : members) deps.insert(deps.end(), b.last[gi].begin(), b.last[gi].end());
    for (int t = 0; t < x.p.tp; ++t) ids.push_back(b.coll(x.pl.ep_group(t, key.first, key.second), Op::kAllToAll, per_rank, "ep", deps));
    ids.erase(std::remove(ids.begin(), ids.end(), -1), ids.end());
    for (int gi : members) b.last[gi] = ids.empty() ? b.last[gi] : ids;
  }
}

// One layer forward (or backward) for every simulated TP group. `with_ep`, `with_zero` add those.
double layer_run(StepModel::Impl& impl, const LayerSpec& x, bool backward, bool with_ep, bool with_zero,
                 double occurrences, std::map<int, ResUse>* use) {
  Builder b{impl, {}, std::vector<std::vector<int>>(x.groups.tp.size())};
  bool sp = x.p.sp && x.p.tp > 1;
  auto tpg = [&](int gi) { return x.pl.tp_group(x.groups.tp[gi].first, x.groups.tp[gi].second); };
  int groups = static_cast<int>(x.groups.tp.size());
  // One half-layer for every group: [all-gather] [all-to-all] compute [all-to-all] reduce-scatter (or
  // all-reduce without SP). The MoE exchange joins whole EP blocks, so each phase runs for all groups.
  auto each = [&](double seconds, const char* name, bool mlp) {
    if (sp)
      for (int gi = 0; gi < groups; ++gi) b.tp(gi, tpg(gi), Op::kAllGather, x.sh.act_bytes);
    if (mlp && with_ep) all_to_all(b, x);
    for (int gi = 0; gi < groups; ++gi) b.compute(gi, seconds, name);
    if (mlp && with_ep) all_to_all(b, x);
    for (int gi = 0; gi < groups; ++gi) b.tp(gi, tpg(gi), sp ? Op::kReduceScatter : Op::kAllReduce, x.sh.act_bytes);
  };
  if (!backward) {
    each(x.lc.attn_f, "attention forward", false);
    each(x.lc.mlp_f, "mlp forward", true);
  } else {
    if (x.job.recompute == Recompute::kFull) {  // the recomputed forward repeats its collectives
      each(0, "recompute", false);
      each(0, "recompute", true);
    }
    each(x.lc.mlp_b, "mlp backward", true);
    each(x.lc.attn_b, "attention backward", false);
  }
  if (with_zero && x.p.zero >= 3 && x.p.dp > 1) {
    for (int s : x.groups.stages)
      for (int t = 0; t < x.p.tp; ++t) {
        auto dpg = x.pl.dp_group(t, s);
        int id = b.coll(dpg, Op::kAllGather, 2 * x.sh.layer_weights, "zero", {});
        if (backward && x.job.mode != Mode::kLora)
          b.coll(dpg, Op::kReduceScatter, 2 * x.sh.layer_trainable, "zero", id >= 0 ? std::vector<int>{id} : std::vector<int>{});
      }
  }
  return b.run(occurrences, use);
}

}  // namespace

Periods simulate_periods(StepModel::Impl& impl, const Model& m, const Job& job, const Plan& p, const GpuSpec& gpu,
                         const Shape& sh) {
  Periods r;
  Placement pl = place(p, impl.chassis);
  Groups groups = representative(impl.chassis, p, pl);
  r.lc = layer_compute(m, job, p, gpu);
  double head = head_compute(m, job, p, gpu);
  r.head_f = head / 3, r.head_b = head - r.head_f;
  LayerSpec x{m, job, p, pl, groups, sh, r.lc};
  double occ = static_cast<double>(sh.m) * sh.layers_per_stage;
  bool ep = p.ep > 1, zero = p.zero >= 3 && p.dp > 1;
  for (bool backward : {false, true}) {
    double compute = backward ? r.lc.backward() : r.lc.forward();
    double t_tp = layer_run(impl, x, backward, false, false, (ep || zero) ? 0 : occ, &r.use);
    double t_ep = ep ? layer_run(impl, x, backward, true, false, zero ? 0 : occ, &r.use) : t_tp;
    double t_all = zero ? layer_run(impl, x, backward, ep, true, occ, &r.use) : t_ep;
    (backward ? r.tp_b : r.tp_f) = std::max(0.0, t_tp - compute);
    (backward ? r.ep_b : r.ep_f) = std::max(0.0, t_ep - t_tp);
    (backward ? r.zero_b : r.zero_f) = std::max(0.0, t_all - t_ep);
  }
  if (p.pp > 1) {  // one stage boundary: every TP rank of the simulated groups of stage 0 sends its shard
    Builder b{impl, {}, {}};
    for (auto [d, s] : groups.tp) {
      if (s != 0) continue;
      for (int t = 0; t < p.tp; ++t) b.coll({pl.node(t, d, 0), pl.node(t, d, 1)}, Op::kSendRecv, sh.act_bytes / p.tp, "pp", {});
    }
    r.p2p = b.run(2.0 * sh.m * p.vpp, &r.use);
    if (!p.sp && p.tp > 1) r.p2p += impl.time(pl.tp_group(0, 1), Op::kAllGather, sh.act_bytes);
  }
  if (p.dp > 1 && p.zero < 3) {  // one gradient bucket, every DP group of the simulated stages at once
    Op op = p.zero == 0 ? Op::kAllReduce : Op::kReduceScatter;
    Builder b{impl, {}, {}};
    for (int s : groups.stages)
      for (int t = 0; t < p.tp; ++t) b.coll(pl.dp_group(t, s), op, 2 * sh.layer_trainable, "dp", {});
    r.buckets = sh.layers_per_stage;
    r.bucket = b.run(r.buckets, &r.use);
    if (p.zero >= 1) {
      Builder a{impl, {}, {}};
      for (int s : groups.stages)
        for (int t = 0; t < p.tp; ++t)
          a.coll(pl.dp_group(t, s), Op::kAllGather, 2 * sh.layer_trainable * sh.layers_per_stage, "zero", {});
      r.param_gather = a.run(1, &r.use);
    }
  }
  if (job.offload_optimizer) offload_periods(impl, p, pl, sh, r, &r.use);
  contention_periods(impl, job, p, pl, gpu, sh, r);
  return r;
}

void offload_periods(StepModel::Impl& impl, const Plan& p, const Placement& pl, const Shape& sh, Periods& r,
                     std::map<int, ResUse>* use) {
  const auto& c = impl.chassis;
  int box = c.node(pl.gpus.front()).box;
  double params = sh.layer_trainable * sh.layers_per_stage / (p.zero >= 1 ? p.dp : 1);
  std::map<int, double> cpu_params;
  for (bool to_host : {true, false}) {
    Builder b{impl, {}, {}};
    for (int n : pl.gpus) {
      int cpu = c.node(n).cpu;
      if (c.node(n).box != box || cpu < 0) continue;
      auto path = impl.finder.widest_path(n, cpu, topo::Fabric::kHost);
      sim::FlowSpec f;
      f.bytes = 2 * params;  // bf16 gradients down, bf16 weights up
      for (std::size_t i = 0; i < path.links.size(); ++i) {
        int l = path.links[i];
        bool from_a = c.link(l).a == path.nodes[i];
        f.route.push_back(sim::ChassisResources::link_dir(l, to_host ? from_a : !from_a));
      }
      if (impl.res.memory(cpu) >= 0) f.route.push_back(impl.res.memory(cpu));
      int id = b.g.add_transfer({f}, 0, to_host ? "offload gradients" : "offload weights");
      b.g.task(id).tag = "offload";
      if (to_host) cpu_params[cpu] += params;
    }
    (to_host ? r.d2h : r.h2d) = b.run(1, use);
  }
  // CPU AdamW is memory-bound: 28 bytes per parameter (see optimizer_time), GPUs of one CPU share it.
  for (const auto& [cpu, n] : cpu_params)
    r.cpu_optimizer = std::max(r.cpu_optimizer, 28 * n / c.node(cpu).fig("memory_bytes_per_s", 100e9));
}

}  // namespace linkwise::work
