#include "linkwise/work/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"

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

std::vector<Plan> candidate_plans(const Model& m, const Job& job, int gpus, int per_box) {
  std::vector<Plan> out;
  for (int tp : divisors(gpus)) {
    if (tp > per_box || m.heads % tp != 0) continue;
    for (int pp : divisors(gpus / tp)) {
      if (m.layers % pp != 0) continue;
      int dp = gpus / (tp * pp);
      for (int ep : divisors(dp)) {
        if (ep > 1 && (!m.moe() || m.experts % ep != 0)) continue;
        for (int zero = 0; zero <= 3; ++zero) {
          if (zero > 0 && dp == 1) continue;
          for (int mb : {1, 2, 4, 8}) {
            if (job.global_batch % (mb * dp) != 0) continue;
            for (int vpp : {1, 2}) {
              if (vpp > 1 && pp == 1) continue;
              Plan p;
              p.tp = tp, p.pp = pp, p.dp = dp, p.ep = ep, p.zero = zero, p.micro_batch = mb, p.vpp = vpp;
              out.push_back(p);
            }
          }
        }
      }
    }
  }
  return out;
}

SearchResult search_plans(StepModel& sm, const SearchOptions& o) {
  const auto& c = sm.chassis();
  int gpus = o.gpus > 0 ? o.gpus : static_cast<int>(c.gpus().size());
  if (gpus > static_cast<int>(c.gpus().size()))
    throw InputError(fmt::format("{} GPUs asked for but {} has {}", gpus, c.name(), c.gpus().size()));
  SearchResult r;
  std::vector<Plan> fitting;
  for (const Plan& p : candidate_plans(sm.model(), sm.job(), gpus, gpus_per_box(c))) {
    ++r.candidates;
    std::string why = plan_problem(p, sm.model(), sm.job(), gpus);
    if (!why.empty()) {
      r.rejected[why.substr(0, why.find(' ', why.find(' ') + 1))]++;
      continue;
    }
    ++r.runnable;
    auto mem = memory_per_gpu(sm.model(), sm.job(), p, sm.gpu().memory_bytes);
    if (r.least_memory_plan.empty() || mem.total < r.least_memory_bytes)
      r.least_memory_bytes = mem.total, r.least_memory_plan = p.str();
    if (!mem.fits) continue;
    ++r.fitting;
    fitting.push_back(p);
  }
  if (r.runnable == 0)
    throw InputError(fmt::format("no plan of {} GPUs can run {} (the layer count {} and {} heads leave no "
                                 "valid split with global batch {})",
                                 gpus, sm.model().id, sm.model().layers, sm.model().heads, sm.job().global_batch));
  if (fitting.empty())
    throw InputError(fmt::format(
        "{} fits on no plan of {} GPUs of {}: the least memory any plan needs is {:.1f} GiB per GPU ({}) "
        "against {:.1f} GiB; try more GPUs (--nodes), --mode lora, --recompute full or --offload",
        sm.model().id, gpus, c.name(), r.least_memory_bytes / (1ull << 30), r.least_memory_plan,
        sm.gpu().memory_bytes / (1ull << 30)));
  std::vector<StepResult> est;
  for (const Plan& p : fitting) est.push_back(sm.estimate(p));
  std::sort(est.begin(), est.end(), [](const StepResult& a, const StepResult& b) { return a.step_time_s < b.step_time_s; });
  int k = std::min<int>(o.simulate_top, est.size());
  std::vector<StepResult> sim;
  for (int i = 0; i < k; ++i) sim.push_back(sm.simulate(est[i].plan));
  std::sort(sim.begin(), sim.end(), [](const StepResult& a, const StepResult& b) { return a.step_time_s < b.step_time_s; });
  r.best = sim;
  for (int i = k; i < static_cast<int>(est.size()) && static_cast<int>(r.best.size()) < o.top; ++i) r.best.push_back(est[i]);
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
std::vector<std::pair<double, std::string>> terms(const StepResult& r) {
  const Breakdown& b = r.breakdown;
  double T = r.step_time_s > 0 ? r.step_time_s : 1;
  return {{b.tp_s / T, "tensor-parallel collectives"}, {b.ep_s / T, "expert all-to-alls"},
          {b.pp_s / T, "pipeline sends"},              {b.dp_s / T, "data-parallel gradient sync"},
          {b.zero_s / T, "ZeRO weight gathers and gradient scatters"}, {b.bubble_s / T, "the pipeline bubble"},
          {b.contention_s / T, "NCCL kernels slowing the compute beside them"}, {b.io_s / T, "host offload traffic"}};
}
}  // namespace

ScalingVerdict scaling_verdict(const std::vector<ScalingPoint>& pts) {
  ScalingVerdict v;
  const ScalingPoint* prev = nullptr;
  double worst = -0.02;
  for (const auto& p : pts) {
    if (!p.fits) continue;
    if (prev) {
      double change = (p.best.tokens_per_s / p.gpus) / (prev->best.tokens_per_s / prev->gpus) - 1;
      if (v.stops_paying == 0 && p.best.tokens_per_s <= prev->best.tokens_per_s) v.stops_paying = p.gpus;
      if (change < worst) {
        worst = change;
        v.from = prev->gpus, v.to = p.gpus, v.per_gpu_change = change;
        auto a = terms(prev->best), b = terms(p.best);
        double grew = -1;
        for (std::size_t i = 0; i < a.size(); ++i)
          if (b[i].first - a[i].first > grew)
            grew = b[i].first - a[i].first, v.term = b[i].second, v.term_share_from = a[i].first, v.term_share_to = b[i].first;
        v.link = v.tech = "";
        v.link_busy = 0;
        if (!p.best.links.empty())
          v.link = p.best.links.front().link, v.tech = p.best.links.front().tech, v.link_busy = p.best.links.front().busy_fraction;
      }
    }
    prev = &p;
  }
  return v;
}

}  // namespace linkwise::work
