// Private parts of the step model shared by step.cc (composition, estimates) and step_sim.cc
// (engine runs).
#pragma once

#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "linkwise/comm/predict.h"
#include "linkwise/comm/transport.h"
#include "linkwise/sim/resources.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/topo/paths.h"
#include "linkwise/work/framework.h"
#include "linkwise/work/step.h"

namespace linkwise::work {

/// Busy time and bytes of one resource over one step, with bytes by traffic kind.
struct ResUse {
  double busy_s = 0;
  double bytes = 0;
  std::map<std::string, double> by_kind;
};

/// The repeating periods of a step (step.h), in seconds.
struct Periods {
  LayerCompute lc;
  double head_f = 0, head_b = 0;
  double tp_f = 0, tp_b = 0, ep_f = 0, ep_b = 0;  ///< per layer, on the critical path
  double cp_f = 0, cp_b = 0;      ///< per layer: ring attention transfers their blocks do not hide
  double zero_f = 0, zero_b = 0;  ///< per layer, ZeRO-3 traffic compute does not hide
  /// per layer: compute lost to the NCCL kernels of the ZeRO-3 collectives beside it (Σ σ·a;
  /// persistent GEMMs: overlap.h)
  double slow_f = 0, slow_b = 0;
  double dp_sigma = 0;  ///< σ of the gradient-bucket collective
  double p2p = 0;       ///< one stage-boundary transfer
  double bucket = 0;    ///< one layer's gradient collective over dp
  int buckets = 0;
  bool bucket_overlap = true;  ///< buckets beside the last backward, else after it
  double zero_after_b = 0;     ///< per layer: gradient collectives after the backward
  double zero_after_f = 0;     ///< per layer: blocking gathers of the forward
  double param_gather = 0;  ///< weight all-gather after the optimizer (ZeRO-1/2; ZeRO-3 persistent)
  double fill_f = 0, fill_b = 0;               ///< per micro-batch: StepTraffic::fill_f, fill_b
  double d2h = 0, cpu_optimizer = 0, h2d = 0;  ///< offload
  std::map<int, ResUse> use;                   ///< per step, by resource (engine runs only)
};

/// Tokens, parameters and byte counts of one plan that every period needs.
struct Shape {
  int mb = 1;                  ///< sequences per micro-batch
  int m = 1;                   ///< micro-batches per step
  double S = 0;                ///< tokens per micro-batch on one GPU (seq·mb/cp)
  double act_bytes = 0;        ///< 2·S·h: one micro-batch's hidden states, bf16
  double layer_trainable = 0;  ///< trainable parameters of one layer on one GPU (TP/EP split)
  double layer_weights = 0;    ///< parameters of one layer on one GPU
  int layers_per_stage = 1;
  /// trainable parameters of the heaviest pipeline stage on one GPU before ZeRO: its layers and,
  /// in full training, the embedding, final norm and LM head it holds (LoRA trains adapters only)
  double stage_trainable = 0;
};

/// The collectives model takes messages up to 2^40 bytes (nccl-tests' range). A step's one
/// collective is larger only on a plan that cannot fit (the gradients of a 405B model, 1.6 TB,
/// all-reduced at dp without sharding), which the train command reports as not fitting beside its
/// timing: such a collective runs as this many back-to-back pieces of at most 2^40 bytes, at that
/// size bandwidth-bound.
inline double message_pieces(double bytes) {
  constexpr double kMaxMessageBytes = 1099511627776.0;
  return bytes > kMaxMessageBytes ? std::ceil(bytes / kMaxMessageBytes) : 1.0;
}

struct StepModel::Impl {
  explicit Impl(const topo::Chassis& c);
  const topo::Chassis& chassis;
  comm::ChassisRouting routing;      ///< resource table and graph every communicator shares
  const sim::ChassisResources& res;  ///< routing's
  /// The NCCL settings of the chassis file's `nccl:` list (comm::nccl_options), as every
  /// communicator of the step runs them.
  comm::CommOptions nccl;
  /// Paths to host memory (offload), built on first use.
  topo::PathFinder& finder() {
    if (!finder_) finder_ = std::make_unique<topo::PathFinder>(chassis, topo::Rate::kEffective);
    return *finder_;
  }
  std::unique_ptr<topo::PathFinder> finder_;
  std::map<std::vector<int>, std::unique_ptr<comm::Communicator>> comms;
  std::map<std::tuple<std::vector<int>, int, double>, std::pair<double, double>> times;
  /// Offload: seconds per byte to and from host memory, by the set of GPUs of one box that offload.
  std::map<std::vector<int>, std::pair<double, double>> offload_per_byte;

