// The discrete-event engine; the model and its equations are in include/linkwise/sim/engine.h.
#include "linkwise/sim/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>

#include "linkwise/util/error.h"

namespace linkwise::sim {

int TaskGraph::add_compute(int gpu, int stream, double duration_s, std::string name,
                           std::vector<int> deps) {
  Task t;
  t.name = std::move(name);
  t.tag = "compute";
  t.stream = {gpu, stream};
  t.delay_s = duration_s;
  t.deps = std::move(deps);
  return add(std::move(t));
}

int TaskGraph::add_transfer(std::vector<FlowSpec> flows, double latency_s, std::string name,
                            std::vector<int> deps) {
  Task t;
  t.name = std::move(name);
  t.tag = "transfer";
  t.delay_s = latency_s;
  t.flows = std::move(flows);
  t.deps = std::move(deps);
  return add(std::move(t));
}

int TaskGraph::add(Task task) {
  int id = size();
  for (int d : task.deps)
    if (d < 0 || d >= id)
      throw InputError(fmt::format(
          "task {} ('{}') depends on task {}, which is not an earlier task", id, task.name, d));
  tasks_.push_back(std::move(task));
  return id;
}

void TaskGraph::depend(int task, int prerequisite) {
  if (task < 0 || task >= size() || prerequisite < 0 || prerequisite >= task)
    throw InputError(
        fmt::format("task {} cannot depend on task {}: a task depends only on earlier ones", task,
                    prerequisite));
  tasks_[task].deps.push_back(prerequisite);
}

double SimResult::utilisation(int r, const std::vector<double>& capacity) const {
  if (r < 0 || r >= static_cast<int>(resources.size()) || r >= static_cast<int>(capacity.size()) ||
      capacity[r] <= 0 || makespan_s <= 0)
    return 0;
  return std::min(1.0, resources[r].bytes / (capacity[r] * makespan_s));
}

std::vector<int> SimResult::fullest(int k, const std::vector<double>& capacity) const {
  std::vector<int> ids;
  std::vector<double> u(resources.size(), 0.0);
  for (int r = 0; r < static_cast<int>(resources.size()); ++r)
    if (resources[r].bytes > 0) ids.push_back(r), u[r] = utilisation(r, capacity);
  std::sort(ids.begin(), ids.end(), [&](int a, int b) {
    if (u[a] != u[b]) return u[a] > u[b];
    if (resources[a].busy_s != resources[b].busy_s)
      return resources[a].busy_s > resources[b].busy_s;
    if (resources[a].bytes != resources[b].bytes) return resources[a].bytes > resources[b].bytes;
    return a < b;
  });
  if (static_cast<int>(ids.size()) > k) ids.resize(k);
  return ids;
}

namespace {

struct ActiveFlow {
  int task;
  double remaining;  // bytes
  const FlowSpec* spec;
};

class Run {
 public:
  Run(const std::vector<double>& capacity, const TaskGraph& g, MaxMinSolver& solver)
      : cap_(capacity), g_(g), solver_(solver) {
    solver_.clear();
    solver_.view_capacity(cap_);
  }

  SimResult go() {
    const int n = g_.size();
    result_.tasks.assign(n, {});
    result_.resources.assign(cap_.size(), {});
    waiting_.assign(n, 0);
    flows_left_.assign(n, 0);
    dependents_.assign(n, {});
    std::size_t flows = 0;
    for (const auto& t : g_.tasks()) flows += t.flows.size();
    active_.reserve(flows);
    still_.reserve(flows);
    rates_.reserve(flows);
    still_rates_.reserve(flows);
    check_and_link();
    for (int t = 0; t < n; ++t)
      if (waiting_[t] == 0) start(t);
    loop();
    for (const auto& t : result_.tasks) result_.makespan_s = std::max(result_.makespan_s, t.end_s);
    return std::move(result_);
  }

