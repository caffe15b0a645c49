// The step's collectives, written once for both the closed-form estimate and the engine simulation.
#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "work/step_impl.h"

namespace linkwise::work {

using comm::Op;

StepTraffic step_traffic(const Model& m, const Job& job, const Plan& p, const Shape& sh,
                         const LayerCompute& lc) {
  StepTraffic t;
  const bool tp = p.tp > 1, sp = p.sp && tp, ep = p.ep > 1;
  const double a2a =
      sh.act_bytes * m.top_k / (sp ? p.tp : 1);  // tokens each GPU sends to its EP block
  auto coll = [](GroupKind g, Op op, double bytes, const char* kind) {
    PathItem it;
    it.coll = Coll{g, op, bytes, kind};
    return it;
  };
  const FrameworkTraits fw = framework_traits(job, p);
  // TP communication overlap (framework.h TpOverlapStyle). Userbuffers' pipelined and bulk
  // reduce-scatters run on 16 SMs the GEMM beside them gives up (TE initialize_ub defaults:
  // num_sm 16, set_sm_margin for every method but ring_exchange), so that GEMM takes N/(N-16) of
  // its time; ring exchange runs on the copy engines, and async TP's symmetric-memory P2P uses no
  // SMs.
  const bool overlap = fw.tp_overlap && sp;
  const bool async_tp = fw.tp_overlap_style == TpOverlapStyle::kAsyncTp;
  constexpr int kUbCommSms = 16, kUbPipelineSplits = 4;
  const double stretch =
      async_tp || lc.sms <= kUbCommSms ? 1.0 : lc.sms / static_cast<double>(lc.sms - kUbCommSms);
  const int splits = async_tp ? p.tp : kUbPipelineSplits;
  auto compute = [](std::vector<PathItem>& out, double seconds, const char* name) {
    if (seconds <= 0) return;
    PathItem c;
    c.compute_s = seconds, c.name = name;
    out.push_back(c);
  };
  auto beside = [](PathItem it, double seconds) {
    it.beside_s = std::max(0.0, seconds);
    return it;
  };
  // Half a layer: [all-gather] [all-to-all] compute [all-to-all] reduce-scatter (all-reduce without
  // SP). With TP overlap, `ag_gemm` is the GEMM the all-gather feeds and `rs_gemm` the one the
  // reduce-scatter's input comes from (or, `bulk`, the wgrad GEMM beside it), seconds:
  //   all-gather by ring exchange in tp chunks: the local chunk's GEMM first, the other (tp-1)/tp
  //     of the GEMM beside the exchange: g/tp + max((tp-1)/tp·g, a);
  //   reduce-scatter pipelined in n chunks: chunk i's reduce-scatter after chunk i's GEMM:
  //     g/n + max((n-1)/n·g, (n-1)/n·a) + a/n;
  //   bulk: the reduce-scatter beside the whole wgrad GEMM: max(g, a).
  // Context parallelism (Megatron-Core with Transformer Engine, cp_comm_type "p2p", the default):
  // the attention core runs as cp steps on the cp ranks' ring; at step i each GPU computes with the
  // K,V it holds while it sends them to the next rank and receives the previous rank's (cp - 1
  // transfers, TE's AttnFuncWithCPAndKVP2P). A step's transfer runs beside its block of attention
  // (core/cp: balanced chunks give every step the same work); what the transfer outlasts is
  // exposed. The backward passes K,V and their gradients dK,dV around the ring: twice the bytes.
  const double ring_kv = cp_ring_bytes(m, job, p);
  // Half a layer: [all-gather] [all-to-all] compute [all-to-all] reduce-scatter (all-reduce without
  // SP); attention halves with cp > 1 also run the ring's cp - 1 transfers, each beside core/cp of
  // the attention compute (`core` seconds of core, `ring` bytes per transfer).
  // --tp-collectives per-projection: a half whose column-parallel projections share one input
  // gathers it once per projection (forward: q, k, v or gate, up) and reduce-scatters one input
  // gradient per projection (backward); `gathers`, `scatters` count them.
  auto half = [&](std::vector<PathItem>& out, double seconds, const char* name, bool mlp,
                  double ag_gemm, double rs_gemm, bool bulk, double core = 0, double ring = 0,
                  int gathers = 1, int scatters = 1) {
    const bool ov = overlap && !(mlp && ep);
    double rest = seconds;
    auto ring_steps = [&]() {
      if (p.cp <= 1 || ring <= 0) return;
      for (int i = 1; i < p.cp; ++i)
        out.push_back(beside(coll(GroupKind::kCp, Op::kSendRecv, ring, "cp"), core / p.cp));
      rest -= core * (p.cp - 1) / p.cp;
    };
    if (sp) {
      PathItem ag = coll(GroupKind::kTp, Op::kAllGather, sh.act_bytes, "tp");
      if (ov && ag_gemm > 0) {
        const double hidden = ag_gemm * (p.tp - 1) / p.tp;
        out.push_back(beside(ag, hidden));
        rest -= hidden;
      } else {
        out.push_back(ag);
      }
      for (int i = 1; i < gathers; ++i) out.push_back(ag);
    }
    ring_steps();
    if (mlp && ep) out.push_back(coll(GroupKind::kEp, Op::kAllToAll, a2a, "ep"));
    if (ov && rs_gemm > 0) {
      PathItem rs = coll(GroupKind::kTp, Op::kReduceScatter, sh.act_bytes, "tp");
      if (bulk) {
        compute(out, rest - rs_gemm, name);
        out.push_back(beside(rs, rs_gemm * stretch));
      } else {
        const double n = splits;
        compute(out, rest - rs_gemm + rs_gemm / n * stretch, name);
        PathItem first = rs, last = rs;
        first.coll.bytes = sh.act_bytes * (n - 1) / n;
        last.coll.bytes = sh.act_bytes / n;
        out.push_back(beside(first, rs_gemm * (n - 1) / n * stretch));
        out.push_back(last);
      }
      return;
    }
    compute(out, rest, name);
    if (mlp && ep) out.push_back(coll(GroupKind::kEp, Op::kAllToAll, a2a, "ep"));
    if (tp)
      for (int i = 0; i < (sp ? scatters : 1); ++i)
        out.push_back(
            coll(GroupKind::kTp, sp ? Op::kReduceScatter : Op::kAllReduce, sh.act_bytes, "tp"));
  };
  // Projections sharing a half's input: q, k, v (separate in the Llama-style layers the
  // per-projection plans shard) and gate, up (one up projection without gating).
  const bool per_projection = sp && fw.tp_per_projection && !overlap;
  const int qkv_n = per_projection ? 3 : 1;
  const int up_n = per_projection && m.gated_ffn ? 2 : 1;
  // Forward: the all-gathers feed QKV and the MLP's up GEMM; the reduce-scatters take the output
  // projection's and the down GEMM's output. Backward: the all-gathers feed the proj and down dgrad
  // GEMMs; the reduce-scatters take QKV's and up's dgrad output, beside their wgrad GEMMs
  // (userbuffers' bulk; LoRA's frozen weights have none, so nothing hides them) or pipelined with
  // the dgrad GEMM itself (async TP).
  // Async TP fuses a reduce-scatter only into the one matmul that produces its input (inductor's
  // fuse_matmul_reduce_scatter: _find_producer_matmul takes an mm, or an mm between reshapes):
  // not where a LoRA adapter's output is added to the matmul's, nor in the backward of separate
  // q, k, v (or gate and up) projections (Llama-style layers), whose input gradients are summed
  // before the reduce-scatter. The all-gathers feed matmuls either way and stay fused.
  const bool lora_b = job.mode == Mode::kLora;
  auto adapted = [&](std::initializer_list<const char*> names) {
    if (!lora_b) return false;
    for (const char* n : names)
      if (std::find(job.lora.targets.begin(), job.lora.targets.end(), n) != job.lora.targets.end())
        return true;
    return false;
  };
  auto rs_fwd = [&](double g, std::initializer_list<const char*> names) {
    return async_tp && adapted(names) ? 0.0 : g;
  };
  auto rs_back = [&](double g, std::initializer_list<const char*> names) {
    if (async_tp) return m.gated_ffn || adapted(names) ? 0.0 : g;
    return lora_b ? 0.0 : g;  // userbuffers' bulk overlap hides it behind the wgrad GEMM
  };
  const double rs_o = rs_fwd(lc.gemm_proj, {"o"}), rs_down = rs_fwd(lc.gemm_down, {"down"});
  half(t.forward, lc.attn_f, "attention forward", false, lc.gemm_qkv, rs_o, false, lc.core_f,
       ring_kv, qkv_n);
  half(t.forward, lc.mlp_f, "mlp forward", true, lc.gemm_up, rs_down, false, 0, 0, up_n);
  double attn_b = lc.attn_b, mlp_b = lc.mlp_b;
  if (job.recompute == Recompute::kOp && tp) {
    // torchtitan's per-op policy saves the reduce-scatters' outputs, not the all-gathers' (nor an
    // all-reduce's without SP): the recomputed GEMMs gather their input again.
    for (int i = 0; i < qkv_n + up_n; ++i)
      t.backward.push_back(
          coll(GroupKind::kTp, sp ? Op::kAllGather : Op::kAllReduce, sh.act_bytes, "tp"));
  }
  if (job.recompute == Recompute::kFull) {  // the recomputed forward repeats its collectives
    half(t.backward, lc.attn_f, "recompute", false, lc.gemm_qkv, rs_o, false, lc.core_f, ring_kv,
         qkv_n);
    half(t.backward, lc.mlp_f, "recompute", true, lc.gemm_up, rs_down, false, 0, 0, up_n);
    attn_b -= lc.attn_f, mlp_b -= lc.mlp_f;
  }
  half(t.backward, mlp_b, "mlp backward", true, lc.gemm_down, rs_back(lc.gemm_up, {"up"}),
       !async_tp, 0, 0, 1, up_n);
  half(t.backward, attn_b, "attention backward", false, lc.gemm_proj,
       rs_back(lc.gemm_qkv, {"q", "k", "v"}), !async_tp, lc.core_b,
       // selective recomputation runs the core's forward ring again before its backward ring
       (job.recompute == Recompute::kSelective ? 3 : 2) * ring_kv, 1, qkv_n);

  const bool lora = job.mode == Mode::kLora;
  const double G = sh.layer_trainable;  // one layer's gradients on this GPU
  // Gradient reduce-scatters of one layer: one per unit, or per reduce bucket (DeepSpeed), beside
  // the backward where the framework overlaps them, else after it. HSDP: gathers and scatters
  // within the shard group, then the shard's gradients all-reduced across the replicas (PyTorch
  // FSDP HYBRID_SHARD).
  const bool hsdp = p.zero >= 3 && p.shard > 0 && p.shard < p.dp;
  // Gradients and ZeRO shards span the data ranks: dp·cp (the cp ranks hold the same weights).
  const int D = p.data_ranks();
  const GroupKind shard_kind = hsdp ? GroupKind::kShard : GroupKind::kDp;
  // Host time to issue one collective of the shard group (DeepSpeed 0.3: per call and per rank).
  const double call_s = fw.zero3_call_s + fw.zero3_call_per_rank_s * (hsdp ? p.shard : D);
  // LoRA: only the adapters have gradients; the frozen weights are gathered but never reduced.
  // FSDP2 reduce-scatters the gradients of its unit that the backward produced (foreach_reduce over
  // the parameters whose .grad is set): the layer's adapters in one collective. FSDP1 under LoRA
  // makes each adapter matrix a unit of its own (FrameworkTraits::lora_adapter_units): one gather
  // and one reduce-scatter per matrix, the frozen block's unit gathered only. DeepSpeed 0.3 reduces
  // one parameter at a time, so each adapter's A and B; bucketed DeepSpeed fills its bucket across
  // layers (below).
  const bool per_tensor = (fw.zero3_reduce_per_parameter && p.zero >= 3) || fw.lora_adapter_units;
  const bool lora_bucketed = lora && fw.zero3_reduce_bucket_params > 0 && !per_tensor;
  auto layer_scatter = [&](const char* kind) {
    if (lora_bucketed) return;
    int n = 1;
    if (fw.zero3_reduce_bucket_params > 0)
      n = std::max(1, static_cast<int>(std::lround(G / fw.zero3_reduce_bucket_params)));
    auto& to = fw.grad_overlap && !fw.zero3_blocking ? t.beside_b : t.after_b;
    if (per_tensor) {  // one collective per parameter tensor (or adapter unit)
      for (double e : lora ? lora_parameter_tensors(m, job.lora, p) : layer_parameter_tensors(m, p))
        to.push_back({shard_kind, Op::kReduceScatter, fw.grad_bytes * e, kind, call_s});
      n = 0;
    }
    for (int i = 0; i < n; ++i)
      to.push_back({shard_kind, Op::kReduceScatter, fw.grad_bytes * G / n, kind, call_s});
    if (hsdp)
      to.push_back({GroupKind::kReplica, Op::kAllReduce, fw.grad_bytes * G / p.shard, kind});
  };
  if (D > 1 && (p.zero >= 3 || fw.gather_every_micro_batch)) {  // weights gathered unit by unit
    auto gather = [&](double u) {
      Coll ag{shard_kind, Op::kAllGather, block_gather_bytes(job) * u, "zero", call_s};
      (fw.zero3_blocking ? t.after_f : t.beside_f).push_back(ag);
      auto& back = fw.zero3_blocking ? t.after_b : t.beside_b;
      if (p.zero >= 3)
        back.push_back(ag);  // gathered again for the backward (resharded after forward)
      if (p.zero >= 3 && fw.zero3_regather_for_recompute && job.recompute == Recompute::kFull)
        back.push_back(ag);  // and for the recomputed forward before it
    };
    for (double u : zero3_units(m, p, fw.per_module_gather)) gather(u);
    if (fw.lora_adapter_units)  // each adapter matrix's unit, nested in the block's
      for (double e : lora_parameter_tensors(m, job.lora, p)) gather(e);
  }
  if (lora_bucketed && D > 1 && (p.zero >= 3 || fw.reduce_every_micro_batch)) {
    // DeepSpeed appends each gradient to its reduce bucket (reduce_bucket_size elements), reduces
    // a bucket when it is full and the rest at the end of the backward
    // (independent_gradient_partition_epilogue, stage3.py and stage_1_and_2.py). A stage's
    // adapters (0.5M elements a layer for Llama 2 7B q,k,v,o rank 16) seldom fill one: the
    // reduce-scatter comes once per micro-batch after the last layer's backward, nothing beside.
    const double all = G * sh.layers_per_stage;
    const int n = std::max(1, static_cast<int>(std::ceil(all / fw.zero3_reduce_bucket_params)));
    for (int i = 0; i < n; ++i)
      t.fill_b.push_back({shard_kind, Op::kReduceScatter, fw.grad_bytes * all / n,
                          p.zero >= 3 ? "zero" : "dp", call_s});
    if (hsdp)
      t.fill_b.push_back(
          {GroupKind::kReplica, Op::kAllReduce, fw.grad_bytes * all / p.shard, "zero"});
  }
  // The root unit (embedding, final norm, untied output layer), vocabulary-parallel over TP.
  const double outside = m.embedding_params() / p.tp;
  // Gradients reduced at the last micro-batch only (FSDP no_sync, FSDP2
  // set_requires_gradient_sync(False) on the others; --grad-sync last): the other micro-batches run
  // no reduce-scatter, and the last one's, unit by unit beside its backward, are the step's
  // gradient buckets (as DDP's), the root unit's gradients (embedding, final norm, output layer) in
  // them. HSDP and LoRA's bucketed or per-tensor reductions keep their own paths.
  const bool sync_last = fw.zero3_sync_last && sh.m > 1 && !hsdp && !lora_bucketed && !per_tensor &&
                         !fw.zero3_blocking;
  if (D > 1 && sync_last) {
    const int units = std::max(1, sh.layers_per_stage);
    t.buckets = units;
    t.bucket = {shard_kind, Op::kReduceScatter, fw.grad_bytes * (G + (lora ? 0 : outside) / units),
                "zero", call_s};
    t.bucket_overlap = fw.grad_overlap;
  }
  if (D > 1 && p.zero >= 3) {
    if (!sync_last) layer_scatter("zero");
    if (p.pp == 1 && !fw.zero3_blocking) {
      // Every micro-batch starts with gathers that nothing hides and ends with scatters that
      // nothing hides: FSDP reshards the root unit (embedding, final norm, untied output layer)
      // in the backward and gathers it again before the next forward, whose first block then
      // waits for its own gather (queued behind the root's on the one NCCL stream); after the
      // last block's backward its reduce-scatter and the root's follow with no block left to
      // overlap (torch/distributed/fsdp: the root's pre-forward unshard, _post_backward_hook).
      // The periods count each layer's collectives beside that layer's compute, so the first
      // gather and the last scatter are the ones left over.
      const auto units = zero3_units(m, p, fw.per_module_gather);
      t.fill_f.push_back({shard_kind, Op::kAllGather, 2 * outside, "zero", call_s});
      t.fill_f.push_back(
          {shard_kind, Op::kAllGather, block_gather_bytes(job) * units.front(), "zero", call_s});
      auto& scatters = fw.grad_overlap ? t.beside_b : t.after_b;
      for (const Coll& c : scatters)
        if (c.op == Op::kReduceScatter) {
          t.fill_b.push_back(c);
          break;
        }
      // LoRA leaves the embedding and output layer frozen: nothing outside to reduce (and under
      // --grad-sync last the root's gradients go with the buckets).
      if (!lora && !sync_last)
        t.fill_b.push_back(
            {shard_kind, Op::kReduceScatter, fw.grad_bytes * outside, "zero", call_s});
    }
    if (fw.persistence_threshold > 0) {  // persistent parameters gathered after the optimizer
      double n = 0, elements = 0;
      for (double e : layer_parameter_tensors(m, p))
        if (e < fw.persistence_threshold) n += 1, elements += e;
      n *= sh.layers_per_stage, elements *= sh.layers_per_stage;
      const int ranks = hsdp ? p.shard : D;
      if (n > 0)
        t.param_gather = {shard_kind, Op::kAllGather, 2 * elements, "zero",
                          call_s + n * ranks * fw.zero3_call_per_rank_s};
    }
  } else if (D > 1 &&
             fw.reduce_every_micro_batch) {  // ZeRO-2 reducing each micro-batch's gradients
    layer_scatter("dp");
    if (!fw.gather_every_micro_batch)
      t.param_gather = {GroupKind::kDp, Op::kAllGather, 2 * G * sh.layers_per_stage, "zero"};
  }
  if (p.pp >
      1) {  // every TP rank sends its shard; without SP the next stage gathers the whole sequence
    t.boundary.push_back({GroupKind::kStagePair, Op::kSendRecv, sh.act_bytes / p.tp, "pp"});
    if (!sp && tp) t.boundary.push_back({GroupKind::kTp, Op::kAllGather, sh.act_bytes, "pp"});
  }
  if (D > 1 && p.zero < 3 &&
      !fw.reduce_every_micro_batch) {  // gradient buckets at the last micro-batch
    double all = G * sh.layers_per_stage;
    t.buckets =
        fw.bucket_params > 0 ? std::max(1, static_cast<int>(std::ceil(all / fw.bucket_params))) : 1;
    t.bucket = {GroupKind::kDp, p.zero == 0 ? Op::kAllReduce : Op::kReduceScatter,
                fw.grad_bytes * all / t.buckets, "dp"};
    t.bucket_overlap = fw.grad_overlap;
    if (p.zero >= 1) t.param_gather = {GroupKind::kDp, Op::kAllGather, 2 * all, "zero"};
  }
  return t;
}

}  // namespace linkwise::work
