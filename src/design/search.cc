#include "linkwise/design/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "linkwise/measure/launch.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/topo/spec.h"
#include "linkwise/util/error.h"
#include "linkwise/util/text.h"
#include "linkwise/work/job.h"
#include "linkwise/work/model.h"
#include "linkwise/work/search.h"
#include "linkwise/work/serve.h"
#include "linkwise/work/step.h"

namespace linkwise::design {

namespace {

// A workload made ready to score: a training job, or serving options. A new kind adds its state
// here and a branch in score_workload().
struct Prepared {
  const Workload* spec = nullptr;
  work::Model model;
  work::Job job;
  work::ServeOptions serve;
};

std::vector<Prepared> prepare(const DesignSpace& space) {
  std::vector<Prepared> out;
  for (const auto& w : space.workloads) {
    try {
      Prepared p{&w, work::find_model(w.model), {}, {}};
      if (w.kind == "serve") {
        p.serve.input = w.input;
        p.serve.output = w.output;
        p.serve.concurrency = w.concurrency;
        if (w.precision != "auto")
          p.serve.precision = work::parse_number_format(w.precision, "precision");
        out.push_back(std::move(p));
        continue;
      }
      p.job.mode = work::parse_mode(w.mode);
      p.job.precision = work::parse_precision(w.precision);
      p.job.recompute = work::parse_recompute(w.recompute);
      p.job.seq = w.seq;
      p.job.micro_batch = w.micro_batch;
      p.job.global_batch = w.global_batch;
      p.job.offload_optimizer = w.offload;
      p.job.lora.rank = w.lora_rank;
      work::validate_job(p.job);
      out.push_back(std::move(p));
    } catch (const InputError& e) {
      throw InputError(fmt::format("workload '{}': {}", w.name, e.bare_message()), w.where);
    }
  }
  return out;
}

// Serving: output tokens/s of the box (every replica) at the workload's concurrency, over the
// tensor-parallel widths that run (or the one asked for).
WorkloadScore score_serve(const topo::Chassis& chassis, const Prepared& p) {
  WorkloadScore s;
  s.workload = p.spec->name;
  int gpus = static_cast<int>(chassis.gpus().size());
  std::string last_error = "no tensor-parallel width runs";
  for (int tp : {1, 2, 4, 8}) {
    if (tp > gpus || (p.spec->tp > 0 && tp != p.spec->tp)) continue;
    try {
      work::ServeOptions o = p.serve;
      o.tp = tp;
      auto r = work::serve(chassis, p.model, o);
      if (r.point.output_tokens_per_s <= s.tokens_per_s) continue;
      s.fits = true;
      s.simulated = true;  // the serving model has no cheaper form: every score is its full model
      s.tokens_per_s = r.point.output_tokens_per_s;
      s.plan =
          fmt::format("tp={} x {} replicas, {} clients", r.tp, r.replicas, p.serve.concurrency);
      s.bottleneck = r.bottleneck;
      s.limiting_link = r.comm_link.empty() ? ""
                                            : fmt::format("{} (tensor-parallel all-reduce, {})",
                                                          r.comm_link, r.comm_algorithm);
    } catch (const InputError& e) {
      last_error = e.bare_message();
    }
  }
  if (!s.fits) s.bottleneck = last_error;
  return s;
}

WorkloadScore score_workload(const topo::Chassis& chassis, const Prepared& p, int simulate_top) {
  if (p.spec->kind == "serve") return score_serve(chassis, p);
  WorkloadScore s;
  s.workload = p.spec->name;
  try {
    work::StepModel sm(chassis, p.model, p.job);
    work::SearchOptions o;
    o.top = 1;
    o.simulate_top = simulate_top;
    auto r = work::search_plans(sm, o);
    const auto& best = r.best.front();
    s.fits = true;
    s.tokens_per_s = best.tokens_per_s;
    s.simulated = best.simulated;
    s.plan = best.plan.str();
    s.bottleneck = best.bottleneck;
    if (!best.links.empty())
      s.limiting_link =
          fmt::format("{} ({}, {:.0f}% of capacity used, busy {:.0f}%, {} traffic)",
                      best.links[0].link, best.links[0].tech, 100 * best.links[0].utilisation,
                      100 * best.links[0].busy_fraction, best.links[0].traffic);
  } catch (const InputError& e) {
    s.fits = false;
    s.bottleneck = e.bare_message();
  }
  return s;
}

// The model inputs of a chassis: what a score depends on (nodes and parts, links, widths, root
// complexes, efficiencies, network). Board material, trace lengths, connectors, cooling zones,
// prices and the description do not change a prediction, so candidates that differ only in them
// share one score.
std::string model_key(const topo::ChassisSpec& spec) {
  std::string k;
  k.reserve(64 * (spec.nodes.size() + spec.links.size()));
  for (const auto& n : spec.nodes) {
    k += n.id, k += '|', k += n.kind, k += '|', k += n.part, k += '|';
    k += n.numa ? std::to_string(*n.numa) : "-";
    for (const auto& [f, v] : n.overrides) k += fmt::format("|{}={}", f, v);
    k += '\n';
  }
  for (const auto& l : spec.links) {
    k += l.a, k += '|', k += l.b, k += '|', k += l.tech, k += '|', k += std::to_string(l.width),
        k += '|', k += l.match;
    k += '|', k += l.root_complex ? std::to_string(*l.root_complex) : "-";
    k += '|', k += l.efficiency ? fmt::format("{}", *l.efficiency) : "-";
    k += '\n';
  }
  k += fmt::format("net {} {} {}", spec.network.boxes, spec.network.tech,
                   spec.network.oversubscription);
  return k;
}

using Scores = std::vector<WorkloadScore>;

class ScoreCache {
 public:
  std::shared_ptr<const Scores> get(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    return it == map_.end() ? nullptr : it->second;
  }
  std::shared_ptr<const Scores> put(const std::string& key, Scores s) {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, fresh] = map_.emplace(key, std::make_shared<const Scores>(std::move(s)));
    return it->second;
  }
  std::size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return map_.size();
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const Scores>> map_;
};

std::string classify_build_error(const std::string& m) {
  if (m.find("PCIe lanes") != std::string::npos) return "lanes";
  if (m.find("NVLink ports") != std::string::npos) return "nvlink-ports";
  if (m.find("socket links") != std::string::npos) return "socket-links";
  if (m.find("PCIe interface") != std::string::npos) return "lanes";
  return "structure";
}

// What the closed form says of one candidate.
struct Eval {
  bool generated = false;
  std::string not_generated;
  std::string excluded;    ///< budget kind, "target", or "" when feasible
  bool relaxable = false;  ///< every error is of one budget kind (excluded)
  double needed = 0, limit = 0;
  std::string unit;
  double power_w = 0, cost_usd = 0;
  int retimers = 0;
  std::shared_ptr<const Scores> scores;
  std::size_t key_hash = 0;  ///< of model_key(): distinct chassis are counted by it
  double objective = 0;
};

void evaluate(const DesignSpace& space, const std::vector<Prepared>& work, ScoreCache& cache,
              std::uint64_t i, Eval& e) {
  std::string why;
  auto spec = make_candidate(space, space.choice(i), nullptr, &why);
  if (!spec) {
    e.not_generated = why;
    return;
  }
  e.generated = true;
  std::optional<topo::Chassis> chassis;
  try {
    chassis.emplace(topo::build_chassis(*spec, hw::Catalog::builtin(), 0, false));
  } catch (const InputError& err) {
    e.excluded = classify_build_error(err.bare_message());
    return;
  }
  auto budgets = topo::check_budgets(*chassis);
  e.power_w = budgets.power_w;
  e.cost_usd = budgets.cost_usd;
  e.retimers = budgets.retimers;
  if (const auto* err = budgets.first_error()) {
    e.excluded = err->budget;
    e.relaxable = true;
    for (const auto& l : budgets.lines)
      if (l.status == topo::BudgetStatus::kError) {
        if (l.budget != err->budget || l.limit <= 0) e.relaxable = false;
        if (l.use() > (e.limit > 0 ? e.needed / e.limit : 0))
          e.needed = l.used, e.limit = l.limit, e.unit = l.unit;
      }
    if (!e.relaxable) return;
  }
  std::string key = model_key(*spec);
  e.key_hash = std::hash<std::string>{}(key);
  e.scores = cache.get(key);
  if (!e.scores) {
    Scores s;
    for (const auto& p : work) s.push_back(score_workload(*chassis, p, 0));
    e.scores = cache.put(key, std::move(s));
  }
  if (!e.excluded.empty()) return;
  for (std::size_t w = 0; w < work.size(); ++w) {
    const auto& target = work[w].spec->min_tokens_per_s;
    if (target && (*e.scores)[w].tokens_per_s < *target) {
      e.excluded = "target";
      return;
    }
  }
}

// This process's share: candidates rank, rank + processes, ...; over `threads` workers.
std::vector<Eval> evaluate_all(const DesignSpace& space, const std::vector<Prepared>& work,
                               ScoreCache& cache, int threads, int rank = 0, int processes = 1) {
  std::uint64_t n = space.candidate_count();
  std::vector<Eval> evals(n);
  std::vector<std::thread> pool;
  std::exception_ptr failure;
  std::mutex fail_mu;
  const std::uint64_t step = static_cast<std::uint64_t>(threads) * processes;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        for (std::uint64_t i = rank + static_cast<std::uint64_t>(t) * processes; i < n; i += step)
          evaluate(space, work, cache, i, evals[i]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(fail_mu);
        if (!failure) failure = std::current_exception();
      }
    });
  for (auto& th : pool) th.join();
  if (failure) std::rethrow_exception(failure);
  return evals;
}

