// A discrete-event engine: a task graph run over GPU streams and shared resources (links).
//
// Model.
//   Task t: prerequisites D_t, an optional stream s_t = (gpu, stream id), a fixed delay d_t
//   (compute time, or a transfer's start latency), and flows F_t (bytes b_f over a route of
//   resources). Ready time      r_t = max(end of every prerequisite, end of the task queued before
//   t on s_t)
//                   (streams are in order, like CUDA streams: tasks on one stream run in the order
//                   they were added to the graph).
//   Start           start_t = r_t.
//   Flows start     at start_t + d_t and share resources with every other active flow by max-min
//                   fairness (sim/maxmin.h); rates are recomputed whenever a flow starts or ends:
//                   between events, flow f moves at x_f and b_f(remaining) falls by x_f·Δt.
//   End             end_t = the time its last flow ends (start_t + d_t when it has none).
//   Makespan        max end_t.
//   Resource use    bytes_r = Σ_f a_{f,r}·b_f;  busy_r = time during which any flow crossed r;
//                   utilisation_r = bytes_r / (C_r · makespan).
// Cost: O(E · (F_active · L)) for E events, with one progressive filling per event.
//
//   linkwise::sim::TaskGraph g;
//   int c = g.add_compute(/*gpu*/0, /*stream*/0, 1e-3, "fwd");
//   int x = g.add_transfer({{.bytes = 1e9, .route = {0}}}, 5e-6, "send", {c});
//   auto r = linkwise::sim::Engine({100e9}).run(g);   // r.tasks[x].end_s = 1e-3 + 5e-6 + 0.01
#pragma once

#include <string>
#include <vector>

#include "linkwise/sim/maxmin.h"

namespace linkwise::sim {

/// One flow of a transfer: `bytes` over `route` (resource ids; a repeat counts twice).
struct FlowSpec {
  double bytes = 0;
  std::vector<int> route;
  double rate_cap = kUnlimited;  ///< bytes/s, e.g. a copy engine or protocol limit
  std::vector<double> coeff;     ///< per route entry: share of the bytes it carries; empty = 1 each
};

/// A stream a task occupies: tasks on one (gpu, stream) run one at a time, in the order added.
struct StreamRef {
  int gpu = -1;    ///< any integer naming the device (a GPU rank or node index); -1 = no stream
  int stream = 0;  ///< e.g. 0 compute, 1 communication
};

struct Task {
  std::string name;
  std::string tag;              ///< free category for reports ("compute", "tp-allreduce", ...)
  StreamRef stream;             ///< gpu = -1: occupies no stream
  double delay_s = 0;           ///< compute time, or latency before the flows start
  std::vector<FlowSpec> flows;  ///< empty for compute
  std::vector<int> deps;        ///< prerequisite task ids (must be lower than this task's id)
};

/// The graph: tasks in insertion order; a task may only depend on tasks added before it.
class TaskGraph {
 public:
  /// A compute task of `duration_s` on (gpu, stream). Returns its id.
  int add_compute(int gpu, int stream, double duration_s, std::string name = {},
                  std::vector<int> deps = {});
  /// A transfer: `latency_s`, then the flows. Occupies no stream. Returns its id.
  int add_transfer(std::vector<FlowSpec> flows, double latency_s, std::string name = {},
                   std::vector<int> deps = {});
  /// A general task (stream, delay and flows together). Returns its id.
  int add(Task task);
  /// Adds `prerequisite` to `task`'s dependencies (prerequisite < task).
  void depend(int task, int prerequisite);

  const std::vector<Task>& tasks() const { return tasks_; }
  Task& task(int id) { return tasks_.at(id); }
  int size() const { return static_cast<int>(tasks_.size()); }
  void reserve(int n) { tasks_.reserve(n); }

 private:
  std::vector<Task> tasks_;
};

struct TaskTime {
  double start_s = 0;  ///< when it became ready and began (its delay starts here)
  double end_s = 0;
};

struct ResourceUse {
  double bytes = 0;   ///< bytes carried (with route multiplicity)
  double busy_s = 0;  ///< time during which at least one flow crossed it
};

struct SimResult {
  std::vector<TaskTime> tasks;  ///< by task id
  double makespan_s = 0;
  std::vector<ResourceUse> resources;  ///< by resource id
  int events = 0;                      ///< rate recomputations

  /// Utilisation of resource `r`: bytes / (capacity · makespan), 0 to 1 (0 for no capacity or
  /// an empty run).
  double utilisation(int r, const std::vector<double>& capacity) const;
  /// The `k` fullest resources by utilisation (bytes moved over capacity · makespan), fullest
  /// first; ties: more busy time, then more bytes. `capacity` as given to the Engine.
  std::vector<int> fullest(int k, const std::vector<double>& capacity) const;
};

/// Runs task graphs over fixed resource capacities. Thread-compatible (run() is const).
class Engine {
 public:
  /// Capacities in bytes/s by resource id (see sim/resources.h for a chassis' numbering).
  explicit Engine(std::vector<double> capacity) : capacity_(std::move(capacity)) {}
  /// Runs the graph. Throws InputError for a dependency on a later or missing task, or a flow
  /// over a missing resource or a resource of capacity 0.
  SimResult run(const TaskGraph& graph) const;
  const std::vector<double>& capacity() const { return capacity_; }

 private:
  std::vector<double> capacity_;
};

}  // namespace linkwise::sim