 private:
  void check_and_link() {
    std::map<std::pair<int, int>, int> last_on_stream;
    for (int t = 0; t < g_.size(); ++t) {
      const Task& task = g_.tasks()[t];
      auto& deps = deps_scratch_;
      deps.assign(task.deps.begin(), task.deps.end());
      if (task.stream.gpu >= 0) {
        auto key = std::make_pair(task.stream.gpu, task.stream.stream);
        auto it = last_on_stream.find(key);
        if (it != last_on_stream.end()) deps.push_back(it->second);
        last_on_stream[key] = t;
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      for (int d : deps) {
        if (d < 0 || d >= t)
          throw InputError(fmt::format("task {} depends on task {}, not an earlier task", t, d));
        dependents_[d].push_back(t);
      }
      waiting_[t] = static_cast<int>(deps.size());
      for (const auto& f : task.flows)
        for (int r : f.route)
          if (r < 0 || r >= static_cast<int>(cap_.size()) || !(cap_[r] > 0))
            throw InputError(fmt::format(
                "task {} ('{}') routes a flow over resource {}, which {}", t, task.name, r,
                r < 0 || r >= static_cast<int>(cap_.size()) ? "does not exist"
                                                            : "has no capacity"));
    }
  }

  void start(int t) {
    result_.tasks[t].start_s = now_;
    delays_.push({now_ + g_.tasks()[t].delay_s, t});
  }

  void begin_flows(int t) {
    const Task& task = g_.tasks()[t];
    for (const auto& f : task.flows) {
      if (f.bytes <= 0) continue;
      active_.push_back({t, f.bytes, &f});
      ++flows_left_[t];
      for (std::size_t i = 0; i < f.route.size(); ++i)
        result_.resources[f.route[i]].bytes += f.bytes * (f.coeff.empty() ? 1.0 : f.coeff[i]);
    }
    dirty_ = true;
    if (flows_left_[t] == 0) finish(t);
  }

  void finish(int t) {
    result_.tasks[t].end_s = now_;
    for (int d : dependents_[t])
      if (--waiting_[d] == 0) start(d);
  }

  void solve() {
    solver_.clear();
    std::size_t entries = 0;
    for (const auto& a : active_) entries += a.spec->route.size();
    solver_.reserve(active_.size(), entries);
    for (const auto& a : active_) {
      if (a.spec->coeff.empty())
        solver_.add_flow(a.spec->route, a.spec->rate_cap);
      else
        solver_.add_flow(a.spec->route, a.spec->coeff, a.spec->rate_cap);
    }
    rates_ = solver_.solve();
    ++result_.events;
    dirty_ = false;
  }

  void loop() {
    while (!delays_.empty() || !active_.empty()) {
      if (dirty_ && !active_.empty()) solve();
      double next = kUnlimited;
      if (!delays_.empty()) next = delays_.top().first;
      for (std::size_t i = 0; i < active_.size(); ++i)
        if (rates_[i] > 0) next = std::min(next, now_ + active_[i].remaining / rates_[i]);
      if (!std::isfinite(next))
        throw InputError("simulation stalled: a flow has no rate (check its route)");
      advance(next);
      while (!delays_.empty() && delays_.top().first <= now_) {
        int t = delays_.top().second;
        delays_.pop();
        begin_flows(t);
      }
    }
  }

  void advance(double next) {
    double dt = next - now_;
    if (dt > 0 && !active_.empty()) {
      for (int r : solver_.used())
        if (solver_.load()[r] > 0) result_.resources[r].busy_s += dt;
    }
    now_ = next;
    auto& still = still_;
    auto& still_rates = still_rates_;
    auto& done = done_;
    still.clear();
    still_rates.clear();
    done.clear();
    for (std::size_t i = 0; i < active_.size(); ++i) {
      auto& a = active_[i];
      a.remaining -= rates_[i] * dt;
      if (a.remaining <= a.spec->bytes * 1e-12 ||
          (rates_[i] > 0 && a.remaining / rates_[i] <= 1e-15 * (1 + now_))) {
        done.push_back(a.task);
        dirty_ = true;
      } else {
        still.push_back(a);
        still_rates.push_back(rates_[i]);
      }
    }
    active_.swap(still);
    rates_.swap(still_rates);
    for (int t : done)
      if (--flows_left_[t] == 0) finish(t);
  }

  const std::vector<double>& cap_;
  const TaskGraph& g_;
  MaxMinSolver& solver_;
  SimResult result_;
  double now_ = 0;
  bool dirty_ = false;
  std::vector<int> waiting_, flows_left_;
  std::vector<std::vector<int>> dependents_;
  std::vector<ActiveFlow> active_;
  std::vector<double> rates_;
  // scratch, kept between events
  std::vector<int> deps_scratch_, done_;
  std::vector<ActiveFlow> still_;
  std::vector<double> still_rates_;
  using Timed = std::pair<double, int>;
  std::priority_queue<Timed, std::vector<Timed>, std::greater<>> delays_;
};

}  // namespace

SimResult Engine::run(const TaskGraph& graph) const {
  // One solver per thread, kept between runs: its per-resource tables (loads, slots) are sized once
  // for a machine and cleared only where the last solve wrote, instead of allocated and zeroed for
  // every run (a machine of 64 boxes has hundreds of thousands of resources; a run's flows touch a
  // few thousand). It views this run's capacities and keeps nothing a run depends on.
  thread_local MaxMinSolver solver;
  return Run(capacity_, graph, solver).go();
}

}  // namespace linkwise::sim
