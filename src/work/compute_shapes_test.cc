// The compute model held against one H200 SXM's measured kernels
// (data/measured/h200-compute-shapes-2026-12-01/compute-shapes.json, taken with
// scripts/gpu-compute-shapes.py): bf16 GEMMs of model layers, thin decode GEMMs, fp8 GEMMs, causal
// fused attention (FlashAttention-2 and cuDNN), eager element-wise kernels and a sustained GEMM.
// Each measured kernel is timed by the model's own function (gemm_time, memory_time,
// fused_attention_time) on the hgx-h200 preset's GPU. Error = model time / measured time - 1:
// negative where the model is faster than the GPU (optimistic).
//
// The table in docs/VALIDATION.md ("Compute by shape") is this test's output:
//   LINKWISE_COMPUTE_SHAPES_MD=shapes.md build/linkwise_tests --gtest_filter='WorkComputeShapes.*'
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "linkwise/topo/chassis.h"
#include "linkwise/work/compute.h"
#include "linkwise/work/model.h"

namespace linkwise::work {
namespace {

constexpr const char* kData = "/data/measured/h200-compute-shapes-2026-12-01/compute-shapes.json";

nlohmann::json measured() {
  std::ifstream f(std::string(LINKWISE_SOURCE_DIR) + kData);
  return nlohmann::json::parse(f);
}

GpuSpec h200(Precision p) {
  auto c = topo::load_chassis("hgx-h200");
  return gpu_spec(c.node(c.gpus().front()), p);
}

struct Row {
  std::string group, what;
  double measured_s = 0, model_s = 0;
  double error() const { return model_s / measured_s - 1; }
};

// Rows of every section, grouped for the summary.
std::vector<Row> compare(const nlohmann::json& j) {
  std::vector<Row> rows;
  GpuSpec bf16 = h200(Precision::kBf16), fp8 = weight_gemm_gpu(h200(Precision::kFp8));
  for (const auto& g : j["gemm"]) {
    std::string label = g["label"], pass = g["pass_"];
    double m = g["m"], n = g["n"], k = g["k"];
    std::string group = label.rfind("square", 0) == 0 ? "bf16 square" : "bf16 layer " + pass;
    rows.push_back({group, fmt::format("{} {} {}x{}x{}", label, pass, m, n, k),
                    double(g["time_ms"]) * 1e-3, gemm_time(bf16, m, n, k)});
  }
  {  // the sustained GEMM: the median of its 1 s windows
    const auto& s = j["sustained"];
    std::vector<double> tf;
    for (const auto& w : s["windows"]) tf.push_back(w["tflops"]);
    std::sort(tf.begin(), tf.end());
    double n = s["m"], flops = 2 * n * n * n;
    rows.push_back({"bf16 sustained 40 s",
                    fmt::format("{0}x{0}x{0} median of {1} windows", n, tf.size()),
                    flops / (tf[tf.size() / 2] * 1e12), gemm_time(bf16, n, n, n)});
  }
  for (const auto& g : j["decode"]) {
    double m = g["m"], n = g["n"], k = g["k"];
    rows.push_back({m <= 64 ? "decode m 1-64" : "decode m 128-512",
                    fmt::format("{} m={} {}x{}", std::string(g["label"]), m, n, k),
                    double(g["time_ms"]) * 1e-3, gemm_time(bf16, m, n, k)});
  }
  for (const auto& g : j["fp8"]) {
    if (!g.contains("time_ms")) continue;
    double m = g["m"], n = g["n"], k = g["k"];
    rows.push_back({"fp8", fmt::format("{} {}x{}x{}", std::string(g["label"]), m, n, k),
                    double(g["time_ms"]) * 1e-3, gemm_time(fp8, m, n, k)});
  }
  for (const auto& a : j["attention"]) {
    if (!a.contains("fwd_ms")) continue;
    std::string backend = a["backend"];
    double b = a["batch"], h = a["heads"], d = a["head_dim"], s = a["seq"];
    // As a training step charges it (work/compute.cc attention_forward): causal, the kernel of
    // the backend (FlashAttention-2 on Hopper for PyTorch SDPA's flash; cuDNN), forward and
    // backward (fused_attention_time), over the 4·b·s²·h·d unmasked forward FLOPs.
    bool fa2 = backend == "flash";
    double full = 4 * b * s * s * h * d;
    double fwd = fused_attention_time(bf16, fa2, full, s, false);
    double bwd = fused_attention_time(bf16, fa2, full, s, true);
    std::string what = fmt::format("{} seq {} batch {}", backend, s, b);
    rows.push_back({"attention fwd " + backend, what, double(a["fwd_ms"]) * 1e-3, fwd});
    rows.push_back(
        {"attention fwd+bwd " + backend, what, double(a["fwd_bwd_ms"]) * 1e-3, fwd + bwd});
  }
  for (const auto& e : j["eager"]) {
    double bytes = e["bytes"];
    std::string name = e["name"];
    if (bytes <= 0) continue;
    rows.push_back(
        {"eager element-wise", name, double(e["time_ms"]) * 1e-3, memory_time(bf16, bytes)});
  }
  return rows;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string pct(double x) { return fmt::format("{:+.1f}%", 100 * x); }

void write_markdown(const std::vector<Row>& rows, const std::string& path) {
  std::map<std::string, std::vector<const Row*>> groups;
  std::vector<std::string> order;
  for (const auto& r : rows) {
    if (!groups.count(r.group)) order.push_back(r.group);
    groups[r.group].push_back(&r);
  }
  std::ofstream o(path);
  o << "| section | kernels | median error | largest size of error | range "
       "|\n|---|---|---|---|---|\n";
  for (const auto& g : order) {
    std::vector<double> e, a;
    for (const Row* r : groups[g]) e.push_back(r->error()), a.push_back(std::abs(r->error()));
    auto [lo, hi] = std::minmax_element(e.begin(), e.end());
    o << fmt::format("| {} | {} | {} | {:.1f}% | {} to {} |\n", g, e.size(), pct(median(e)),
                     100 * *std::max_element(a.begin(), a.end()), pct(*lo), pct(*hi));
  }
  o << "\n| section | kernel | measured ms | model ms | error |\n|---|---|---|---|---|\n";
  for (const auto& r : rows)
    o << fmt::format("| {} | {} | {:.4f} | {:.4f} | {} |\n", r.group, r.what, r.measured_s * 1e3,
                     r.model_s * 1e3, pct(r.error()));
}

std::vector<double> errors(const std::vector<Row>& rows, const std::string& prefix) {
  std::vector<double> e;
  for (const auto& r : rows)
    if (r.group.rfind(prefix, 0) == 0) e.push_back(r.error());
  return e;
}

TEST(WorkComputeShapes, ModelAgainstTheMeasuredH200Kernels) {
  auto rows = compare(measured());
  if (const char* md = std::getenv("LINKWISE_COMPUTE_SHAPES_MD")) write_markdown(rows, md);
  // 231 bf16 GEMMs, 70 decode GEMMs, 10 fp8, 12 x 2 attention, 8 eager kernels with a byte count,
  // the sustained GEMM.
  EXPECT_EQ(rows.size(), 231u + 1 + 70 + 10 + 24 + 8);
  // The sustained 8192^3 GEMM (the run whose clock sets gemm_sustained_clock_mhz, so not an
  // independent check of the throughput): within 3% (model 0.85 · 1455 / 1830 · q 0.970 · 989.4 =
  // 648.6 TFLOP/s against 658).
  auto sus = errors(rows, "bf16 sustained");
  ASSERT_EQ(sus.size(), 1u);
  EXPECT_LT(std::abs(sus[0]), 0.03);
  // Layer GEMMs (forward, input and weight gradients, 2048-16384 tokens), each run for well under a
  // second but inside a section held at the capped clock (1425-1500 MHz, smi.csv): median within
  // 5%, at least 95% of them within 15% (the rest: thin TP-8 shards, where cuBLAS picks smaller
  // tiles than the model's 256 x 128).
  auto layer = errors(rows, "bf16 layer");
  EXPECT_EQ(layer.size(), 225u);
  EXPECT_LT(std::abs(median(layer)), 0.05);
  EXPECT_GE(std::count_if(layer.begin(), layer.end(), [](double e) { return std::abs(e) <= 0.15; }),
            0.95 * layer.size());
  // Decode GEMMs of 1-64 rows and eager element-wise kernels: the model streams at the HBM peak,
  // which no kernel reaches: a bound, never slower than the GPU (from 128 rows on the tensor side
  // and wave quantization take over).
  for (const char* g : {"decode m 1-64", "eager"})
    for (double e : errors(rows, g)) EXPECT_LT(e, 0.0) << g;
  // Causal fused attention per backend (its rates and tails derived from these 24 timings, so not
  // an independent check of them): every kernel, seq 1k-32k, within 10% of its measured time.
  for (const char* g : {"attention fwd flash", "attention fwd+bwd flash", "attention fwd cudnn",
                        "attention fwd+bwd cudnn"}) {
    auto e = errors(rows, g);
    EXPECT_EQ(e.size(), 6u) << g;
    for (double x : e) EXPECT_LT(std::abs(x), 0.10) << g;
  }
}

TEST(WorkComputeShapes, CausalFusedAttentionOfOneLayer) {
  // Llama 2 7B, one 4096-token sequence on an H100 SXM (dgx-h100), 32 heads of 128: unmasked
  // forward 4 · 4096² · 32 · 128 = 2.7488e11 FLOP; the causal kernel runs half, 1.3744e11.
  auto c = topo::load_chassis("dgx-h100");
  GpuSpec g = gpu_spec(c.node(c.gpus().front()), Precision::kBf16);
  const double eta = 0.85 * 1455 / 1830, full = 4.0 * 4096 * 4096 * 32 * 128;
  // cuDNN (Transformer Engine), forward: 0.96 η · 989.4e12 = 642.1e12 FLOP/s, tail 547 keys:
  // 1.3744e11 · (1 + 547 / 4096) / 642.1e12 = 0.2426 ms, + 3 us.
  EXPECT_NEAR(fused_attention_time(g, false, full, 4096, false),
              full / 2 * (1 + 547.0 / 4096) / (989.4e12 * 0.96 * eta) + 3e-6, 1e-12);
  EXPECT_NEAR(fused_attention_time(g, false, full, 4096, false), 0.2456e-3, 1e-6);
  // Backward: 2.5 · 1.3744e11 = 3.4360e11 FLOP at 0.84 η · 989.4e12 = 561.7e12, tail 718 keys:
  // 3.4360e11 · (1 + 718 / 4096) / 561.7e12 = 0.7189 ms, + 3 us.
  EXPECT_NEAR(fused_attention_time(g, false, full, 4096, true), 0.7219e-3, 1e-6);
  // FlashAttention-2 (PyTorch SDPA), forward: 0.34 · 989.4e12 = 336.4e12, tail 518 keys:
  // 1.3744e11 · (1 + 518 / 4096) / 336.4e12 = 0.4602 ms, + 3 us: about twice cuDNN's.
  EXPECT_NEAR(fused_attention_time(g, true, full, 4096, false), 0.4632e-3, 1e-6);
  // A100 (η 0.85, FlashAttention-2 at η · 0.75 = 0.6375 of 312e12): 1.3744e11 · (1 + 518 / 4096)
  // / 198.9e12 = 0.7784 ms, + 3 us.
  auto a = topo::load_chassis("dgx-a100");
  GpuSpec ga = gpu_spec(a.node(a.gpus().front()), Precision::kBf16);
  EXPECT_NEAR(fused_attention_time(ga, false, full, 4096, false), 0.7814e-3, 2e-6);
}

TEST(WorkComputeShapes, ContextParallelRingMergesOfOneLayer) {
  // Llama 2 7B (32 heads and 32 KV heads of 128), one 131072-token sequence, cp 4, tp 4: this
  // GPU's 32768 tokens, 8 query heads and 8 KV heads. Queries' elements 32768 · 8 · 128 =
  // 33,554,432; K and V 2 · 33,554,432 = 67,108,864. Steps: the diagonal one whole, the other 3 at
  // 3/4 on average over the ranks: 1 + 0.75 · 3 = 3.25. Forward: 6 bytes · 33,554,432 · 3.25 =
  // 654,311,424; backward (dq and dK,dV): 6 · 100,663,296 · 3.25 = 1,962,934,272.
  Model m = find_model("llama2-7b");
  Job j;
  j.seq = 131072, j.micro_batch = 1, j.global_batch = 1, j.precision = Precision::kBf16;
  Plan p;
  p.tp = 4, p.cp = 4, p.micro_batch = 1;
  const RingMergeBytes r = cp_ring_merge_bytes(m, j, p);
  EXPECT_NEAR(r.forward, 654311424.0, 1);
  EXPECT_NEAR(r.backward, 1962934272.0, 1);
  // On an H100 SXM (3.35 TB/s) the forward's merges take 0.195 ms, against 35 ms of this layer's
  // attention core (4 · 32768 · 131072 · 8 · 128 = 1.759e13 FLOP charged at 0.507 of 989.4e12):
  // about 0.6 %, so they cannot be what the long-sequence rows miss. No ring, no merges:
  p.cp = 1;
  EXPECT_EQ(cp_ring_merge_bytes(m, j, p).forward, 0);
  p.cp = 4;
  j.flash_attention = false;
  EXPECT_EQ(cp_ring_merge_bytes(m, j, p).backward, 0);
}

TEST(WorkComputeShapes, MegatronChargesTheCausalKernelOfEachRingStep) {
  // Llama 2 7B, one 131072-token sequence, cp 4, tp 4, bf16 on an H100 SXM (989.4 TFLOP/s, η =
  // 0.85 · 1455 / 1830 = 0.67582): this GPU holds S = 32768 tokens (chunks i and 7 - i of 16384)
  // and 8 heads of 128. Transformer Engine's ring runs 4 steps; each computes 2c² = 2 · 16384² =
  // S²/2 scores a head (step 0 the causal diagonal block, the others a half block), charged as a
  // causal kernel of S queries on S keys: unmasked forward 4 · 32768² · 8 · 128 = 4.3980e12 FLOP,
  // causal half 2.1990e12. All 4 steps: 8.7961e12, half the rank's whole 4 · 32768 · 131072 · 8 ·
  // 128 = 1.7592e13.
  auto c = topo::load_chassis("dgx-h100");
  GpuSpec g = gpu_spec(c.node(c.gpus().front()), Precision::kBf16);
  Model m = find_model("llama2-7b");
  Job j;
  j.seq = 131072, j.micro_batch = 1, j.global_batch = 8, j.framework = Framework::kMegatron;
  j.precision = Precision::kBf16, j.recompute = Recompute::kNone;
  Plan p;
  p.tp = 4, p.cp = 4, p.micro_batch = 1;
  const double S = 32768, step = 4 * S * S * 8 * 128, eta = 0.85 * 1455 / 1830;
  constexpr double kTol = 1e-12;  // seconds: the same arithmetic in a different order
  // Megatron's default on Hopper, cuDNN: forward 0.96 η · 989.4e12 = 641.9e12 FLOP/s, tail 547
  // keys: 2.1990e12 · (1 + 547 / 32768) / 641.9e12 + 3 us = 3.486 ms a step, 13.944 ms the ring.
  // Backward 2.5x the FLOPs at 0.84 η (561.7e12), tail 718: 10.005 ms a step, 40.021 ms.
  LayerCompute cu = layer_compute(m, j, p, g);
  EXPECT_NEAR(cu.core_f, 4 * (step / 2 * (1 + 547 / S) / (989.4e12 * 0.96 * eta) + 3e-6), kTol);
  EXPECT_NEAR(cu.core_f, 13.944e-3, 1e-6);
  EXPECT_NEAR(cu.core_b, 4 * (2.5 * step / 2 * (1 + 718 / S) / (989.4e12 * 0.84 * eta) + 3e-6),
              kTol);
  EXPECT_NEAR(cu.core_b, 40.021e-3, 1e-6);
  // --attention flash (FlashAttention-2): 0.34 · 989.4e12 = 336.4e12, tail 518: 6.643 ms a step,
  // 26.573 ms; backward 0.33 (326.5e12), tail 846: 17.275 ms a step, 69.102 ms.
  j.cudnn_attention = Switch::kOff;
  LayerCompute fa = layer_compute(m, j, p, g);
  EXPECT_NEAR(fa.core_f, 4 * (step / 2 * (1 + 518 / S) / (989.4e12 * 0.34) + 3e-6), kTol);
  EXPECT_NEAR(fa.core_f, 26.573e-3, 1e-6);
  EXPECT_NEAR(fa.core_b, 69.102e-3, 1e-6);
  // The executed FLOPs count the causal half; the whole-matrix charge the other stacks keep would
  // be 1.7592e13 at η · 0.75 = 0.5069 of the peak: 35.08 ms (and 2.5x backward).
  j.framework = Framework::kFsdp;
  LayerCompute whole = layer_compute(m, j, p, g);
  EXPECT_NEAR(whole.core_f, 4 * S * 131072 * 8 * 128 / (989.4e12 * 0.34) + 3e-6, kTol);
  EXPECT_NEAR(fa.flops_f + fa.flops_b + 3.5 * 4 * step / 2, whole.flops_f + whole.flops_b, 1e3);
}

TEST(WorkComputeShapes, EagerElementWiseOfOneLayerAtMeasuredShares) {
  // Llama 2 7B (h 4096, f 11008, gated MLP, RMSNorm, no dropout), one 2048-token sequence on one
  // H200 (4.8 TB/s), tp 1: S·h = 2048 · 4096 = 8,388,608 elements in each block.
  auto c = topo::load_chassis("hgx-h200");
  GpuSpec g = gpu_spec(c.node(c.gpus().front()), Precision::kBf16);
  Model m = find_model("llama2-7b");
  Job j;
  j.seq = 2048, j.micro_batch = 1, j.global_batch = 1, j.precision = Precision::kBf16;
  Plan p;
  p.micro_batch = 1;
  const double sh = 2048.0 * 4096, sf = 2048.0 * 11008, bw = 4.8e12, launch = 3e-6;
  // Eager PyTorch (fsdp), each kernel at its kind's share (eager_kernel_share: element-wise
  // 3478 / 4800 = 0.72458, activation 2395 / 4800 = 0.49896): each block's RMSNorm is eight
  // element-wise kernels moving 36 bytes an element and its residual add one moving 6:
  // 8,388,608 · 42 / 0.72458 = 486.24 MB at the peak, 101.30 us, + 9 launches of 3 us; the MLP
  // adds SwiGLU as silu (4 bytes per element of f, an activation) then a product (6, element-wise):
  // 22,544,384 · (8.0167 + 8.2806) = 367.41 MB, 76.54 us, + 2 launches. Forward: 2 · 128.30 +
  // 82.54 = 339.1 us.
  j.framework = Framework::kFsdp;
  const double ew = 3478.0 / 4800, act = 2395.0 / 4800;
  const double eager =
      2 * (sh * 42 / ew / bw + 9 * launch) + sf * (4 / act + 6 / ew) / bw + 2 * launch;
  EXPECT_NEAR(layer_compute(m, j, p, g).mem_f, eager, 1e-12);
  EXPECT_NEAR(layer_compute(m, j, p, g).mem_f, 339.1e-6, 0.1e-6);
  // Fused kernels (Megatron-core): a norm 4 bytes and an add 6 an element, SwiGLU 6 per element of
  // f, all at the peak: 2 · (83.9 MB / 4.8e12 = 17.48 us, + 3 us) + 135.3 MB / 4.8e12 = 28.18 us,
  // + 3 us: 72.1 us, a fifth of eager's.
  j.framework = Framework::kMegatron;
  EXPECT_NEAR(layer_compute(m, j, p, g).mem_f, 2 * (sh * 10 / bw + launch) + sf * 6 / bw + launch,
              1e-12);
  EXPECT_NEAR(layer_compute(m, j, p, g).mem_f, 72.1e-6, 0.1e-6);
}

TEST(WorkComputeShapes, GemmTimeAtThePowerCappedClock) {
  // H100 SXM (dgx-h100): 989.4 TFLOP/s bf16, 132 SMs, 3.35 TB/s; a dense GEMM holds 1455 MHz under
  // the 700 W limit against the 1830 MHz the peak is quoted at: η = 0.85 · 1455 / 1830 = 0.67582.
  auto c = topo::load_chassis("dgx-h100");
  GpuSpec g = gpu_spec(c.node(c.gpus().front()), Precision::kBf16);
  const double eta = 0.85 * 1455 / 1830;
  EXPECT_NEAR(g.gemm_efficiency, eta, 1e-12);
  EXPECT_NEAR(g.burst_gemm_efficiency, 0.75, 1e-12);  // serving's prefills: the Hopper figure
  // 8192^3: 32 · 64 = 2048 tiles of 256 x 128, ceil(2048 / 132) = 16 waves, q = 2048 / 2112 =
  // 0.96970; 1.0995e12 FLOP / (989.4e12 · 0.67582 · 0.96970 = 648.4e12) = 1.6957 ms, + 3 us.
  EXPECT_NEAR(gemm_time(g, 8192, 8192, 8192),
              2.0 * 8192 * 8192 * 8192 / (989.4e12 * eta * 2048 / 2112) + 3e-6, 1e-12);
  EXPECT_NEAR(gemm_time(g, 8192, 8192, 8192), 1.6987e-3, 1e-6);
  // Llama 2 7B MLP up-projection of one 4096-token sequence, 4096 x 11008 x 4096: 16 · 86 = 1376
  // tiles in ceil(1376 / 132) = 11 waves, q = 1376 / 1452 = 0.94766; 3.6938e11 FLOP / (989.4e12 ·
  // 0.67582 · 0.94766 = 633.7e12) = 0.5829 ms, + 3 us.
  EXPECT_NEAR(gemm_time(g, 4096, 11008, 4096),
              2.0 * 4096 * 11008 * 4096 / (989.4e12 * eta * 1376 / 1452) + 3e-6, 1e-12);
  EXPECT_NEAR(gemm_time(g, 4096, 11008, 4096), 0.5859e-3, 1e-6);
  // A part without the clock figures keeps its architecture's η: A100 0.85.
  auto a = topo::load_chassis("dgx-a100");
  EXPECT_NEAR(gpu_spec(a.node(a.gpus().front()), Precision::kBf16).gemm_efficiency, 0.85, 1e-12);
}

TEST(WorkComputeShapes, Fp8LinearGemmsAtTheirShareOfEta) {
  // H100 SXM (dgx-h100) in an fp8 job: the linear layers' GEMMs at the fp8 peak 1978.9 TFLOP/s and
  // 0.88 of η = 0.85 · 1455 / 1830 = 0.67582: 0.59472.
  auto c = topo::load_chassis("dgx-h100");
  const topo::Node& node = c.node(c.gpus().front());
  GpuSpec fp8 = gpu_spec(node, Precision::kFp8), bf16 = gpu_spec(node, Precision::kBf16);
  const double eta = 0.85 * 1455 / 1830;
  EXPECT_NEAR(weight_gemm_gpu(fp8).gemm_efficiency, 0.88 * eta, 1e-12);
  EXPECT_NEAR(weight_gemm_gpu(bf16).gemm_efficiency, eta, 1e-12);  // 16-bit jobs: unchanged
  // Llama 2 7B MLP up-projection of one 4096-token sequence, 4096 x 11008 x 4096: 1376 tiles in 11
  // waves, q = 1376 / 1452 = 0.94766; 3.6938e11 FLOP / (1978.9e12 · 0.59472 · 0.94766 = 1115.3e12)
  // = 0.3312 ms, + 3 us: 1.77x faster than bf16's 0.5859 ms, not 2x.
  EXPECT_NEAR(gemm_time(weight_gemm_gpu(fp8), 4096, 11008, 4096),
              2.0 * 4096 * 11008 * 4096 / (1978.9e12 * 0.88 * eta * 1376 / 1452) + 3e-6, 1e-12);
  EXPECT_NEAR(gemm_time(weight_gemm_gpu(fp8), 4096, 11008, 4096), 0.3342e-3, 1e-6);
  // The output layer stays 16-bit (Megatron-core's ColumnParallelLinear): the fp8 job's head takes
  // what the bf16 job's does.
  Model m = find_model("llama2-7b");
  Job j;
  j.seq = 4096, j.micro_batch = 1, j.global_batch = 8, j.framework = Framework::kMegatron;
  Plan p;
  p.micro_batch = 1;
  j.precision = Precision::kFp8;
  double head_fp8 = head_compute(m, j, p, fp8);
  j.precision = Precision::kBf16;
  EXPECT_NEAR(head_fp8, head_compute(m, j, p, bf16), 1e-12);
  // Weights cast to fp8 with their transposes once a step: read 2, write 1 + 1 bytes per parameter
  // at 3.35 TB/s. One Llama 2 7B layer, 202.4M linear parameters: 0.8095 GB, 0.2417 ms, + 3 us; 0
  // in bf16.
  const double w = m.layer_params();
  EXPECT_NEAR(fp8_weight_cast_time(w, fp8), 4 * w / 3.35e12 + 3e-6, 1e-12);
  EXPECT_NEAR(fp8_weight_cast_time(w, fp8), 0.2447e-3, 1e-6);
  EXPECT_EQ(fp8_weight_cast_time(w, bf16), 0.0);
}

TEST(WorkComputeShapes, SelectiveRecomputeRunsTheFusedCoreAgain) {
  // Megatron-core's selective recomputation checkpoints the attention core, fused or not: the
  // backward pays one more core forward. Llama 2 7B, one 4096-token sequence on an H100 SXM, bf16,
  // Transformer Engine's fused attention as the step charges it (cuDNN's causal kernel: half of the
  // whole 4 · 4096² · 32 · 128 = 2.7488e11 FLOP at 0.96 η = 641.9e12 FLOP/s, tail 547 keys):
  // 1.3744e11 · (1 + 547 / 4096) / 641.9e12 = 0.2426 ms, + 3 us.
  auto c = topo::load_chassis("dgx-h100");
  GpuSpec g = gpu_spec(c.node(c.gpus().front()), Precision::kBf16);
  Model m = find_model("llama2-7b");
  Job j;
  j.seq = 4096, j.micro_batch = 1, j.global_batch = 8, j.framework = Framework::kMegatron;
  j.precision = Precision::kBf16, j.flash_attention = true;
  Plan p;
  p.micro_batch = 1;
  j.recompute = Recompute::kNone;
  LayerCompute none = layer_compute(m, j, p, g);
  j.recompute = Recompute::kSelective;
  LayerCompute sel = layer_compute(m, j, p, g);
  const double core =
      2.0 * 4096 * 4096 * 32 * 128 * (1 + 547.0 / 4096) / (989.4e12 * 0.96 * 0.85 * 1455 / 1830) +
      3e-6;
  EXPECT_NEAR(none.core_f, core, 1e-12);
  EXPECT_NEAR(none.core_f, 0.2456e-3, 1e-6);
  EXPECT_NEAR(sel.attn_b - none.attn_b, core, 1e-12);
  EXPECT_NEAR(sel.core_b - none.core_b, core, 1e-12);
  EXPECT_NEAR(sel.flops_b - none.flops_b, 2.0 * 4096 * 4096 * 32 * 128, 1.0);
  EXPECT_NEAR(sel.attn_f, none.attn_f, 1e-15);  // the forward is the same
  EXPECT_NEAR(sel.mlp_b, none.mlp_b, 1e-15);
}

TEST(WorkComputeShapes, ComposerTrainMetricsRunTwoEagerCrossEntropies) {
  // Composer updates LanguageCrossEntropy and LanguagePerplexity every micro-batch, each a
  // torch CrossEntropyLoss over all the logits under autocast (fsdp1: metric_loss_passes 2).
  // MPT-125M (vocabulary 50368) at micro-batch 26 of 2048 tokens on an A100 SXM 80GB (2039 GB/s):
  // 53,248 x 50,368 = 2.6820e9 logits. Per logit and pass: the cast, 6 bytes at the element-wise
  // share 3478/4800 (8.2806 peak bytes), and log_softmax, 16 bytes at the softmax share 3702/4800
  // (20.746): 29.026 peak bytes, 0.038180 s at 2039 GB/s, + 4 kernels of 3 us. Two passes:
  // 0.07638 s a micro-batch, 1.43 us a token, where the fused loss is 10 bytes a logit.
  auto c = topo::load_chassis("dgx-a100");
  GpuSpec g = gpu_spec(c.node(c.gpus().front()), Precision::kBf16);
  Model m = find_model("gpt3-175b");
  m.layers = 12, m.hidden = 768, m.heads = 12, m.ffn = 3072, m.vocab = 50368;
  Job j;
  j.seq = 2048, j.micro_batch = 26, j.global_batch = 26 * 8;
  j.framework = Framework::kFsdp1;
  Plan p;
  p.dp = 8, p.zero = 3, p.micro_batch = 26;
  const double logits = 2048.0 * 26 * 50368;
  const double pass = (6 / (3478.0 / 4800) + 16 / (3702.0 / 4800)) * logits / 2039e9 + 4 * 3e-6;
  EXPECT_NEAR(metric_loss_time(m, j, p, g), 2 * pass, 1e-12);
  EXPECT_NEAR(metric_loss_time(m, j, p, g), 0.07638, 1e-4);
  const double with_metrics = head_compute(m, j, p, g);
  // Megatron and torchtitan (fsdp) keep no such metrics: the head is 2 passes cheaper.
  j.framework = Framework::kMegatron;
  EXPECT_EQ(metric_loss_time(m, j, p, g), 0.0);
  j.framework = Framework::kFsdp;
  EXPECT_EQ(metric_loss_time(m, j, p, g), 0.0);
  EXPECT_NEAR(with_metrics - head_compute(m, j, p, g), 2 * pass, 1e-12);
}

TEST(WorkComputeShapes, NonReentrantCheckpointStopsBeforeTheDownProjection) {
  // PyTorch's non-reentrant checkpoint (early stop, default since 2.1) ends the recomputed forward
  // when the last tensor the backward needs is saved; autograd saves an op's inputs before its
  // kernel, so the MLP's down projection is not run again. Llama 2 7B, one 4096-token sequence on
  // an H100 SXM, bf16, full recomputation: the down GEMM is 4096 x 4096 x 11008, 16 x 32 = 512
  // tiles in 3.88 waves of 132 SMs (q = 512 / 528), 3.6938e11 FLOP at 989.4e12 x 0.85 x 1455 /
  // 1830 x q = 6.4842e14 FLOP/s: 0.5697 ms, + 3 us = 0.5727 ms off the backward under fsdp1 (and
  // fsdp), none under megatron (its own reentrant CheckpointFunction), nor under LoRA (PEFT's
  // adapters run after the frozen down projection and save last).
  auto c = topo::load_chassis("dgx-h100");
  GpuSpec g = gpu_spec(c.node(c.gpus().front()), Precision::kBf16);
  Model m = find_model("llama2-7b");
  Job j;
  j.seq = 4096, j.micro_batch = 1, j.global_batch = 8, j.framework = Framework::kFsdp1;
  j.precision = Precision::kBf16, j.recompute = Recompute::kFull;
  Plan p;
  p.dp = 8, p.zero = 3, p.micro_batch = 1;
  const LayerCompute stop = layer_compute(m, j, p, g);
  j.recompute_early_stop = Switch::kOff;
  const LayerCompute whole = layer_compute(m, j, p, g);
  const double down =
      2.0 * 4096 * 4096 * 11008 / (989.4e12 * 0.85 * 1455 / 1830 * 512 / 528) + 3e-6;
  EXPECT_NEAR(stop.gemm_down, down, 1e-12);
  EXPECT_NEAR(stop.gemm_down, 0.5727e-3, 1e-6);
  EXPECT_NEAR(whole.mlp_b - stop.mlp_b, down, 1e-12);
  EXPECT_NEAR(whole.flops_b - stop.flops_b, 2.0 * 4096 * 4096 * 11008, 1.0);
  EXPECT_NEAR(whole.attn_b, stop.attn_b, 1e-15);  // attention is recomputed either way
  // Megatron's checkpointing and LoRA recompute the whole block.
  j.recompute_early_stop = Switch::kDefault;
  j.framework = Framework::kMegatron;
  const LayerCompute megatron = layer_compute(m, j, p, g);
  j.recompute_early_stop = Switch::kOff;
  EXPECT_NEAR(megatron.mlp_b, layer_compute(m, j, p, g).mlp_b, 1e-15);
  j.recompute_early_stop = Switch::kDefault;
  j.framework = Framework::kFsdp1;
  j.mode = Mode::kLora;
  const LayerCompute lora_stop = layer_compute(m, j, p, g);
  j.recompute_early_stop = Switch::kOff;
  EXPECT_NEAR(layer_compute(m, j, p, g).mlp_b, lora_stop.mlp_b, 1e-15);
}

}  // namespace
}  // namespace linkwise::work
