// Communicator: ranks, ring search, timing through the engine, and the `auto` choice.
//
// Timing. For a fixed schedule every flow's bytes scale with S, so the engine's time for the phase
// chain is exactly linear in S: t(S) = latency + τ·S. τ is found once per (op, algorithm, protocol)
// by running the engine (sim::Engine) on the schedule at S = 1 GiB, and cached; a sweep of sizes
// then costs one multiply each. auto evaluates every (algorithm, protocol) NCCL's tuner would weigh
// that the ranks support (ring, tree, NVLS; direct for all-to-all and send/recv) and keeps the
// fastest, as the tuner picks the least modelled time (src/enqueue.cc, topoGetAlgoInfo). An
// algorithm whose latency plus a lower bound on its bandwidth term cannot beat the best found so
// far is not timed (could_beat()): the choice is the same, and one-off predictions skip building
// it.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "impl.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"

namespace linkwise::comm {

namespace {
constexpr double kReferenceBytes = 1024.0 * 1024 * 1024;  // S at which τ is measured
}

ChassisRouting::ChassisRouting(const topo::Chassis& chassis) {
  auto i = std::make_shared<Impl>();
  i->chassis = &chassis;
  i->res = sim::chassis_resources(chassis);
  i->finder = std::make_shared<const topo::PathFinder>(chassis, topo::Rate::kEffective);
  impl = std::move(i);
}

const topo::Chassis& ChassisRouting::chassis() const { return *impl->chassis; }
const sim::ChassisResources& ChassisRouting::resources() const { return impl->res; }

Communicator::Communicator(const topo::Chassis& chassis, std::vector<int> gpu_nodes,
                           CommOptions options)
    : Communicator(ChassisRouting(chassis), std::move(gpu_nodes), std::move(options)) {}

Communicator::Communicator(const ChassisRouting& routing, std::vector<int> gpu_nodes,
                           CommOptions options)
    : impl_(std::make_unique<Impl>()) {
  const topo::Chassis& chassis = routing.chassis();
  auto& m = *impl_;
  m.shared = routing.impl;
  m.chassis = &chassis;
  m.opt = std::move(options);
  if (gpu_nodes.empty()) gpu_nodes = chassis.gpus();
  std::set<int> seen;
  for (int g : gpu_nodes) {
    if (g < 0 || g >= static_cast<int>(chassis.nodes().size()) ||
        chassis.node(g).kind != topo::NodeKind::kGpu)
      throw InputError(fmt::format("node {} of chassis '{}' is not a GPU", g, chassis.name()));
    if (!seen.insert(g).second)
      throw InputError(fmt::format("{} is listed twice among the ranks", chassis.display_name(g)));
  }
  if (gpu_nodes.size() < 2)
    throw InputError(fmt::format("a collective needs at least 2 GPUs, got {}", gpu_nodes.size()));
  m.ranks = std::move(gpu_nodes);
  m.res = routing.impl->res;
  m.router = std::make_unique<detail::Router>(chassis, m.res, m.opt, routing.impl->finder,
                                              routing.impl->mirror);
  m.setup_groups();
  m.search_rings();
  m.count_nccl_channels();
  m.check_nvls();
  m.setup_protocols();
  m.duplex.assign(chassis.links().size(), 1.0);
  for (const auto& l : chassis.links()) m.duplex[l.index] = l.tech->duplex_efficiency.value;
}

Communicator::~Communicator() = default;
Communicator::Communicator(Communicator&&) noexcept = default;
Communicator& Communicator::operator=(Communicator&&) noexcept = default;

const std::vector<int>& Communicator::ranks() const { return impl_->ranks; }
const std::vector<Ring>& Communicator::rings() const { return impl_->rings; }
const sim::ChassisResources& Communicator::resources() const { return impl_->res; }
const topo::Chassis& Communicator::chassis() const { return *impl_->chassis; }
bool Communicator::supports(Algo algo, Op op) const { return impl_->supports(algo, op); }

namespace {

// τ, channels and the saturated resources of one (op, algorithm, protocol).
Communicator::Impl::Timing time_schedule(const Communicator::Impl& m, Op op, Algo a, Protocol p) {
  auto phases = m.phases(op, a, p, kReferenceBytes);
  auto capacity = m.capacities_for(phases);
  sim::TaskGraph g;
  int prev = -1;
  std::size_t widest = 0, widest_size = 0;
  for (std::size_t i = 0; i < phases.size(); ++i) {
    if (phases[i].flows.size() > widest_size) widest = i, widest_size = phases[i].flows.size();
    prev = g.add_transfer(std::move(phases[i].flows), 0, phases[i].name,
                          prev < 0 ? std::vector<int>{} : std::vector<int>{prev});
  }
  auto r = std::make_shared<sim::SimResult>(sim::Engine(std::move(capacity)).run(g));
  Communicator::Impl::Timing t;
  t.tau = r->makespan_s / kReferenceBytes;
  if (p == Protocol::kSimple) t.run = std::move(r);  // find_bottlenecks() reads it
  t.channels = a == Algo::kRing
                   ? (m.nccl_channels > 0 ? m.nccl_channels : static_cast<int>(m.rings.size()))
               : a == Algo::kTree ? 2
                                  : 1;
  t.widest_phase = static_cast<int>(widest);
  return t;
}

// Bottlenecks: resources the largest phase of the Simple schedule saturates, fullest (utilisation
// over the whole schedule) first: the first 3 names into t.bottlenecks, the count into t.saturated.
void find_bottlenecks(const Communicator::Impl& m, Op op, Algo a, Communicator::Impl::Timing& t) {
  const int phase = t.widest_phase;
  auto phases = m.phases(op, a, Protocol::kSimple, kReferenceBytes);
  const sim::Engine engine(m.capacities_for(phases));
  const auto& capacity = engine.capacity();
  sim::MaxMinSolver s;
  s.view_capacity(capacity);
  bool capped = false;  // a flow runs at its rate cap (host-staged rings: NCCL's channels)
  if (phase < static_cast<int>(phases.size())) {
    for (const auto& f : phases[phase].flows) s.add_flow(f.route, f.coeff, f.rate_cap);
    const auto& rate = s.solve();
    for (std::size_t i = 0; i < rate.size(); ++i)
      capped = capped || rate[i] >= phases[phase].flows[i].rate_cap * (1 - 1e-9);
  } else {
    s.solve();
  }
  std::vector<int> sat;
  for (int i = 0; i < m.res.size(); ++i)
    if (s.load()[i] > 0 && s.saturated(i)) sat.push_back(i);
  // Fullest first over the whole schedule: bytes moved / (capacity x time) from one engine run of
  // every phase (time_schedule()'s, the same schedule on the same capacities); least capacity
  // first among equals.
  std::shared_ptr<const sim::SimResult> run = t.run;
  if (!run) {
    sim::TaskGraph g;
    int prev = -1;
    for (const auto& ph : phases)
      prev = g.add_transfer(ph.flows, 0, ph.name,
                            prev < 0 ? std::vector<int>{} : std::vector<int>{prev});
    run = std::make_shared<sim::SimResult>(engine.run(g));
  }
  std::vector<double> used(capacity.size(), 0.0);
  for (int i : sat) used[i] = run->utilisation(i, capacity);
  std::stable_sort(sat.begin(), sat.end(), [&](int x, int y) {
    return used[x] != used[y] ? used[x] > used[y] : capacity[x] < capacity[y];
  });
  t.bottlenecks.clear();
  if (capped && a == Algo::kRing && m.shm_ring_cap > 0)
    t.bottlenecks.push_back(
        fmt::format("{} SHM channel{}", m.nccl_channels, m.nccl_channels == 1 ? "" : "s"));
  for (std::size_t i = 0; i < sat.size() && t.bottlenecks.size() < 3; ++i)
    t.bottlenecks.push_back(sim::resource_name(*m.chassis, m.res, sat[i]));
  t.saturated = static_cast<int>(sat.size());
}

// Every flow of a schedule scales with the protocol's wire factor, so τ(p) = τ(Simple) ·
// wire_factor(p): the engine runs once per (op, algorithm).
Communicator::Impl::Timing& cached(const Communicator::Impl& m, Op op, Algo a) {
  auto key = std::make_tuple(static_cast<int>(op), static_cast<int>(a),
                             static_cast<int>(Protocol::kSimple));
  auto it = m.timing_cache.find(key);
  if (it == m.timing_cache.end())
    it = m.timing_cache.emplace(key, time_schedule(m, op, a, Protocol::kSimple)).first;
  return it->second;
}

std::pair<double, int> timing(const Communicator::Impl& m, Op op, Algo a, Protocol p) {
  std::lock_guard lock(m.mu);
  const auto& t = cached(m, op, a);
  return {t.tau * wire_factor(p), t.channels};
}

const Communicator::Impl::Timing& bottlenecks_of(const Communicator::Impl& m, Op op, Algo a) {
  std::lock_guard lock(m.mu);
  auto& t = cached(m, op, a);
  if (!t.bottlenecks_done) {
    find_bottlenecks(m, op, a, t);
    t.bottlenecks_done = true;
  }
  // The engine runs kept for this are not needed again (a run per resource of the chassis each).
  for (auto& [key, other] : m.timing_cache) other.run.reset();
  return t;
}

// Whether algorithm `a` could take less than `best_s` on `bytes` with some protocol, judged without
// timing it: t(p) = latency(p) + τ·wire_factor(p)·S >= latency(p) + τ_floor·wire_factor(p)·S, and
// floating-point operations are monotone, so where this says no, the timed t(p) would not be less
// either and auto's choice is the same. τ_floor: tree_tau_floor() for the tree, 0 for the others.
bool could_beat(const Communicator::Impl& m, Op op, Algo a, double bytes, double best_s) {
  if (!(best_s < std::numeric_limits<double>::infinity())) return true;
  double floor = 0;
  if (a == Algo::kTree) {
    std::lock_guard lock(m.mu);
    if (m.tree_floor < 0) m.tree_floor = m.tree_tau_floor();
    floor = m.tree_floor;
  }
  for (Protocol p : m.protocols(a))
    if (m.latency(op, a, p) + floor * wire_factor(p) * bytes < best_s) return true;
  return false;
}

// Algo::kAuto: what NCCL's tuner picks by its own cost model (src/graph/tuning.cc,
// ncclTopoTuneModel; src/enqueue.cc, topoGetAlgoInfo: the least estimated time), then timed by the
// flow model. NCCL estimates time = latency + S / algbw with algbw = busBw × ratio, ratio
// n/(2(n-1)) for the ring's all-reduce and 0.5 for the tree, and the tree's busBw 0.92 × the
// graph's. The graph's busBw is taken from the ring the flow model timed (busBw = 2(n-1)/n /
// τ_ring); the ring and NVLS estimates are NCCL's latency (tuner_latency: one per-hop figure for
// the graph, as NCCL has) plus the flow model's τ·S, NCCL's form
// (latency + bytes / bandwidth).
void choose_as_nccl(const Communicator::Impl& m, Op op, double bytes,
                    const std::vector<Algo>& algos, Prediction& best) {
  const int n = static_cast<int>(m.ranks.size());
  double best_est = std::numeric_limits<double>::infinity();
  std::vector<std::pair<double, std::string>> per_algo;  // each algorithm's best estimate
  for (Algo a : algos) {
    double algo_best = std::numeric_limits<double>::infinity();
    std::string algo_name;
    for (Protocol p : m.protocols(a)) {
      const double lat = m.tuner_latency(op, a, p);
      double est = 0;
      if (a == Algo::kTree && m.supports(Algo::kRing, op) && !m.protocols(Algo::kRing).empty()) {
        const double tau_ring = timing(m, op, Algo::kRing, Protocol::kSimple).first;
        const double bus = 2.0 * (n - 1) / n / tau_ring;
        est = lat + bytes * wire_factor(p) / (0.92 * 0.5 * bus);
      } else {
        est = lat + timing(m, op, a, p).first * bytes;
      }
      if (est < algo_best)
        algo_best = est, algo_name = fmt::format("{}/{}", to_string(a), to_string(p));
      if (est < best_est) {
        best_est = est;
        best.algorithm = a;
        best.protocol = p;
      }
    }
    if (!algo_name.empty()) per_algo.emplace_back(algo_best, algo_name);
  }
  auto [tau, channels] = timing(m, op, best.algorithm, best.protocol);
  best.latency_s = m.latency(op, best.algorithm, best.protocol);
  best.time_s = best.latency_s + tau * bytes;
  best.channels = channels;
  std::sort(per_algo.begin(), per_algo.end());
  std::string others;
  for (std::size_t i = 1; i < per_algo.size(); ++i)
    others += fmt::format("{} {} {:.1f} us", i == 1 ? ";" : ",", per_algo[i].second,
                          per_algo[i].first * 1e6);
  best.choice = fmt::format("NCCL's tuner model: {} {:.1f} us{}", per_algo.front().second,
                            best_est * 1e6, others);
}

void check_bytes(double bytes) {
  if (!(bytes > 0) || bytes > 1099511627776.0)
    throw InputError(fmt::format("message size must be 1 byte to 2^40 bytes, not {}", bytes));
}

}  // namespace

Prediction Communicator::predict(Op op, double bytes, Algo algo) const {
  check_bytes(bytes);
  const auto& m = *impl_;
  if (algo != Algo::kAuto && !m.supports(algo, op))
    throw InputError(fmt::format("algorithm '{}' cannot run {} on these {} GPUs ({})",
                                 to_string(algo), to_string(op), m.ranks.size(),
                                 m.why_not(algo, op)));
  if (algo != Algo::kAuto && m.protocols(algo).empty())
    throw InputError(
        fmt::format("algorithm '{}' has no protocol left that NCCL_PROTO allows", to_string(algo)));
  std::vector<Algo> algos;
  if (algo == Algo::kAuto || algo == Algo::kBest) {
    // Only what NCCL's tuner chooses among (src/enqueue.cc): ring, tree and NVLS for the
    // collectives, direct peer transfers for all-to-all and send/recv. Hierarchical, and direct for
    // the other collectives, are this model's extras, used only when asked for by name.
    if (op == Op::kAllToAll || op == Op::kSendRecv) {
      if (m.supports(Algo::kDirect, op)) algos.push_back(Algo::kDirect);
    } else {
      // NCCL_ALGO (opt.algos) narrows the list as it narrows NCCL's.
      for (Algo a : {Algo::kRing, Algo::kTree, Algo::kNvls})
        if (m.supports(a, op) && !m.protocols(a).empty() &&
            (m.opt.algos.empty() ||
             std::find(m.opt.algos.begin(), m.opt.algos.end(), a) != m.opt.algos.end()))
          algos.push_back(a);
    }
    if (algos.empty())
      throw InputError(fmt::format("no algorithm can run {} on these {} GPUs ({})", to_string(op),
                                   m.ranks.size(),
                                   op == Op::kAllToAll || op == Op::kSendRecv
                                       ? "direct, the only one for it, is limited to 256 ranks"
                                   : !m.opt.algos.empty() || !m.opt.protocols.empty()
                                       ? "none that NCCL_ALGO / NCCL_PROTO allow"
                                       : "no ring was found through them"));
  } else {
    algos.push_back(algo);
  }
  Prediction best;
  best.time_s = std::numeric_limits<double>::infinity();
  if (algo == Algo::kAuto && algos.size() > 1) {
    choose_as_nccl(m, op, bytes, algos, best);
  } else {
    for (Algo a : algos) {
      if (algos.size() > 1 && !could_beat(m, op, a, bytes, best.time_s)) continue;
      for (Protocol p : m.protocols(a)) {
        auto [tau, channels] = timing(m, op, a, p);
        double lat = m.latency(op, a, p);
        double time = lat + tau * bytes;
        if (time < best.time_s) {
          best.algorithm = a;
          best.protocol = p;
          best.time_s = time;
          best.latency_s = lat;
          best.channels = channels;
        }
      }
    }
    if (algo == Algo::kBest)
      best.choice = "the fastest schedule the flow model finds (--algo best)";
    else if (algo == Algo::kAuto)
      best.choice =
          "the only algorithm left: NCCL_ALGO / NCCL_PROTO and the machine allow no other";
  }
  const auto& limits = bottlenecks_of(m, op, best.algorithm);
  best.bottlenecks = limits.bottlenecks;
  best.saturated = limits.saturated;
  best.op = op;
  best.ranks = static_cast<int>(m.ranks.size());
  best.bytes = bytes;
  best.algbw_Bps = bytes / best.time_s;
  best.busbw_Bps = best.algbw_Bps * bus_factor(op, best.ranks);
  return best;
}

Schedule Communicator::schedule(Op op, double bytes, Algo algo) const {
  auto p = predict(op, bytes, algo);
  Schedule s;
  s.op = op;
  s.algorithm = p.algorithm;
  s.protocol = p.protocol;
  s.channels = p.channels;
  s.bytes = bytes;
  s.phases = impl_->phases(op, p.algorithm, p.protocol, bytes);
  if (!s.phases.empty()) s.phases.front().latency_s = p.latency_s;
  return s;
}

std::vector<double> Communicator::Impl::capacities_for(const std::vector<Phase>& phases) const {
  std::vector<double> cap = res.capacity;
  const int L = res.links;
  const auto& peer = router->peer_pcie();
  if (!router->host_routes() && peer.empty()) return cap;  // neither SHM nor P2P over PCIe
  std::vector<int> seen(2 * L, -1);  // per link direction: the last phase that loaded it
  std::vector<char> both(L, 0);
  for (std::size_t p = 0; p < phases.size(); ++p)
    for (const auto& f : phases[p].flows)
      for (std::size_t i = 0; i < f.route.size(); ++i) {
        const int r = f.route[i];
        if (r >= 2 * L || (!f.coeff.empty() && f.coeff[i] <= 0)) continue;
        seen[r] = static_cast<int>(p);
        if (seen[r ^ 1] == static_cast<int>(p)) both[r / 2] = 1;
      }
  // The SHM hops of the schedule's own flows (so that a link carrying only peer writes is left
  // alone): an SHM hop crosses its host memory resource (ids from 2L on); its way up runs back from
  // there to the link direction that leaves the sending GPU, its way down on to the one that enters
  // the receiving GPU.
  const auto& into = router->host_read_into();
  const auto& leaves = router->leaves_gpu();
  std::vector<char> staged(L, 0);
  std::vector<int> read_ends;  // link directions where an SHM hop enters its receiver
  const std::size_t scanned = router->host_routes() ? phases.size() : 0;  // no SHM: nothing to find
  for (std::size_t p = 0; p < scanned; ++p)
    for (const auto& f : phases[p].flows)
      for (std::size_t i = 0; i < f.route.size(); ++i) {
        if (f.route[i] < 2 * L) continue;
        for (std::size_t j = i; j-- > 0;) {
          const int r = f.route[j];
          if (r >= 2 * L) break;
          staged[r / 2] = 1;
          if (leaves[r]) break;
        }
        for (std::size_t j = i + 1; j < f.route.size(); ++j) {
          const int r = f.route[j];
          if (r >= 2 * L) break;
          staged[r / 2] = 1;
          if (into[r] >= 0) {
            read_ends.push_back(r);
            break;
          }
        }
      }
  // Both directions at once, where the SMs move the data over the link: host memory written or
  // read (SHM) or a peer's buffer written (P2P over PCIe). Each direction keeps the link
  // technology's duplex_efficiency (catalog pcie*), as copies both ways do (docs/collectives.md,
  // "Both directions at once"). GPUDirect RDMA (the NIC's DMA) keeps the full rate both ways (24
  // GB/s per HDR NIC each way on DGX A100, nccl issue 812).
  for (int l = 0; l < L; ++l)
    if (both[l] && duplex[l] < 1 &&
        (staged[l] || (!peer.empty() && (peer[2 * l] || peer[2 * l + 1])))) {
      cap[2 * l] *= duplex[l];
      cap[2 * l + 1] *= duplex[l];
    }
  // SHM: the receiving GPU's SMs load the buffer from host memory (docs/collectives.md, "Reading
  // host memory"): at most its host_read_bytes_per_s where the hop enters it.
  for (int r : read_ends)
    if (into[r] > 0) cap[r] = std::min(cap[r], into[r]);
  return cap;
}

Bound Communicator::bound(Op op) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->bound_cache.find(static_cast<int>(op));
  if (it == impl_->bound_cache.end())
    it = impl_->bound_cache.emplace(static_cast<int>(op), impl_->compute_bound(op)).first;
  return it->second;
}

Prediction predict(const topo::Chassis& chassis, Op op, const std::vector<int>& gpu_nodes,
                   double bytes, Algo algo) {
  return Communicator(chassis, gpu_nodes).predict(op, bytes, algo);
}

int add_schedule(sim::TaskGraph& graph, const Schedule& schedule, const std::vector<int>& deps,
                 sim::StreamRef stream, const std::string& name) {
  int prev = -1;
  for (const auto& ph : schedule.phases) {
    sim::Task t;
    t.name = name.empty() ? ph.name : name + ":" + ph.name;
    t.tag = to_string(schedule.op);
    t.stream = stream;
    t.delay_s = ph.latency_s;
    t.flows = ph.flows;
    t.deps = prev < 0 ? deps : std::vector<int>{prev};
    prev = graph.add(std::move(t));
  }
  if (prev < 0) {  // an empty schedule still marks its place in the graph
    sim::Task t;
    t.name = name;
    t.stream = stream;
    t.deps = deps;
    prev = graph.add(std::move(t));
  }
  return prev;
}

}  // namespace linkwise::comm