// One process's closed-form results, sent to rank 0: its candidates' evaluations and the scores of
// each distinct chassis once (by key hash). Same binary on every rank: numbers travel as bytes.
class Writer {
 public:
  template <class T>
  void pod(T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(const std::string& s) {
    pod<std::uint64_t>(s.size());
    out += s;
  }
  std::string out;
};

class Reader {
 public:
  explicit Reader(const std::string& s) : s_(s) {}
  template <class T>
  T pod() {
    T v{};
    need(sizeof v);
    std::memcpy(&v, s_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string str() {
    auto n = pod<std::uint64_t>();
    need(n);
    std::string v = s_.substr(at_, n);
    at_ += n;
    return v;
  }

 private:
  void need(std::uint64_t n) const {
    if (n > s_.size() - at_) throw RuntimeError("design: a process sent a truncated result");
  }
  const std::string& s_;
  std::size_t at_ = 0;
};

std::string pack_share(const std::vector<Eval>& evals, int rank, int processes,
                       const std::string& failure) {
  Writer w;
  w.str(failure);
  if (!failure.empty()) return w.out;
  std::unordered_map<std::size_t, const Scores*> tables;
  for (std::uint64_t i = rank; i < evals.size(); i += processes)
    if (evals[i].scores) tables.emplace(evals[i].key_hash, evals[i].scores.get());
  w.pod<std::uint64_t>(tables.size());
  for (const auto& [hash, scores] : tables) {
    w.pod(hash);
    w.pod<std::uint64_t>(scores->size());
    for (const auto& s : *scores) {
      w.str(s.workload), w.pod(s.fits), w.pod(s.tokens_per_s), w.pod(s.simulated);
      w.str(s.plan), w.str(s.bottleneck), w.str(s.limiting_link);
    }
  }
  for (std::uint64_t i = rank; i < evals.size(); i += processes) {
    const auto& e = evals[i];
    w.pod(e.generated), w.str(e.not_generated), w.str(e.excluded), w.pod(e.relaxable);
    w.pod(e.needed), w.pod(e.limit), w.str(e.unit), w.pod(e.power_w), w.pod(e.cost_usd);
    w.pod(e.retimers), w.pod<bool>(e.scores != nullptr), w.pod(e.key_hash);
  }
  if (w.out.size() > static_cast<std::size_t>(INT_MAX))
    throw RuntimeError("design: one process's share is over 2 GiB; run with more processes");
  return w.out;
}

// Fills rank `rank`'s candidates of `evals` from its share; returns its failure, if any.
std::string unpack_share(const std::string& share, std::vector<Eval>& evals, int rank,
                         int processes) {
  Reader rd(share);
  std::string failure = rd.str();
  if (!failure.empty()) return failure;
  std::unordered_map<std::size_t, std::shared_ptr<const Scores>> tables;
  auto count = rd.pod<std::uint64_t>();
  for (std::uint64_t t = 0; t < count; ++t) {
    auto hash = rd.pod<std::size_t>();
    Scores scores(rd.pod<std::uint64_t>());
    for (auto& s : scores) {
      s.workload = rd.str(), s.fits = rd.pod<bool>(), s.tokens_per_s = rd.pod<double>();
      s.simulated = rd.pod<bool>();
      s.plan = rd.str(), s.bottleneck = rd.str(), s.limiting_link = rd.str();
    }
    tables.emplace(hash, std::make_shared<const Scores>(std::move(scores)));
  }
  for (std::uint64_t i = rank; i < evals.size(); i += processes) {
    auto& e = evals[i];
    e.generated = rd.pod<bool>(), e.not_generated = rd.str(), e.excluded = rd.str();
    e.relaxable = rd.pod<bool>(), e.needed = rd.pod<double>(), e.limit = rd.pod<double>();
    e.unit = rd.str(), e.power_w = rd.pod<double>(), e.cost_usd = rd.pod<double>();
    e.retimers = rd.pod<int>();
    bool scored = rd.pod<bool>();
    e.key_hash = rd.pod<std::size_t>();
    if (scored) e.scores = tables.at(e.key_hash);
  }
  return "";
}

std::size_t distinct_chassis(const std::vector<Eval>& evals) {
  std::vector<std::size_t> keys;
  for (const auto& e : evals)
    if (e.scores) keys.push_back(e.key_hash);
  std::sort(keys.begin(), keys.end());
  return std::unique(keys.begin(), keys.end()) - keys.begin();
}

int thread_count(int asked) {
  if (asked > 0) return asked;
  return std::max(1u, std::thread::hardware_concurrency());
}

Design full_design(const DesignSpace& space, const std::vector<Prepared>& work, std::uint64_t index,
                   const Eval& e, int simulate_top) {
  Design d;
  std::string why;
  d.spec = *make_candidate(space, space.choice(index), &d.candidate, &why);
  d.candidate.index = index;
  d.spec.name = fmt::format("design-{}", index);
  auto chassis = topo::build_chassis(d.spec);
  d.budgets = topo::check_budgets(chassis);
  d.objective = e.objective;
  d.power_w = e.power_w;
  d.cost_usd = e.cost_usd;
  d.retimers = e.retimers;
  for (const auto& p : work) d.scores.push_back(score_workload(chassis, p, simulate_top));
  return d;
}

}  // namespace

std::uint64_t score_all(const DesignSpace& space, int threads, std::uint64_t* distinct) {
  auto work = prepare(space);
  ScoreCache cache;
  auto evals = evaluate_all(space, work, cache, thread_count(threads));
  if (distinct) *distinct = cache.size();
  return std::count_if(evals.begin(), evals.end(),
                       [](const Eval& e) { return e.generated && e.excluded.empty(); });
}

DesignResult run_design(const DesignSpace& space, const SearchOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  DesignResult r;
  r.space = space.name;
  r.threads = thread_count(options.threads);
  auto work = prepare(space);
  SearchOptions o = options;
  std::optional<measure::ProcessGroup> group;
  if (o.processes == 1 && o.mpi && measure::launched_by_mpirun()) {
    std::string why;
    group = measure::mpi_process_group(&why);
    if (!group) throw RuntimeError(why);
    o.rank = group->rank, o.processes = group->size, o.gather = group->gather;
  }
  if (o.processes < 1 || o.rank < 0 || o.rank >= o.processes || (o.processes > 1 && !o.gather))
    throw RuntimeError("design: bad process group");
  r.processes = o.processes;
  ScoreCache cache;
  std::vector<Eval> evals;
  if (o.processes == 1) {
    evals = evaluate_all(space, work, cache, r.threads);
  } else {
    // Every process scores its share and sends it to rank 0, even when it failed, so no rank waits
    // on one that is gone; rank 0 merges the shares and goes on alone.
    std::string failure;  // "I" or "R" (InputError or not), then the message
    std::exception_ptr own;
    try {
      evals = evaluate_all(space, work, cache, r.threads, o.rank, o.processes);
    } catch (const std::exception& e) {
      own = std::current_exception();
      failure = (dynamic_cast<const InputError*>(&e) ? "I" : "R") + std::string(e.what());
      evals.assign(space.candidate_count(), Eval{});
    }
    auto shares = o.gather(pack_share(evals, o.rank, o.processes, failure));
    if (group) group->finalize();
    if (o.rank != 0) {
      r.root = false;
      return r;
    }
    if (own) std::rethrow_exception(own);
    for (int p = 1; p < o.processes; ++p) {
      auto f = unpack_share(shares.at(p), evals, p, o.processes);
      if (f.empty()) continue;
      if (f[0] == 'I') throw InputError(f.substr(1));
      throw RuntimeError(fmt::format("process {}: {}", p, f.substr(1)));
    }
  }
  r.candidates = evals.size();
  r.distinct_models = distinct_chassis(evals);
  r.best_tokens_per_s.assign(work.size(), 0);
  std::vector<std::uint64_t> feasible;
  for (std::uint64_t i = 0; i < evals.size(); ++i) {
    const auto& e = evals[i];
    if (!e.generated) {
      r.not_generated[e.not_generated]++;
      continue;
    }
    ++r.generated;
    if (!e.excluded.empty()) {
      r.excluded[e.excluded]++;
      continue;
    }
    feasible.push_back(i);
    for (std::size_t w = 0; w < work.size(); ++w)
      r.best_tokens_per_s[w] = std::max(r.best_tokens_per_s[w], (*e.scores)[w].tokens_per_s);
  }
  r.feasible = feasible.size();
  if (feasible.empty()) {
    std::string parts;
    for (const auto& [k, v] : r.excluded)
      parts += fmt::format("{}{} by {}", parts.empty() ? "" : ", ", v, k);
    for (const auto& [k, v] : r.not_generated)
      parts += fmt::format("{}{} not built ({})", parts.empty() ? "" : ", ", v, k);
    throw InputError(
        fmt::format("no candidate of design space '{}' fits: {} candidates, {} excluded ({})",
                    space.name, r.candidates, r.generated,
                    parts.empty() ? "none generated" : parts),
        SourceLocation{space.file, 0, 0});
  }
  auto objective = [&](const Eval& e) {
    double sum = 0;
    for (std::size_t w = 0; w < work.size(); ++w)
      if (r.best_tokens_per_s[w] > 0)
        sum += work[w].spec->weight * (*e.scores)[w].tokens_per_s / r.best_tokens_per_s[w];
    return sum;
  };
  for (auto& e : evals)
    if (e.scores) e.objective = objective(e);
  // Objectives are compared to 0.001: candidates whose throughputs differ only in the model's last
  // digits (a root port for a switch under a compute-bound job) rank by cost and power.
  auto level = [&](const Eval& e) { return std::llround(e.objective * 1000); };
  auto better = [&](std::uint64_t a, std::uint64_t b) {
    const auto &x = evals[a], &y = evals[b];
    if (level(x) != level(y)) return level(x) > level(y);
    if (x.cost_usd != y.cost_usd) return x.cost_usd < y.cost_usd;
    if (x.power_w != y.power_w) return x.power_w < y.power_w;
    return a < b;
  };
  std::sort(feasible.begin(), feasible.end(), better);
  // Pareto front over (objective up, power down, cost down), objectives to 0.001; ties keep the
  // first.
  std::vector<std::uint64_t> front;
  for (std::uint64_t i : feasible) {
    const auto& e = evals[i];
    bool dominated = level(e) <= 0;  // runs none of the workloads
    for (std::uint64_t j : front) {
      const auto& f = evals[j];
      if (level(f) >= level(e) && f.power_w <= e.power_w && f.cost_usd <= e.cost_usd) {
        dominated = true;
        break;
      }
    }
    if (!dominated) front.push_back(i);
  }
  const std::size_t kMaxFront = 12;
  if (front.size() > kMaxFront) front.resize(kMaxFront);
  for (int k = 0; k < std::min<int>(o.top, feasible.size()); ++k) {
    auto d = full_design(space, work, feasible[k], evals[feasible[k]], o.simulate_top);
    d.rank = k + 1;
    d.on_front = std::count(front.begin(), front.end(), feasible[k]) > 0;
    r.ranked.push_back(std::move(d));
  }
  for (std::uint64_t i : front) {
    auto it = std::find_if(r.ranked.begin(), r.ranked.end(),
                           [&](const Design& d) { return d.candidate.index == i; });
    if (it != r.ranked.end()) {
      r.front.push_back(*it);
      continue;
    }
    auto d = full_design(space, work, i, evals[i], o.simulate_top);
    d.rank =
        static_cast<int>(std::find(feasible.begin(), feasible.end(), i) - feasible.begin()) + 1;
    d.on_front = true;
    r.front.push_back(std::move(d));
  }
  // What relaxing each budget would buy: the best candidate that budget alone kept out, when it
  // beats the best design.
  std::map<std::string, std::pair<std::uint64_t, int>>
      best_excluded;  // budget -> (candidate, count)
  for (std::uint64_t i = 0; i < evals.size(); ++i) {
    const auto& e = evals[i];
    if (!e.relaxable || !e.scores) continue;
    auto& slot = best_excluded.try_emplace(e.excluded, i, 0).first->second;
    slot.second++;
    if (e.objective > evals[slot.first].objective) slot.first = i;
  }
  auto best_level = level(evals[feasible.front()]);
  for (const auto& [budget, v] : best_excluded) {
    const auto& e = evals[v.first];
    if (level(e) <= best_level) continue;
    Candidate c;
    std::string why;
    make_candidate(space, space.choice(v.first), &c, &why);
    r.relaxations.push_back({budget, v.second, c.name, e.objective, e.needed, e.limit, e.unit});
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

void write_designs(const DesignResult& result, const std::string& folder) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) throw RuntimeError(fmt::format("cannot create folder '{}': {}", folder, ec.message()));
  for (const auto* list : {&result.ranked, &result.front})
    for (const auto& d : *list)
      write_file_atomic(folder + "/" + d.spec.name + ".yaml", topo::chassis_spec_to_yaml(d.spec));
}

}  // namespace linkwise::design
