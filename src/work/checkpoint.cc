#include "linkwise/work/checkpoint.h"

#include <fmt/format.h>

#include <algorithm>

#include "linkwise/topo/chassis.h"
#include "work/step_impl.h"

namespace linkwise::work {

CheckpointCost checkpoint_cost(StepModel& sm, const StepResult& step, int every, bool sharded,
                               bool async) {
  CheckpointCost c;
  const Model& m = sm.model();
  const Job& job = step.job;
  const Plan& p = step.plan;
  double trainable = job.mode == Mode::kLora ? lora_params(m, job.lora) : m.total_params();
  c.bytes = 14 * trainable;
  const auto& ch = sm.chassis();
  Placement pl = place(p, ch);
  int box = ch.node(pl.gpus.front()).box;
  std::vector<int> gpus;
  for (int n : pl.gpus)
    if (ch.node(n).box == box && ch.node(n).cpu >= 0) gpus.push_back(n);
  int boxes = 0;
  {
    std::vector<int> seen;
    for (int n : pl.gpus)
      if (std::find(seen.begin(), seen.end(), ch.node(n).box) == seen.end())
        seen.push_back(ch.node(n).box);
    boxes = static_cast<int>(seen.size());
  }
  c.box_bytes = c.bytes / std::max(1, boxes);
  if (gpus.empty()) return c;
  if (!sharded) gpus.resize(1);
  // GPUs to host memory: the offload transfer (one flow per GPU over its PCIe path) with the box's
  // share.
  Plan one = p;
  one.zero = 0;
  Shape sh;
  sh.layers_per_stage = 1;
  sh.stage_trainable =
      c.box_bytes / 2 / static_cast<double>(gpus.size());  // offload_periods moves 2 bytes each
  Periods r;
  if (sharded) {
    offload_periods(*sm.impl(), one, pl, sh, r, nullptr);
  } else {
    Placement first = pl;
    first.gpus = {gpus.front()};
    offload_periods(*sm.impl(), one, first, sh, r, nullptr);
  }
  c.d2h_s = r.d2h;
  double write = 0;
  int drives = 0;
  for (int n : ch.nodes_of_kind(topo::NodeKind::kNvme))
    if (ch.node(n).box == box) write += ch.node(n).fig("write_bytes_per_s", 0), ++drives;
  if (write > 0) {
    c.write_s = c.box_bytes / write;
    c.sink = fmt::format("{} NVMe drives ({:.1f} GB/s)", drives, write / 1e9);
  } else {
    c.sink = "no NVMe drive in the box (writes to network storage are not modelled)";
  }
  c.exposed_s = c.d2h_s + (async ? 0 : c.write_s);
  double wall = every * step.step_time_s + c.exposed_s;
  c.share = wall > 0 ? c.exposed_s / wall : 0;
  c.read_bytes_per_step = 4 * step.tokens_per_step / std::max(1, boxes);
  return c;
}

}  // namespace linkwise::work
