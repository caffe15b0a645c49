#include "linkwise/work/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"
#include "linkwise/util/verbosity.h"

namespace linkwise::work {

namespace {

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

int gpus_per_box(const topo::Chassis& c) {
  int n = 0;
  for (int g : c.gpus()) n += c.node(g).box == 0;
  return std::max(1, n);
}

}  // namespace

SearchOptions SearchOptions::everything() {
  SearchOptions o;
  // kOp (torchtitan's per-op policy) under the fsdp framework only (search_plans).
  o.recompute = {Recompute::kNone, Recompute::kSelective, Recompute::kFull, Recompute::kOp};
  o.offload = {false, true};
  // Today's frameworks; deepspeed-0.3 describes a 2021 release and hf a model's own code (how its
  // layers run, not a choice of collectives): both are chosen only with --framework.
  o.frameworks = {Framework::kMegatron, Framework::kFsdp, Framework::kFsdp1, Framework::kDeepSpeed};
  o.grad_overlap = {Switch::kOff, Switch::kOn};
  o.elementwise = {Switch::kOn, Switch::kOff};
  o.tp_overlap = {Switch::kOff, Switch::kOn};
  o.wide = true;
  return o;
}

std::vector<Plan> candidate_plans(const Model& m, const Job& job, int gpus, int per_box,
                                  bool wide) {
  std::vector<Plan> out;
  const std::vector<int> mbs =
      wide ? std::vector<int>{1, 2, 4, 8, 16, 32, 64} : std::vector<int>{1, 2, 4, 8};
  // Wide: every interleaving depth up to 8 that divides the layers per stage (Megatron-LM's
  // --num-layers-per-virtual-pipeline-stage), and the placement orders tp,dp,pp (Megatron's
  // default), dp,tp,pp and tp,pp,dp (--use-tp-pp-dp-mapping).
  const std::vector<int> vpps = wide ? std::vector<int>{1, 2, 3, 4, 6, 8} : std::vector<int>{1, 2};
  static const char* orders[] = {"tp,dp,pp", "dp,tp,pp", "tp,pp,dp"};
  // Wide: context parallelism of 2, 4 or 8 ranks where the sequence splits into 2·cp chunks, in
  // the default order (tp, cp, dp, pp: the ring inside a box while tp·cp fits one, across the NICs
  // beyond, as NeMo's long-sequence runs place it), with sequence-parallel TP and micro-batch 1;
  // plan_problem keeps it to fused attention under megatron, without EP or HSDP.
  std::vector<int> cps = {1};
  if (wide && job.flash_attention)
    for (int cp : {2, 4, 8})
      if (job.seq % (2 * cp) == 0 && gpus % cp == 0) cps.push_back(cp);
  for (int cp : cps)
    for (int tp : divisors(gpus / cp)) {
      if (tp > per_box || m.heads % tp != 0) continue;
      for (int pp : divisors(gpus / (tp * cp))) {
        if (m.layers % pp != 0) continue;
        int dp = gpus / (tp * pp * cp);
        for (int ep : divisors(dp)) {
          if (ep > 1 && (!m.moe() || m.experts % ep != 0 || cp > 1)) continue;
          for (int zero = 0; zero <= 3; ++zero) {
            if (zero > 0 && dp * cp == 1) continue;
            for (int mb : mbs) {
              if (job.global_batch % (mb * dp) != 0) continue;
              // cp splits sequences to cut the activations; a smaller micro-batch does so
              // without a ring: cp > 1 is tried at micro-batch 1, as long-context recipes run it
              if (cp > 1 && mb > 1) continue;
              for (int vpp : vpps) {
                if (vpp > 1 && (pp == 1 || m.layers % (pp * vpp) != 0)) continue;
                int n_orders =
                    !wide || cp > 1 ? 1 : (tp > 1 && dp > 1 ? 2 : 1) + (pp > 1 && dp > 1 ? 1 : 0);
                for (int sp = 1; sp >= (wide && tp > 1 && cp == 1 ? 0 : 1); --sp)
                  for (int order = 0; order < n_orders; ++order) {
                    Plan p;
                    p.tp = tp, p.pp = pp, p.dp = dp, p.cp = cp, p.ep = ep, p.zero = zero,
                    p.micro_batch = mb, p.vpp = vpp;
                    p.sp = sp == 1;
                    if (order > 0) p.order = orders[(tp > 1 && dp > 1) ? order : 2];
                    out.push_back(p);
                    // HSDP: ZeRO-3 sharded within one box's DP ranks, replicated across boxes.
                    int box_shard = per_box / tp;
                    if (wide && cp == 1 && zero == 3 && box_shard > 1 && dp > box_shard &&
                        dp % box_shard == 0 && p.order == "tp,dp,pp") {
                      p.shard = box_shard;
                      out.push_back(p);
                    }
                  }
              }
            }
          }
        }
      }
    }
  return out;
}

bool communication_bound(const StepResult& r) {
  const Breakdown& b = r.breakdown;
  return b.exposed_comm_s + b.contention_s > 0.5 * b.compute_s;
}

std::string why_first_beats_second(const StepResult& a, const StepResult& b) {
  const Breakdown &x = a.breakdown, &y = b.breakdown;
  std::vector<std::pair<double, std::string>> d = {
      {x.compute_s - y.compute_s, "compute"},
      {x.tp_s - y.tp_s, "exposed tensor-parallel collectives"},
      {x.cp_s - y.cp_s, "exposed context-parallel ring transfers"},
      {x.ep_s - y.ep_s, "exposed expert all-to-alls"},
      {x.pp_s - y.pp_s, "pipeline sends"},
      {x.dp_s - y.dp_s, "exposed data-parallel gradient sync"},
      {x.zero_s - y.zero_s, "exposed ZeRO gathers and scatters"},
      {x.bubble_s - y.bubble_s, "pipeline bubble"},
      {x.contention_s - y.contention_s, "compute slowed by NCCL kernels"},
      {x.io_s - y.io_s, "host offload traffic"}};
  std::sort(d.begin(), d.end(),
            [](const auto& p, const auto& q) { return std::abs(p.first) > std::abs(q.first); });
  // #1 can be the slower where the search ranked a communication-bound plan below it
  const double ahead = b.step_time_s - a.step_time_s;
  std::string s = ahead == 0 ? std::string("#1 is as fast as #2: ")
                             : fmt::format("#1 is {:.3g} s {} than #2: ", std::abs(ahead),
                                           ahead > 0 ? "faster" : "slower");
  int shown = 0;
  for (const auto& [delta, what] : d) {
    if (shown == 2 || std::abs(delta) < 1e-3 * std::max(a.step_time_s, 1e-9)) break;
    s += fmt::format("{}{:.3g} s {} {}", shown ? ", " : "", std::abs(delta),
                     delta < 0 ? "less" : "more", what);
    ++shown;
  }
  if (shown == 0) s += "the same terms within 0.1 %";
  // The job choices that differ between the two (the search crosses them with the plans).
  const Job &j1 = a.job, &j2 = b.job;
  auto sw = [](Switch v, const char* on, const char* off) {
    return v == Switch::kDefault ? "default" : v == Switch::kOn ? on : off;
  };
  std::vector<std::pair<std::string, std::string>> diff;
  if (j1.framework != j2.framework)
    diff.push_back({to_string(j1.framework), to_string(j2.framework)});
  if (j1.recompute != j2.recompute)
    diff.push_back({fmt::format("recompute {}", to_string(j1.recompute)),
                    fmt::format("recompute {}", to_string(j2.recompute))});
  if (j1.offload_optimizer != j2.offload_optimizer)
    diff.push_back({j1.offload_optimizer ? "offload" : "no offload",
                    j2.offload_optimizer ? "offload" : "no offload"});
  if (j1.grad_overlap != j2.grad_overlap)
    diff.push_back({fmt::format("overlap {}", sw(j1.grad_overlap, "on", "off")),
                    fmt::format("overlap {}", sw(j2.grad_overlap, "on", "off"))});
  if ((j1.tp_overlap == Switch::kOn) != (j2.tp_overlap == Switch::kOn))
    diff.push_back({j1.tp_overlap == Switch::kOn ? "TP overlap on" : "TP overlap off",
                    j2.tp_overlap == Switch::kOn ? "TP overlap on" : "TP overlap off"});
  if (j1.fused_elementwise != j2.fused_elementwise)
    diff.push_back(
        {sw(j1.fused_elementwise, "fused", "eager"), sw(j2.fused_elementwise, "fused", "eager")});
  if (!diff.empty()) {
    std::string x, y;
    for (const auto& [u, v] : diff)
      x += (x.empty() ? "" : ", ") + u, y += (y.empty() ? "" : ", ") + v;
    s += fmt::format(" (#1 {}; #2 {})", x, y);
  }
  return s;
}

namespace {

// What could make a job that fits on no plan fit: only the choices the search left untried, and
// --nodes only where the chassis has a NIC to join boxes with.
std::string memory_hints(const topo::Chassis& c, const Job& job, const SearchOptions& o) {
  std::vector<std::string> h;
  if (c.nodes_of_kind(topo::NodeKind::kNic).empty())
    h.push_back(fmt::format(
        "more GPUs (a larger chassis: {} has no NIC to join boxes with --nodes)", c.name()));
  else
    h.push_back("more GPUs (--nodes)");
  if (job.mode != Mode::kLora)
    h.push_back("--mode lora");
  else if (base_weight_bytes(job) > 1)
    h.push_back("--base-weights nf4 (or fp8)");
  else if (job.base_weights != BaseWeights::kNf4)
    h.push_back("--base-weights nf4");
  const auto& rc = o.recompute;
  if (rc.empty() ? job.recompute != Recompute::kFull
                 : std::find(rc.begin(), rc.end(), Recompute::kFull) == rc.end())
    h.push_back("--recompute full");
  const auto& off = o.offload;
  if (off.empty() ? !job.offload_optimizer : std::find(off.begin(), off.end(), true) == off.end())
    h.push_back("--offload");
  std::string s;
  for (std::size_t i = 0; i < h.size(); ++i)
    s += (i == 0 ? "" : i + 1 == h.size() ? " or " : ", ") + h[i];
  return s;
}

}  // namespace

SearchResult search_plans(StepModel& sm, const SearchOptions& o) {
  const auto& c = sm.chassis();
  int gpus = o.gpus > 0 ? o.gpus : static_cast<int>(c.gpus().size());
  if (gpus > static_cast<int>(c.gpus().size()))
    throw InputError(
        fmt::format("{} GPUs asked for but {} has {}", gpus, c.name(), c.gpus().size()));
  SearchResult r;
  // Job variants: every combination of the choices left open.
  std::vector<Job> jobs;
  {
    auto or_job = [](const auto& v, auto own) {
      return v.empty() ? std::vector<decltype(own)>{own} : v;
    };
    const Job& base = sm.job();
    for (Recompute rc : or_job(o.recompute, base.recompute))
      for (bool off : or_job(o.offload, base.offload_optimizer))
        for (Framework fw : or_job(o.frameworks, base.framework))
          for (Switch ov : or_job(o.grad_overlap, base.grad_overlap))
            for (Switch el : or_job(o.elementwise, base.fused_elementwise))
              for (Switch tpo : or_job(o.tp_overlap, base.tp_overlap)) {
                // Per-op checkpointing is torchtitan's (FSDP2): under fsdp only
                if (rc == Recompute::kOp && fw != Framework::kFsdp) continue;
                // DeepSpeed has no TP overlap: the variant would only be refused
                if (tpo == Switch::kOn && !o.tp_overlap.empty() &&
                    (fw == Framework::kDeepSpeed || fw == Framework::kDeepSpeed03))
                  continue;
                Job j = base;
                j.recompute = rc, j.offload_optimizer = off, j.framework = fw, j.grad_overlap = ov,
                j.fused_elementwise = el, j.tp_overlap = tpo;
                jobs.push_back(j);
              }
  }
  struct Fit {
    Plan plan;
    int job;
  };
  std::vector<Fit> fitting;
  const auto plans = candidate_plans(sm.model(), sm.job(), gpus, gpus_per_box(c), o.wide);
  for (const Plan& p : plans) {
    // plan_problem depends on the job only through the framework (fsdp has no ZeRO-1): check per
    // job.
    for (int ji = 0; ji < static_cast<int>(jobs.size()); ++ji) {
      const Job& job = jobs[ji];
      // TP overlap changes nothing without sequence-parallel TP collectives: not a new candidate
      if (job.tp_overlap == Switch::kOn && !o.tp_overlap.empty() && (p.tp == 1 || !p.sp)) continue;
      // Context parallelism is Megatron-Core's (plan_problem): not a candidate under the others
      if (p.cp > 1 && job.framework != Framework::kMegatron) continue;
      // Optimizer offload needs a ZeRO stage (plan_problem): not a candidate at zero=0
      if (job.offload_optimizer && p.zero == 0) continue;
      ++r.candidates;
      std::string why = plan_problem(p, sm.model(), job, gpus);
      if (!why.empty()) {
        r.rejected[why.substr(0, why.find(' ', why.find(' ') + 1))]++;
        continue;
      }
      ++r.runnable;
      auto mem = memory_per_gpu(sm.model(), job, p, sm.gpu().memory_bytes);
      if (r.least_memory_plan.empty() || mem.total < r.least_memory_bytes)
        r.least_memory_bytes = mem.total, r.least_memory_plan = p.str();
      if (!mem.fits) continue;
      ++r.fitting;
      fitting.push_back({p, ji});
    }
  }
  if (r.runnable == 0)
    throw InputError(fmt::format(
        "no plan of {} GPUs can run {} (the layer count {} and {} heads leave no "
        "valid split with global batch {})",
        gpus, sm.model().id, sm.model().layers, sm.model().heads, sm.job().global_batch));
  if (fitting.empty())
    throw InputError(fmt::format(
        "{} fits on no plan of {} GPU{} of {}: the least memory any plan needs is {:.1f} GiB per "
        "GPU ({}) "
        "against {:.1f} GiB; try {}",
        sm.model().id, gpus, gpus == 1 ? "" : "s", c.name(), r.least_memory_bytes / (1ull << 30),
        r.least_memory_plan, sm.gpu().memory_bytes / (1ull << 30), memory_hints(c, sm.job(), o)));
  // Closed-form scores; keep the best few per job variant in a bounded list.
  std::vector<std::pair<double, int>> score;  // (step time, index into fitting)
  score.reserve(fitting.size());
  {
    Progress progress("plan search: scoring plans", fitting.size());
    for (int i = 0; i < static_cast<int>(fitting.size()); ++i) {
      score.push_back({sm.estimate(fitting[i].plan, jobs[fitting[i].job]).step_time_s, i});
      progress.update(i + 1);
    }
  }
  const int keep = std::max(o.top, o.simulate_top) + 16;
  std::sort(score.begin(), score.end());
  std::vector<StepResult> est;
  for (std::size_t i = 0; i < score.size() && static_cast<int>(est.size()) < keep; ++i) {
    auto e = sm.estimate(fitting[score[i].second].plan, jobs[fitting[score[i].second].job]);
    // the same step and memory under another name (placement orders that move nothing, recompute
    // modes fused attention makes equal): shown once
    bool same = false;
    for (const auto& x : est)
      same = same || (std::abs(x.step_time_s - e.step_time_s) <= 1e-9 * e.step_time_s &&
                      std::abs(x.memory.total - e.memory.total) <= 1e-3 * e.memory.total);
    if (!same) est.push_back(e);
  }
  int k = std::min<int>(o.simulate_top, est.size());
  std::vector<StepResult> sim;
  {
    Progress sim_progress("plan search: simulating the best plans", k);
    for (int i = 0; i < k; ++i) {
      sim.push_back(sm.simulate(est[i].plan, est[i].job));
      sim_progress.update(i + 1);
    }
  }
  // of two plans as fast, the one that leaves more memory free first
  auto faster = [](const StepResult& a, const StepResult& b) {
    return a.step_time_s != b.step_time_s ? a.step_time_s < b.step_time_s
                                          : a.memory.total < b.memory.total;
  };
  std::sort(sim.begin(), sim.end(), faster);
  // Never first a plan the model itself flags (communication-bound, or so near full memory that
  // the caching allocator may stall it) when one within 5 % of its step time is not.
  const std::string near_full =
      fmt::format("under {:.0f} % of the GPU's memory free", 100 * kAllocatorMarginShare);
  auto flagged = [&](const StepResult& s) -> std::string_view {
    if (communication_bound(s)) return "communication-bound";
    if (near_full_memory(s.memory)) return near_full;
    return {};
  };
  auto comparable = [&](double limit) {
    return std::find_if(sim.begin() + 1, sim.end(), [&](const StepResult& s) {
      return flagged(s).empty() && s.step_time_s <= limit;
    });
  };
  if (!sim.empty() && !flagged(sim.front()).empty() &&
      comparable(1.05 * sim.front().step_time_s) == sim.end()) {
    // None among the simulated plans: the first unflagged plan of the whole ranking whose estimate
    // is within reach (the closed form and the engine differ by a few per cent), simulated; it
    // may also be the faster.
    const double reach = 1.1 * 1.05 * sim.front().step_time_s;
    for (const auto& [t, idx] : score) {
      if (t > reach) break;
      const auto& f = fitting[idx];
      const StepResult e = sm.estimate(f.plan, jobs[f.job]);
      if (!flagged(e).empty()) continue;
      // one already simulated (the engine flagged what the closed form did not): the next
      const bool simulated = std::any_of(sim.begin(), sim.end(), [&](const StepResult& x) {
        return x.plan.str() == e.plan.str() &&
               std::abs(x.memory.total - e.memory.total) <= 1e-3 * e.memory.total;
      });
      if (simulated) continue;
      sim.push_back(sm.simulate(f.plan, jobs[f.job]));
      std::sort(sim.begin(), sim.end(), faster);
      break;
    }
  }
  if (std::string_view why = sim.empty() ? std::string_view() : flagged(sim.front());
      !why.empty()) {
    if (auto it = comparable(1.05 * sim.front().step_time_s); it != sim.end()) {
      r.passed_over = sim.front().plan.str();
      r.passed_over_why = why;
      std::rotate(sim.begin(), it, it + 1);
    }
  }
  r.best = sim;
  for (int i = k; i < static_cast<int>(est.size()) && static_cast<int>(r.best.size()) < o.top; ++i)
    r.best.push_back(est[i]);
  if (static_cast<int>(r.best.size()) > std::max(o.top, k)) r.best.resize(std::max(o.top, k));
  return r;
}

std::vector<ScalingPoint> scaling(StepModel& sm, int simulate_top) {
  int total = static_cast<int>(sm.chassis().gpus().size());
  std::vector<ScalingPoint> out;
  double base = 0;
  int base_gpus = 0;
  for (int n = 1;; n = std::min(n * 2, total)) {
    ScalingPoint pt;
    pt.gpus = n;
    try {
      SearchOptions o;
      o.gpus = n, o.top = 1, o.simulate_top = simulate_top;
      auto r = search_plans(sm, o);
      pt.best = r.best.front();
      pt.fits = true;
      if (base == 0) base = pt.best.tokens_per_s / n, base_gpus = n;
      pt.efficiency = pt.best.tokens_per_s / n / base;
    } catch (const InputError&) {
      pt.fits = false;
    }
    out.push_back(pt);
    if (n == total) break;
  }
  (void)base_gpus;
  return out;
}

namespace {
struct Term {
  double share;
  std::string name;
  /// Traffic tags of the collectives behind it (step_traffic: FSDP's ZeRO-2 scatters every
  /// micro-batch's gradients beside the backward as "dp"); empty: not link traffic.
  std::vector<std::string> tags;
};
std::vector<Term> terms(const StepResult& r) {
  const Breakdown& b = r.breakdown;
  double T = r.step_time_s > 0 ? r.step_time_s : 1;
  return {{b.tp_s / T, "tensor-parallel collectives", {"tp"}},
          {b.cp_s / T, "context-parallel ring transfers", {"cp"}},
          {b.ep_s / T, "expert all-to-alls", {"ep"}},
          {b.pp_s / T, "pipeline sends", {"pp"}},
          {b.dp_s / T, "data-parallel gradient sync", {"dp"}},
          {b.zero_s / T, "ZeRO weight gathers and gradient scatters", {"zero", "dp"}},
          {b.bubble_s / T, "the pipeline bubble", {}},
          {b.contention_s / T, "NCCL kernels slowing the compute beside them", {}},
          {b.io_s / T, "host offload traffic", {"offload"}}};
}
}  // namespace

ScalingVerdict scaling_verdict(const std::vector<ScalingPoint>& pts) {
  ScalingVerdict v;
  const ScalingPoint* prev = nullptr;
  double worst = -0.02;
  for (const auto& p : pts) {
    if (!p.fits) continue;
    ++v.counts_that_fit, v.largest_fit = p.gpus;
    if (prev) {
      double change = (p.best.tokens_per_s / p.gpus) / (prev->best.tokens_per_s / prev->gpus) - 1;
      if (change > std::max(0.02, v.per_gpu_rise))
        v.rise_from = prev->gpus, v.rise_to = p.gpus, v.per_gpu_rise = change;
      if (v.stops_paying == 0 && p.best.tokens_per_s <= prev->best.tokens_per_s)
        v.stops_paying = p.gpus;
      if (change < worst) {
        worst = change;
        v.from = prev->gpus, v.to = p.gpus, v.per_gpu_change = change;
        double per_gpu_from = prev->best.tokens_per_s / prev->gpus;
        v.added_gpu_yield = (p.best.tokens_per_s - prev->best.tokens_per_s) /
                            (p.gpus - prev->gpus) / std::max(per_gpu_from, 1e-30);
        auto a = terms(prev->best), b = terms(p.best);
        double grew = -1;
        std::vector<std::string> tags;
        for (std::size_t i = 0; i < a.size(); ++i)
          if (b[i].share - a[i].share > grew)
            grew = b[i].share - a[i].share, v.term = b[i].name, v.term_share_from = a[i].share,
            v.term_share_to = b[i].share, tags = b[i].tags;
        v.link = v.tech = v.traffic = "";
        v.link_busy = v.link_utilisation = 0;
        // The links are fullest first: the first that mostly carries the grown term's traffic,
        // else (its traffic shares links with heavier traffic) the fullest link.
        v.link_carries_term = false;
        const LinkBusy* pick = nullptr;
        for (const auto& l : p.best.links)
          if (std::find(tags.begin(), tags.end(), l.traffic) != tags.end()) {
            pick = &l, v.link_carries_term = true;
            break;
          }
        if (!pick && !tags.empty() && !p.best.links.empty()) pick = &p.best.links.front();
        if (pick) {
          v.link = pick->link, v.tech = pick->tech, v.traffic = pick->traffic;
          v.link_busy = pick->busy_fraction, v.link_utilisation = pick->utilisation;
        }
      }
    }
    prev = &p;
  }
  return v;
}

}  // namespace linkwise::work
