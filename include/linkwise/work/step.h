// One training step of a plan on a chassis: its time, what it is made of, and the links it loads.
//
// The step is built from periods that repeat (docs/training.md has the derivation):
//   layer forward / backward   per TP group: [all-gather] attention [reduce-scatter] [all-gather]
//   MLP
//                              [reduce-scatter] (sequence parallel; all-reduces without it), MoE
//                              all-to-alls around the experts, ZeRO-3 weight all-gathers (and
//                              gradient reduce-scatters) running beside the compute; TP and EP
//                              collectives sit on the critical path
//   stage boundary             send/recv of one micro-batch's activations (forward) or gradients
//   (backward) gradient bucket            one layer's gradients all-reduced (ZeRO-0) or
//   reduce-scattered (ZeRO-1/2)
//                              over the data-parallel group, started as soon as that layer's
//                              backward ends
//   offload                    gradients to host memory, the CPU optimizer, weights back
// and composed with the 1F1B schedule (Narayanan et al. 2021, section 2.2): with p stages, v chunks
// per stage, m micro-batches and per-micro-batch stage times t_f, t_b,
//   pipeline  = m·(t_f + t_b) + (p-1)/v·(t_f + t_b) + 2·(m·v + p - 1)·t_p2p        (bubble: the
//   middle term) DP tail   = max(c, n·c - (n-1)·t_layer_b) for n gradient buckets of time c each (0
//   without DP) step      = pipeline + DP tail + optimizer + ZeRO-1/2 weight all-gather + offload
//   I/O
//
// simulate() times each period on the engine (sim/engine.h) with every concurrent group's flows
// sharing the links (the groups of the first box(es): by symmetry the others load their own links
// alike); estimate() times each collective for one group alone (comm::Communicator::predict) and is
// what the plan search uses to rank candidates before simulating the best.
//
//   auto chassis = linkwise::topo::load_chassis("dgx-h100");
//   linkwise::work::StepModel sm(chassis, linkwise::work::find_model("llama3-70b"), job);
//   auto r = sm.simulate(linkwise::work::parse_plan("tp=8"));
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "linkwise/work/compute.h"
#include "linkwise/work/job.h"
#include "linkwise/work/memory.h"
#include "linkwise/work/model.h"
#include "linkwise/work/plan.h"

namespace linkwise::topo {
class Chassis;
}

namespace linkwise::work {

/// Seconds of one step, by kind. exposed_comm_s = tp_s + cp_s + ep_s + pp_s + dp_s + zero_s;
/// step = compute_s + exposed_comm_s + contention_s + bubble_s + io_s.
struct Breakdown {
  double compute_s = 0;       ///< GPU compute of the busiest stage, optimizer included
  double exposed_comm_s = 0;  ///< communication compute does not hide
  double contention_s =
      0;  ///< compute slowed by the NCCL kernels of hidden collectives (SMs, HBM traffic)
  double bubble_s = 0;  ///< pipeline fill and drain
  double io_s = 0;      ///< host traffic and CPU optimizer (offload)
  double tp_s = 0, ep_s = 0, pp_s = 0, dp_s = 0, zero_s = 0;
  double cp_s = 0;  ///< context-parallel ring transfers the attention beside them does not hide
  double optimizer_s = 0;  ///< part of compute_s
};

struct LinkBusy {
  std::string link;          ///< "gpu0->nvsw0"
  std::string tech;          ///< "NVLink 4"
  double busy_fraction = 0;  ///< of the step, time any flow crossed it (a second figure)
  double bytes = 0;          ///< per step
  std::string traffic;       ///< which collectives crossed it most: "tp", "dp", ...
  double utilisation = 0;    ///< bytes per step / (capacity x step time), 0 to 1: the ranking
};

struct StepResult {
  std::string chassis, model;
  Plan plan;
  Job job;
  int gpus = 0;
  int micro_batches = 0;
  bool simulated = false;
  double step_time_s = 0;
  double tokens_per_step = 0;
  double tokens_per_s = 0;
  double mfu = 0;  ///< model FLOPs (model_flops_per_token) / (step time · GPUs · peak)
  double hfu = 0;  ///< FLOPs executed (recomputation included) / the same
  double model_tflops_per_gpu = 0;
  Breakdown breakdown;
  MemoryBreakdown memory;
  std::vector<LinkBusy> links;  ///< fullest (utilisation) first (simulate() only)
  std::string bottleneck;       ///< one line: what limits the step
};

/// Step times of plans of one job on one chassis. Keeps communicators and collective times between
/// calls (the plan search evaluates hundreds of plans). Not thread-safe.
class StepModel {
 public:
  /// `job.seq` 0 becomes the model's; `job.global_batch` 0 becomes a default (docs/training.md).
  StepModel(const topo::Chassis& chassis, Model model, Job job);
  ~StepModel();
  StepModel(const StepModel&) = delete;
  StepModel& operator=(const StepModel&) = delete;

