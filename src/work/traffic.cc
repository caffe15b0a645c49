// The step's collectives, written once for both the closed-form estimate and the engine simulation.
#include "work/step_impl.h"

namespace linkwise::work {

using comm::Op;

StepTraffic step_traffic(const Model& m, const Job& job, const Plan& p, const Shape& sh, const LayerCompute& lc) {
  StepTraffic t;
  const bool tp = p.tp > 1, sp = p.sp && tp, ep = p.ep > 1;
  const double a2a = sh.act_bytes * m.top_k / (sp ? p.tp : 1);  // tokens each GPU sends to its EP block
  auto coll = [](GroupKind g, Op op, double bytes, const char* kind) {
    PathItem it;
    it.coll = Coll{g, op, bytes, kind};
    return it;
  };
  // Half a layer: [all-gather] [all-to-all] compute [all-to-all] reduce-scatter (all-reduce without SP).
  auto half = [&](std::vector<PathItem>& out, double seconds, const char* name, bool mlp) {
    if (sp) out.push_back(coll(GroupKind::kTp, Op::kAllGather, sh.act_bytes, "tp"));
    if (mlp && ep) out.push_back(coll(GroupKind::kEp, Op::kAllToAll, a2a, "ep"));
    if (seconds > 0) {
      PathItem c;
      c.compute_s = seconds, c.name = name;
      out.push_back(c);
    }
    if (mlp && ep) out.push_back(coll(GroupKind::kEp, Op::kAllToAll, a2a, "ep"));
    if (tp) out.push_back(coll(GroupKind::kTp, sp ? Op::kReduceScatter : Op::kAllReduce, sh.act_bytes, "tp"));
  };
  half(t.forward, lc.attn_f, "attention forward", false);
  half(t.forward, lc.mlp_f, "mlp forward", true);
  if (job.recompute == Recompute::kFull) {  // the recomputed forward repeats its collectives
    half(t.backward, 0, "recompute", false);
    half(t.backward, 0, "recompute", true);
  }
  half(t.backward, lc.mlp_b, "mlp backward", true);
  half(t.backward, lc.attn_b, "attention backward", false);

  if (p.zero >= 3 && p.dp > 1) {  // weights gathered beside forward and backward, gradients scattered
    Coll ag{GroupKind::kDp, Op::kAllGather, 2 * sh.layer_weights, "zero"};
    t.beside_f.push_back(ag);
    t.beside_b.push_back(ag);
    if (job.mode != Mode::kLora) t.beside_b.push_back({GroupKind::kDp, Op::kReduceScatter, 2 * sh.layer_trainable, "zero"});
  }
  if (p.pp > 1) {  // every TP rank sends its shard; without SP the next stage gathers the whole sequence
    t.boundary.push_back({GroupKind::kStagePair, Op::kSendRecv, sh.act_bytes / p.tp, "pp"});
    if (!sp && tp) t.boundary.push_back({GroupKind::kTp, Op::kAllGather, sh.act_bytes, "pp"});
  }
  if (p.dp > 1 && p.zero < 3) {  // one layer's gradients per bucket, as each layer's backward ends
    t.bucket = {GroupKind::kDp, p.zero == 0 ? Op::kAllReduce : Op::kReduceScatter, 2 * sh.layer_trainable, "dp"};
    t.buckets = sh.layers_per_stage;
    if (p.zero >= 1)
      t.param_gather = {GroupKind::kDp, Op::kAllGather, 2 * sh.layer_trainable * sh.layers_per_stage, "zero"};
  }
  return t;
}

}  // namespace linkwise::work
