#include "linkwise/work/hf_stack.h"

#include <algorithm>

#include "linkwise/work/memory.h"

namespace linkwise::work {

namespace {

// A norm's kernels per element and the bytes per element of its output: the eager RMSNorm
// (LlamaRMSNorm / Qwen3RMSNorm: eager_rms_norm, eight or six element-wise kernels) or
// torch.nn.LayerNorm (one kernel; autocast runs it in fp32: read in, write 4).
struct Norm {
  EagerOps ops;  ///< per element
  double out = 0;
};
Norm rms_norm(double in, double w) { return {eager_rms_norm(in, w), eager_rms_norm_out(in, w)}; }
Norm layer_norm(double in) {
  Norm n;
  n.ops.add(EagerKernel::kLayerNorm, in + 4);
  n.out = 4;
  return n;
}

// Autocast's cast of an fp32 tensor to bf16 for a lower-precision operation: read 4, write 2.
constexpr double kCastBytes = 6;
constexpr EagerKernel kEw = EagerKernel::kElementwise;

void add_host(EagerWork& w, double kernels, double python_ops) {
  w.kernels += kernels;
  w.host_s += python_ops * kHfPythonOp_s + (kernels - python_ops) * kHfCppKernel_s;
}
// `kernels` kernels of kind `k` moving `bytes`, `python_ops` of them issued from Python.
void add(EagerWork& w, EagerKernel k, double bytes, double kernels, double python_ops) {
  w.bytes += bytes;
  w.peak_bytes += bytes / eager_kernel_share(k);
  add_host(w, kernels, python_ops);
}
// A norm over `elems` elements, `count` times (its kernels each issued from Python or not).
void add(EagerWork& w, const Norm& n, double elems, double count, bool python) {
  w.bytes += count * n.ops.bytes * elems;
  w.peak_bytes += count * n.ops.peak_bytes * elems;
  add_host(w, count * n.ops.kernels, python ? count * n.ops.kernels : 0);
}

}  // namespace

double hf_rms_norm_bytes(double in_bytes, double weight_bytes) {
  return eager_rms_norm(in_bytes, weight_bytes).bytes;
}

bool hf_fp32_weights(const Job& job) { return job.mode != Mode::kLora; }

HfLayerWork hf_layer_work(const Model& m, const Job& job, const Plan& p) {
  HfLayerWork r;
  const int mb = p.micro_batch > 0 ? p.micro_batch : job.micro_batch;
  const double S = static_cast<double>(job.seq) * mb, t = p.tp;
  const double h = m.hidden, d = m.head_dim > 0 ? m.head_dim : h / m.heads;
  const double q = m.heads * d / t, kv = std::max(m.kv_heads * d / t, d), f = m.ffn / t;
  const bool fp32 = hf_fp32_weights(job);
  const double R = fp32 ? 4 : 2;  // residual stream: fp32 embedding output plus bf16 branches
  const double W = fp32 ? 4 : 2;  // parameters, norm weights included
  EagerWork& fw = r.forward;
  const bool llama = m.gated_ffn;  // RMSNorm, rotary embedding, SwiGLU (Llama and Qwen families)
  const Norm norm = llama ? rms_norm(R, W) : layer_norm(R);
  const int in_linears = llama ? 3 : 1;  // q, k, v (GPT-style: one fused projection)
  const int up_linears = llama ? 2 : 1;
  double gemms = 0;

  // Attention block. Input norm; q, k and v projections, each casting the fp32 norm output to
  // bf16 again; per-head q and k norms (Qwen3); rotary embedding; SDPA, which casts fp32 q and k;
  // the output's transpose(1, 2).contiguous(); o_proj; the residual add (read R and 2, write R).
  add(fw, norm, S * h, 1, true);
  gemms += in_linears;
  add(fw, kEw, 0, in_linears, in_linears);
  if (norm.out == 4) add(fw, kEw, in_linears * kCastBytes * S * h, in_linears, 0);
  double e = 2;  // q and k leave their projections in bf16
  if (m.qk_norm) {
    Norm qk = rms_norm(2, W);
    add(fw, qk, S * (q + kv), 1, true);
    add_host(fw, qk.ops.kernels, qk.ops.kernels);  // q_norm and k_norm: two norms' kernels
    e = qk.out;
  }
  if (llama) {
    // q·cos + rotate_half(q)·sin for q and k; cos and sin come in the hidden states' dtype (R), so
    // products promote to O = max(e, R): mul (e + O), neg of one half (e), cat (2e), mul (e + O),
    // add (3·O): 5e + 5·O per element, five kernels per tensor.
    const double o = std::max(e, R);
    add(fw, kEw, (5 * e + 5 * o) * S * (q + kv), 10, 10);
    e = o;
  }
  if (e == 4) add(fw, kEw, kCastBytes * S * (q + kv), 2, 0);  // SDPA under autocast casts q, k
  gemms += 1;                                                 // the attention kernel
  add(fw, kEw, 0, 1, 1);
  add(fw, kEw, 4 * S * q, 1, 1);  // attn_output.transpose(1, 2).contiguous()
  gemms += 1;                     // o_proj
  add(fw, kEw, 0, 1, 1);
  add(fw, kEw, (2 * R + 2) * S * h, 1, 1);

  // MLP block: norm; gate and up projections (each casting the norm output); act_fn(gate) (read
  // 2, write 2) times up (read 4, write 2); down_proj; the residual add. GPT-style: GeLU (4).
  add(fw, norm, S * h, 1, true);
  gemms += up_linears + 1;
  add(fw, kEw, 0, up_linears + 1, up_linears + 1);
  if (norm.out == 4) add(fw, kEw, up_linears * kCastBytes * S * h, up_linears, 0);
  if (llama) {  // gate and up are separate tensors: not the measured sliced SwiGLU
    const EagerOps act = eager_swiglu();
    fw.bytes += act.bytes * S * f, fw.peak_bytes += act.peak_bytes * S * f;
    add_host(fw, act.kernels, act.kernels);
  } else {
    add(fw, EagerKernel::kActivation, 4 * S * f, 1, 1);
  }
  add(fw, kEw, (2 * R + 2) * S * h, 1, 1);

  // Backward of the element-wise work: about two kernels and twice the bytes per forward kernel
  // (tools/autograd/derivatives.yaml: mul's gradient is a product per input, pow's is
  // exponent·x^(e-1)·grad, rsqrt's -0.5·grad·y³, a cast's the cast back, and gradients of tensors
  // used twice are summed), each of its forward kernel's kind (silu_backward is an activation's).
  // GEMM kernels are not element-wise and are counted apart.
  EagerWork& bw = r.backward;
  const double ew_kernels = fw.kernels - gemms;
  bw.bytes += 2 * fw.bytes, bw.peak_bytes += 2 * fw.peak_bytes;
  add_host(bw, 2 * ew_kernels, 0);

  // Autocast's weight casts: each fp32 matrix cast to bf16 once per forward (read 4, write 2 per
  // parameter), its bf16 gradient cast back to fp32 in the backward (ToCopyBackward: read 2, write
  // 4). LoRA's bf16 base has none.
  const double matrices = (m.gated_ffn ? 7 : 4);
  const double weights = m.attention_params() / t + m.expert_params() / t;
  if (fp32) {
    add(fw, kEw, kCastBytes * weights, matrices, 0);
    add(bw, kEw, kCastBytes * weights, matrices, 0);
  }

  // GEMM backward kernels: input and weight gradient per matrix (input gradient only for LoRA's
  // frozen base); FlashAttention-2's backward: a preprocessing kernel (dO·O), the main kernel and
  // the dQ conversion.
  const bool lora = job.mode == Mode::kLora;
  r.gemm_kernels_f = gemms;
  r.gemm_kernels_b = (lora ? 1 : 2) * (gemms - 1) + 3;
  add(bw, kEw, 0, r.gemm_kernels_b, 0);

  if (lora) {
    // PEFT adapters per target (in features i, out features o on this GPU): lora_A reads the
    // target's input (2·i), lora_B writes its output (2·o), the scaling multiply (4·o) and the add
    // to the base output (6·o): 2i + 12o per token, four operations and two weight casts. Backward:
    // the multiply's gradient (4·o), lora_B's input and weight gradients each read the output
    // gradient (4·o), lora_A's input gradient (2·i) summed into x's gradient (6·i) and its weight
    // gradient reads x (2·i): 8o + 10i, eight kernels with the fp32 casts of the two weight
    // gradients.
    for (const auto& target : job.lora.targets) {
      double i = h, o = h;
      if (target == "q") o = q;
      if (target == "k" || target == "v") o = kv;
      if (target == "o") i = q;
      if (target == "gate" || target == "up") o = f;
      if (target == "down") i = f;
      add(fw, kEw, (2 * i + 12 * o) * S, 6, 4);
      add(bw, kEw, (8 * o + 10 * i) * S, 8, 0);
    }
  }
  return r;
}

EagerOps eager_cross_entropy_forward() {
  EagerOps ce;
  ce.add(kEw, 6);                                          // logits.float()
  ce.add(EagerKernel::kSoftmax, kHfLossForwardBytes - 6);  // log_softmax
  ce.add(kEw, 0, 2);                                       // nll_loss, the division
  return ce;
}

HfHeadWork hf_head_work(const Model& m, const Job& job, const Plan& p) {
  HfHeadWork r;
  const int mb = p.micro_batch > 0 ? p.micro_batch : job.micro_batch;
  const double S = static_cast<double>(job.seq) * mb, h = m.hidden;
  const double V = static_cast<double>(m.vocab) / p.tp;
  const bool fp32 = hf_fp32_weights(job), lora = job.mode == Mode::kLora;
  const double R = fp32 ? 4 : 2, W = fp32 ? 4 : 2;
  const Norm norm = m.gated_ffn ? rms_norm(R, W) : layer_norm(R);
  EagerWork& fw = r.forward;
  EagerWork& bw = r.backward;
  // Embedding lookup (read and write one row per token), final norm, lm_head (casting its input
  // and, for fp32 weights, the V x h matrix), then ForCausalLMLoss: logits.float(), cross_entropy
  // (log_softmax, nll_loss) and the division by the token count.
  add(fw, kEw, 2 * R * S * h, 1, 1);
  add(fw, norm, S * h, 1, true);
  add(fw, kEw, 0, 1, 1);  // lm_head GEMM
  if (norm.out == 4) add(fw, kEw, kCastBytes * S * h, 1, 0);
  if (fp32) add(fw, kEw, kCastBytes * V * h, 1, 0);
  // logits.float() (6), log_softmax's passes (16, a softmax kernel), nll_loss and the division.
  const EagerOps ce = eager_cross_entropy_forward();
  fw.bytes += ce.bytes * S * V, fw.peak_bytes += ce.peak_bytes * S * V;
  add_host(fw, ce.kernels, ce.kernels);
  // Backward: the loss's fp32 passes and cast, the lm_head input and weight gradients (kernels
  // only), the norm's element-wise backward, and for trained embeddings the weight gradient cast
  // to fp32 (6·V·h), the embedding's zero-filled fp32 gradient (4·V·h) with the tokens' rows
  // added (read the gradient, read and write the rows: 12·S·h) and, when tied, the sum of the two
  // (read 4 twice, write 4: 12·V·h).
  // nll_loss's zero-filled gradient (4) and the cast back (6) element-wise, log_softmax's
  // backward (16) a softmax kernel.
  add(bw, kEw, (kHfLossBackwardBytes - 16) * S * V, 3, 0);
  add(bw, EagerKernel::kSoftmax, 16 * S * V, 1, 0);
  add(bw, norm, S * h, 2, false);
  add(bw, kEw, 0, lora ? 1 : 2, 0);
  if (!lora) {
    double table = kCastBytes * V * h + 4 * V * h + 12 * S * h;
    if (m.tied_embeddings) table += 12 * V * h;
    add(bw, kEw, table, 4, 0);
  }
  return r;
}

double hf_layer_activation_bytes(const Model& m, const Job& job, const Plan& p) {
  const int mb = p.micro_batch > 0 ? p.micro_batch : job.micro_batch;
  const double S = static_cast<double>(job.seq) * mb, t = p.tp;
  const double h = m.hidden, d = m.head_dim > 0 ? m.head_dim : h / m.heads;
  const double q = m.heads * d / t, kv = std::max(m.kv_heads * d / t, d), f = m.ffn / t;
  const bool fp32 = hf_fp32_weights(job), lora = job.mode == Mode::kLora;
  const double R = fp32 ? 4 : 2;
  if (job.recompute == Recompute::kFull) {
    // The checkpointed blocks keep their input (one block in recompute_every of them; the others
    // everything), and the block being recomputed its whole set, spread over the stage's blocks.
    Job all = job;
    all.recompute = Recompute::kNone, all.recompute_every = 1;
    const double whole = hf_layer_activation_bytes(m, all, p);
    const double w = 1.0 / std::max(1, job.recompute_every);
    return w * R * S * h + (1 - w) * whole + whole / std::max(1, m.layers / p.pp);
  }
  const bool llama = m.gated_ffn;
  const double norm = R == 4 ? 8 : 6;                         // per element of h, each norm
  const double casts = lora || R != 4 ? 0 : (llama ? 5 : 2);  // linears casting an fp32 input
  double per_token = 2 * norm * h + casts * 2 * h;
  if (m.qk_norm) per_token += (4 + (lora ? 0 : 2)) * (q + kv);
  per_token += 4 * q + 4 * kv + 2 * q;
  per_token += (llama ? 8 : 4) * f;
  return per_token * S;
}

MemoryBreakdown hf_memory(const Model& m, const Job& job, const Plan& p,
                          const MemoryBreakdown& generic) {
  MemoryBreakdown r = generic;
  const int mb = p.micro_batch > 0 ? p.micro_batch : job.micro_batch;
  const double S = static_cast<double>(job.seq) * mb;
  if (job.mode != Mode::kLora) {  // generic: 2 + 2 + 12 bytes per parameter
    r.weights = generic.weights / 2 * (4 + 2);
    // fp32 gradients; those held unsharded (--grad-sync last) are counted in fp32 already.
    r.gradients = (generic.gradients - generic.gradients_held) / 2 * 4 + generic.gradients_held;
    r.optimizer = generic.optimizer / 12 * 8;
  }
  const double layers = static_cast<double>(m.layers) / p.pp;
  const double in_flight = std::min(std::max(1, micro_batches(p, job)), p.pp);
  r.activations = hf_layer_activation_bytes(m, job, p) * layers * in_flight +
                  12 * S * static_cast<double>(m.vocab) / p.tp;
  const bool accumulate = micro_batches(p, job) > 1;
  r.total = r.weights + r.optimizer + r.lora + r.buffers +
            (accumulate ? r.activations + r.gradients : std::max(r.activations, r.gradients));
  r.fits = r.total <= r.capacity;
  return r;
}

void hf_eager_layer(LayerCompute& c, const Model& m, const Job& job, const Plan& p,
                    double hbm_bytes_per_s, double kernel_s) {
  if (hbm_bytes_per_s <= 0) return;
  const HfLayerWork w = hf_layer_work(m, job, p);
  // Element-wise kernels' GPU time: each kernel's bytes at its kind's share of the peak
  // (eager_kernel_share: peak_bytes at the peak) plus the per-kernel launch and tail the GEMM and
  // memory times carry (the GEMM kernels already carry theirs).
  auto gpu_s = [&](const EagerWork& e, double gemm_kernels) {
    return e.peak_bytes / hbm_bytes_per_s + (e.kernels - gemm_kernels) * kernel_s;
  };
  const double ef = gpu_s(w.forward, w.gemm_kernels_f), eb = gpu_s(w.backward, w.gemm_kernels_b);
  // Split between the attention and MLP parts as the layer's compute is split.
  const double af = c.forward() > 0 ? c.attn_f / c.forward() : 0.5;
  const double ab = c.backward() > 0 ? c.attn_b / c.backward() : 0.5;
  c.attn_f += af * ef, c.mlp_f += (1 - af) * ef, c.mem_f += ef;
  c.attn_b += ab * eb, c.mlp_b += (1 - ab) * eb, c.mem_b += eb;
  // The host bound: what the GPU waits for the host is idle time, kept in the attention part.
  c.attn_f += std::max(0.0, w.forward.host_s - c.forward());
  c.attn_b += std::max(0.0, w.backward.host_s - c.backward());
}

double hf_eager_head(double gemm_s, const Model& m, const Job& job, const Plan& p,
                     double hbm_bytes_per_s, double kernel_s) {
  if (hbm_bytes_per_s <= 0) return gemm_s;
  const HfHeadWork w = hf_head_work(m, job, p);
  const double gemm_kernels = job.mode == Mode::kLora ? 2 : 3;
  const double kernels = w.forward.kernels + w.backward.kernels - gemm_kernels;
  const double gpu = gemm_s + (w.forward.peak_bytes + w.backward.peak_bytes) / hbm_bytes_per_s +
                     std::max(0.0, kernels) * kernel_s;
  return std::max(gpu, w.forward.host_s + w.backward.host_s);
}

}  // namespace linkwise::work