  /// The communicator of a group (cached); the group has at least 2 GPUs.
  const comm::Communicator& comm(const std::vector<int>& nodes);
  /// Predicted time of one collective of one group alone (cached); 0 for a group of one.
  double time(const std::vector<int>& nodes, comm::Op op, double bytes) {
    return timed(nodes, op, bytes).first;
  }
  /// (time, bus bandwidth) of one collective of one group alone (cached); (0, 0) for a group of
  /// one.
  std::pair<double, double> timed(const std::vector<int>& nodes, comm::Op op, double bytes);
};

Shape shape_of(const Model& model, const Job& job, const Plan& plan);

/// Which group of a plan a collective runs over.
enum class GroupKind {
  kTp,         ///< the TP group of a (dp rank, stage)
  kEp,         ///< every TP rank's EP group of an EP block (the block synchronises)
  kDp,         ///< the DP group of a (tp rank, stage)
  kStagePair,  ///< each TP rank to the same rank of the next stage
  kShard,      ///< HSDP: the shard group of a (tp rank, dp block, stage)
  kReplica,    ///< HSDP: the ranks holding the same shard across the shard groups
  kCp,         ///< the context-parallel ring of a (tp rank, data block, stage)
};

/// One collective of the step: what every group of its kind runs, `bytes` as nccl-tests counts
/// them.
struct Coll {
  GroupKind group = GroupKind::kTp;
  comm::Op op = comm::Op::kAllReduce;
  double bytes = 0;
  const char* kind =
      "tp";  ///< tp, cp, ep, pp, dp, zero: the breakdown term and the links table's traffic
  double host_s = 0;  ///< host time the framework spends issuing it, on the critical path
};

/// One element of a layer's critical path, per TP group: compute, or a collective it waits for.
struct PathItem {
  double compute_s = 0;  ///< > 0: compute of this many seconds; else `coll`
  const char* name = "";
  Coll coll;
  /// TP communication overlap: compute of this many seconds runs beside the collective (both
  /// start together; the next item waits for both).
  double beside_s = 0;
  bool is_compute() const { return coll.bytes <= 0; }
};

/// Every collective of one step, written once: StepModel::estimate times each for one group alone,
/// StepModel::simulate runs each period's list on the engine with every concurrent group.
struct StepTraffic {
  std::vector<PathItem> forward, backward;  ///< one layer, one micro-batch, in order
  std::vector<Coll> beside_f, beside_b;  ///< ZeRO collectives beside the layer's compute, chained
  std::vector<Coll> after_b;  ///< ZeRO gradient collectives after the layer's backward (no overlap)
  std::vector<Coll> after_f;  ///< ZeRO collectives the forward waits for (blocking gathers)
  std::vector<Coll> boundary;  ///< one stage-boundary transfer, in order
  Coll bucket;                 ///< one gradient bucket (bytes 0: none)
  int buckets = 0;             ///< per step
  bool bucket_overlap = true;  ///< buckets start as the backward produces them
  Coll param_gather;  ///< weight all-gather after the optimizer (ZeRO-1/2; ZeRO-3 persistent)
  /// ZeRO-3 collectives of every micro-batch that no compute overlaps (pp = 1): before its forward,
  /// the parameters outside the layers (embedding, final norm, untied output layer: FSDP's root
  /// unit) and then the first layer are gathered; after its backward, the first layer's and the
  /// outside parameters' gradients are reduce-scattered.
  std::vector<Coll> fill_f, fill_b;
};

/// The step's collectives for a plan (docs/training.md, "The step").
StepTraffic step_traffic(const Model& model, const Job& job, const Plan& plan, const Shape& sh,
                         const LayerCompute& lc);

/// The first group of a kind (dp rank 0, stage 0, tp rank 0): what estimate() times.
std::vector<int> first_group(const Placement& pl, GroupKind g);

/// The ZeRO-3 and gradient-bucket collectives' NCCL kernels beside compute: sets slow_f, slow_b and
/// dp_sigma (compute.h comm_kernel_slowdown; on GPUs with persistent GEMMs the layer's kernels one
/// by one, overlap.h), timing each collective of the first group alone.
void contention_periods(StepModel::Impl& impl, const StepTraffic& t, const Placement& pl,
                        const GpuSpec& gpu, const Job& job, Periods& r);

/// Periods with every collective timed for one group alone.
Periods estimate_periods(StepModel::Impl& impl, const Model& model, const Job& job,
                         const Plan& plan, const GpuSpec& gpu, const Shape& sh);
/// Periods run on the engine (step_sim.cc).
Periods simulate_periods(StepModel::Impl& impl, const Model& model, const Job& job,
                         const Plan& plan, const GpuSpec& gpu, const Shape& sh);
/// Offload transfers and the CPU optimizer, on the engine (both paths use it: it is one flow per
/// GPU).
void offload_periods(StepModel::Impl& impl, const Plan& plan, const Placement& pl, const Shape& sh,
                     Periods& p, std::map<int, ResUse>* use);

/// DeepSpeed CPU-Adam on one CPU: seconds to update `params` parameters on `cores` cores of
/// `simd_fp32_lanes` lanes at `clock_hz`, or at `memory_bytes_per_s` when that is slower.
double cpu_adam_time(double params, double cores, double simd_fp32_lanes, double clock_hz,
                     double memory_bytes_per_s);

}  // namespace linkwise::work
