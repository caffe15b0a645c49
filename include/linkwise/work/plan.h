// Parallelism plans and where each GPU sits in one.
//
// A plan splits tp·pp·dp GPUs into a grid: tensor parallel (Megatron-LM style: attention heads and
// the MLP width split over tp GPUs; with sequence parallelism the norms and dropouts split along
// the sequence, Korthikanti et al. 2022), pipeline parallel (layers split into pp stages run with
// the 1F1B schedule, optionally interleaved into vpp chunks per stage, Narayanan et al. 2021), data
// parallel (dp replicas, gradients all-reduced, or sharded ZeRO-1/2/3, Rajbhandari et al. 2020)
// and, for MoE models, expert parallel (experts spread over ep of the data-parallel ranks, tokens
// exchanged by all-to-all) and context parallel (Megatron-Core / Transformer Engine: each
// sequence split over cp GPUs in 2·cp chunks, rank i holding chunks i and 2·cp-1-i so causal work
// balances; attention runs as a ring passing K and V, cp_comm_type "p2p"; weights replicated over
// cp, gradients reduced over the dp·cp ranks).
//
// Placement: a GPU's rank is built from its coordinates in the order `order` names, innermost
// first; the default "tp,dp,pp" puts a TP group on consecutive GPUs (one box, one NVLink domain),
// as Megatron-LM does. Rank r runs on the chassis' r-th GPU (topo::Chassis::gpus(): box by box).
// "dp,tp,pp" spreads a TP group across the data-parallel stride instead, e.g. across the socket
// link of a PCIe server. The cp ranks sit just outside tp, inside dp (Megatron-Core's order
// tp-cp-ep-dp-pp): the data coordinate of a placement counts dp·cp ranks, cp innermost.
//
//   auto plan = linkwise::work::parse_plan("tp=8,pp=2,dp=4,zero=1");
#pragma once

#include <string>
#include <vector>

#include "linkwise/work/job.h"
#include "linkwise/work/model.h"

namespace linkwise::topo {
class Chassis;
}

namespace linkwise::work {

struct Plan {
  int tp = 1, pp = 1, dp = 1;
  int cp = 1;      ///< context parallel size: the sequence split over cp GPUs (ring attention)
  int ep = 1;      ///< expert parallel size: divides dp and the expert count
  int zero = 0;    ///< 0 = replicated (DDP), 1 optimizer states, 2 + gradients, 3 + weights (FSDP)
  bool sp = true;  ///< sequence parallelism with tp > 1
  int vpp = 1;     ///< interleaved pipeline: model chunks per stage
  int micro_batch = 0;  ///< sequences per micro-batch; 0 = the job's
  /// ZeRO-3 shard group (HSDP, PyTorch's HYBRID_SHARD): states sharded over `shard` consecutive DP
  /// ranks, replicated across the dp/shard groups; 0 = shard over all of dp.
  int shard = 0;
  int shard_size() const { return shard > 0 ? shard : data_ranks(); }
  /// The ranks that hold the same weights and reduce their gradients together: dp·cp
  /// (Megatron-Core's data-parallel group with context parallelism).
  int data_ranks() const { return dp * cp; }
  std::string order = "tp,dp,pp";

  int gpus() const { return tp * pp * dp * cp; }
  /// "tp=8,pp=1,dp=1,zero=1" (only the parts that differ from the defaults after tp, pp, dp).
  std::string str() const;
};

/// Parses "tp=8,pp=2,dp=4,cp=2,zero=1,ep=2,vpp=2,sp=off,mb=2,order=dp,tp,pp" (any subset; missing
/// parts keep the defaults). Throws InputError for unknown keys and bad values.
Plan parse_plan(const std::string& text);

/// Why a plan cannot run, or "" when it can: TP not dividing the heads (or KV heads, FFN,
/// vocabulary), PP not dividing the layers (or vpp·pp), EP not dividing experts or dp, a plan
/// larger than `gpus_available`, a global batch not divisible by micro_batch·dp, a cp that does not
/// split the sequence into 2·cp equal chunks (or runs without fused attention, beside ep or HSDP,
/// or under a framework other than megatron).
std::string plan_problem(const Plan& plan, const Model& model, const Job& job, int gpus_available);

/// Micro-batches per pipeline per step: global_batch / (micro_batch · dp).
int micro_batches(const Plan& plan, const Job& job);

/// Where every rank of a plan runs: chassis node indices.
struct Placement {
  std::vector<int> gpus;  ///< node index of rank r
  /// dp counts the data ranks: the plan's dp·cp, cp innermost (data rank = dp rank·cp + cp rank).
  int tp = 1, pp = 1, dp = 1, ep = 1, cp = 1;
  std::vector<int> stride;  ///< rank stride of tp, dp and pp coordinates

  int rank(int tp_r, int dp_r, int pp_r) const {
    return tp_r * stride[0] + dp_r * stride[1] + pp_r * stride[2];
  }
  int node(int tp_r, int dp_r, int pp_r) const { return gpus[rank(tp_r, dp_r, pp_r)]; }
  /// Node indices of one group.
  std::vector<int> tp_group(int dp_r, int pp_r) const;
  std::vector<int> dp_group(int tp_r, int pp_r) const;
  std::vector<int> ep_group(int tp_r, int dp_block,
                            int pp_r) const;  ///< dp ranks [dp_block·ep, +ep)
  /// The context-parallel ring of data block `block` (data ranks [block·cp, +cp)).
  std::vector<int> cp_group(int tp_r, int block, int pp_r) const;
  int shard = 0;  ///< HSDP shard group size (0: all of dp)
  std::vector<int> shard_group(int tp_r, int block,
                               int pp_r) const;  ///< dp ranks [block·shard, +shard)
  std::vector<int> replica_group(int tp_r, int j, int pp_r) const;  ///< dp ranks j, j+shard, ...
};

/// Places a plan on the chassis' first plan.gpus() GPUs. Throws InputError when the chassis has
/// fewer.
Placement place(const Plan& plan, const topo::Chassis& chassis);

}  // namespace linkwise::work