  /// Collectives timed one group at a time, no engine runs. Throws InputError when the plan cannot
  /// run.
  StepResult estimate(const Plan& plan);
  /// Periods run on the engine with concurrent groups sharing links. Throws InputError likewise.
  StepResult simulate(const Plan& plan);
  /// The same with a variant of job() (another recompute mode, offload, framework or overlap
  /// switch; the same sequence, batch and precision), sharing this model's collective caches: the
  /// plan search's way of trying what users can choose.
  StepResult estimate(const Plan& plan, const Job& job);
  StepResult simulate(const Plan& plan, const Job& job);

  const Model& model() const { return model_; }
  const Job& job() const { return job_; }
  const topo::Chassis& chassis() const { return chassis_; }
  const GpuSpec& gpu() const { return gpu_; }
  /// What the model changed in the job to fit the GPU (fused attention off before Ampere).
  const std::vector<std::string>& notes() const { return notes_; }

  struct Impl;
  /// The collective caches and chassis resources (opaque; work/ uses it for host traffic).
  Impl* impl() { return impl_.get(); }

 private:
  const topo::Chassis& chassis_;
  Model model_;
  Job job_;
  GpuSpec gpu_;
  std::vector<std::string> notes_;
  std::unique_ptr<Impl> impl_;
};

/// The 1F1B pipeline of p stages, v chunks per stage and m micro-batches with per-stage,
/// per-micro-batch forward and backward times t_f, t_b and one stage-boundary transfer t_p2p
/// (seconds):
///   bubble = (p-1)/v·(t_f + t_b),  total = m·(t_f + t_b) + bubble + [p > 1]·2·(m·v + p - 1)·t_p2p.
/// Without transfers the bubble is (p-1)/(m+p-1) of the total when v = 1.
struct PipelineTimes {
  double total_s = 0, bubble_s = 0, p2p_s = 0;
};
PipelineTimes pipeline_1f1b(int p, int m, int v, double t_f, double t_b, double t_p2p);

/// Data-parallel time left after the last backward: n equal buckets of `bucket_s` each, the i-th
/// ready when i layers' backward (`layer_backward_s` each) are done, reduced one after another:
///   end = max_i (i·t_l + (n - i + 1)·c)  ⇒  tail = end - n·t_l = max(c, n·c - (n-1)·t_l).
double dp_tail_s(int buckets, double bucket_s, double layer_backward_s);

/// Default global batch in sequences: pre-training 2^22 tokens' worth (GPT-3's 3.2M-token batches,
/// Brown et al. 2020 Table 2.1, rounded to a power of two), fine-tuning 64 sequences.
int default_global_batch(const Model& model, const Job& job);

/// Wall-clock time to train `tokens` tokens at the step's rate, seconds.
double time_to_train_s(const StepResult& step, double tokens);

}  // namespace linkwise::work
