// Serving model: hand-derived decode step, KV cache per token, TP all-reduces, load time, bad
// input.
#include "linkwise/work/serve.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "linkwise/comm/predict.h"
#include "linkwise/comm/transport.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/topo/spec.h"
#include "linkwise/util/error.h"
#include "linkwise/work/compute.h"
#include "linkwise/work/serve_run.h"
#include "linkwise/work/serve_validation.h"
#include "topo/testing/four_under_switch.h"
#include "work/serve_impl.h"

namespace linkwise::work {
namespace {

constexpr double kTight = 1e-3;  // relative: the same arithmetic, different order
constexpr double kModel =
    0.02;  // relative: terms the hand derivation leaves out (norms, element-wise, KV)

ServeOptions one_gpu() {
  ServeOptions o;
  o.gpus = {"GPU0"};
  o.input = 128;
  o.output = 128;
  return o;
}

// NIM's Llama 3.3 70B fp8 runs: TP 2 on two H100 SXM, 5000 + 500 tokens, whole prompts a step
// (no chunked prefill), no async scheduling; the caller picks the front end.
ServeOptions nim_70b_tp2_5000_500(FrontEnd front_end) {
  ServeOptions o;
  o.tp = 2;
  o.gpus = {"GPU0", "GPU1"};
  o.precision = NumberFormat::kFp8;
  o.input = 5000;
  o.output = 500;
  o.chunked_prefill = false;
  o.async_scheduling = false;
  o.front_end = front_end;
  return o;
}

TEST(Serve, DecodeStepOfAMemoryBoundModelOnOneGpu) {
  // Llama 3.1 8B, bf16, one H100 SXM (3.35 TB/s), one sequence at context 1. Weights read per step:
  //   attention per layer h·(a·d + 2·g·d) + a·d·h = 4096·(4096 + 2048) + 4096² = 41,943,040
  //   MLP per layer 3·h·f = 3·4096·14336 = 176,160,768  -> 218,103,808 per layer, x 32 =
  //   6,979,321,856 output projection h·V = 4096·128256 = 525,336,576  -> 7,504,658,432 parameters
  //   x 2 bytes = 15,009,316,864 bytes (+ 16 KiB of norms per layer)
  // t_memory = bytes / (W · η_mem) = 15.0093e9 / (3.35e12 · 0.85) = 5.271 ms: each GEMM at m = 1
  // is memory-bound in gemm_parts (its compute side, 2 FLOP per weight, is ~1/200 of its bytes'
  // time), and the GEMMs' memory sides add up to the weights' bytes.
  auto chassis = topo::load_chassis("dgx-h100");
  ServeModel sm(chassis, find_model("llama3.1-8b"), one_gpu());
  StepTime t = sm.step(1, 1, 0, 0);
  double bytes = 15'009'316'864.0;
  double W = chassis.node(chassis.gpus()[0]).fig("memory_bytes_per_s");
  ASSERT_DOUBLE_EQ(W, 3.35e12);
  EXPECT_NEAR(t.memory, bytes / (W * kMemoryEfficiency), kModel * t.memory);
  EXPECT_LT(t.compute, 1e-12);  // no part is compute-bound
  // The step adds the kernel launches (32 layers x 10 kernels, 4 of them the GEMMs, and the LM
  // head's GEMM, x 3 us) and the engine's overhead.
  EXPECT_NEAR(t.kernels, (32 * 10 + 1) * 3e-6, kTight * t.kernels);
  EXPECT_NEAR(t.total, t.memory + t.kernels + kStepOverheadS, kTight * t.total);
  EXPECT_EQ(t.comm, 0);
}

// Qwen3 8B (36 layers, hidden 4096, 32 q / 8 kv heads of 128, gated FFN 12288, vocabulary
// 151936) on one H200 SXM (989.4 TFLOP/s bf16, η 0.75, 4.8 TB/s at η_mem 0.85 = 4.08 TB/s, 132
// SMs): each weight GEMM through gemm_parts, at m = the step's tokens.
ServeModel qwen3_8b_on_one_h200(const topo::Chassis& chassis) {
  ServeOptions o = one_gpu();
  o.input = 1024;
  return ServeModel(chassis, find_model("qwen3-8b"), o);
}

TEST(Serve, DecodeStepAtBatchOneSumsItsGemms) {
  // One sequence at context 1024: m = 1, every GEMM memory-bound (its bytes: 2·(m·k + m·n) +
  // 2·k·n, at 4.08 TB/s):
  //   QKV    1 x 6144 x 4096:   50,450,432 B -> 12.365 us
  //   output 1 x 4096 x 4096:   33,701,888 B ->  8.260 us
  //   gate/up 1 x 24576 x 4096: 201,383,936 B -> 49.359 us
  //   down   1 x 4096 x 12288: 100,827,136 B -> 24.712 us   -> 94.696 us a layer, x 36 = 3409.1 us
  //   LM head 1 x 151936 x 4096 (16 bits): 1,244,971,776 B -> 305.140 us
  // KV cache read: 36 layers x 4096 B a token (8 kv heads x 128 x 2 x 2 B) x 1025 tokens =
  // 151.1 MB -> 37.04 us. Element-wise: 36 · 2 · (12·4096 + 3·12288) B, ~1.5 ns.
  // t_memory = 3409.1 + 305.1 + 37.0 = 3751.3 us; t_compute = 0 (the attention of one token is
  // memory-bound too). Kernels: (36 x 10 + 1) x 3 us = 1083 us.
  auto chassis = topo::load_chassis("hgx-h200");
  StepTime t = qwen3_8b_on_one_h200(chassis).step(1, 1024, 0, 0);
  EXPECT_NEAR(t.memory, 3751.3e-6, 2e-3 * t.memory);
  EXPECT_LT(t.compute, 1e-12);
  EXPECT_NEAR(t.kernels, 1083e-6, kTight * t.kernels);
  EXPECT_NEAR(t.total, t.memory + t.kernels + kStepOverheadS, kTight * t.total);
}

TEST(Serve, PrefillStepOf233TokensSumsItsGemms) {
  // One prompt of 233 tokens (mean prefix 116.5): m = 233, one row of 256 x 128 output tiles.
  // Peak x η = 742.05 TFLOP/s; an output of fewer tiles than the 132 SMs splits its k loop
  // (split-K, s = min(floor(132 / tiles), floor(k / 256))) and writes and reads 8·m·n·s bytes of
  // partial sums:
  //   QKV    233 x 6144 x 4096: 48 tiles, s = 2, q = 96/132: 11.73 GFLOP -> 21.73 us (compute)
  //          bytes 78.0 MB -> 19.12 us
  //   output 233 x 4096 x 4096: 32 tiles, s = 4, q = 128/132: 7.82 GFLOP -> 10.87 us; bytes
  //          67.9 MB -> 16.65 us (memory)
  //   gate/up 233 x 24576 x 4096: 192 tiles, 2 waves, q = 192/264: 46.9 GFLOP -> 86.92 us
  //          (compute); bytes 214.7 MB -> 52.62 us
  //   down   233 x 4096 x 12288: 32 tiles, s = 4: 23.46 GFLOP -> 32.60 us; bytes 138.8 MB ->
  //          34.03 us (memory)
  //   LM head, the last token only: 305.14 us (memory, as at decode)
  // Linear: compute 36 x (21.73 + 86.92) = 3911.4 us; memory 36 x (16.65 + 34.03) + 305.1 =
  // 2129.6 us. Attention 4·32·128·233·116.5·36 = 16.0 GFLOP at 989.4e12 · 0.75 · 0.75 = 28.79 us
  // (its KV bytes, 36 · 4096 · 466 = 68.7 MB, 16.84 us: compute-bound). Element-wise 36 · 233 · 2 ·
  // (12·4096 + 3·12288) B = 1443 MB -> 353.7 us. t_compute = 3940.2 us, t_memory = 2483.3 us;
  // kernels (36 x 10 + 1) x 3 us = 1083 us.
  auto chassis = topo::load_chassis("hgx-h200");
  StepTime t = qwen3_8b_on_one_h200(chassis).step(0, 0, 233, 116.5);
  EXPECT_NEAR(t.compute, 3940.2e-6, 2e-3 * t.compute);
  EXPECT_NEAR(t.memory, 2483.3e-6, 2e-3 * t.memory);
  EXPECT_NEAR(t.kernels, 1083e-6, kTight * t.kernels);
}

TEST(Serve, StepsAgainstTheMeasuredH200Decoder) {
  // data/measured/h200-decode-steps-2026-12-01: a Qwen3 8B-shaped decoder in plain PyTorch on one
  // H200, decode steps (batch x context) and prefills (one prompt) replayed as CUDA graphs. The
  // model's step is vLLM's; the GPU's share of it is the step less the engine's host overhead.
  // The measured decoder runs more kernels: per layer 24 besides its 4 GEMMs (F.rms_norm twice,
  // rotary as 7 each on q and k: two products, a difference, two products, a sum, a cat; 2
  // KV-cache copies; SDPA; the attention output's reshape copy; 2 residual adds; SiLU and the
  // product) against vLLM's 6, and 8 per step around the layers (the rotary angles, the last
  // norm): 36 x 18 + 8 = 656 kernels more, each at the model's 3 us gap. Decode held to 10%,
  // prefill to 15% (docs/VALIDATION.md, "Measured on the target machine"); the GEMM memory rate
  // (η_mem 0.85) was checked on this machine's GEMM shapes, so this is not wholly independent.
  std::ifstream in(std::string(LINKWISE_SOURCE_DIR) +
                   "/data/measured/h200-decode-steps-2026-12-01/decode-steps.json");
  ASSERT_TRUE(in.good());
  auto j = nlohmann::json::parse(in);
  auto chassis = topo::load_chassis("hgx-h200");
  ServeModel sm = qwen3_8b_on_one_h200(chassis);
  const double extra = (36 * 18 + 8) * kKernelGapS;
  int rows = 0;
  for (const auto& r : j["decode"]) {
    double b = r["batch"], ctx = r["context"], ms = r["step_ms"];
    double gpu = sm.step(b, ctx, 0, 0).total - kStepOverheadS + extra;
    SCOPED_TRACE(
        fmt::format("decode {} x {}: {:.2f} ms predicted, {:.2f} measured", b, ctx, gpu * 1e3, ms));
    EXPECT_NEAR(gpu * 1e3, ms, 0.10 * ms);
    ++rows;
  }
  for (const auto& r : j["prefill"]) {
    double n = r["tokens"], ms = r["graph_ms"];
    double gpu = sm.step(0, 0, n, n / 2).total - kStepOverheadS + extra;
    SCOPED_TRACE(fmt::format("prefill {}: {:.2f} ms predicted, {:.2f} measured", n, gpu * 1e3, ms));
    // The longest prompt's GEMMs run long enough, back to back, to hold the H200 at its 700 W
    // power cap (data/measured/h200-compute-shapes-2026-12-01: 1,425-1,500 MHz under dense GEMMs),
    // which the serving step's η (a prefill as a burst between decode steps) leaves out: 20%.
    EXPECT_NEAR(gpu * 1e3, ms, (n > 2048 ? 0.20 : 0.15) * ms);
    ++rows;
  }
  EXPECT_EQ(rows, 16);
}

TEST(Serve, KvCachePerTokenOfAGqaModel) {
  // Llama 3.1 70B: 80 layers, 8 KV heads of 128: K and V, 2 bytes each in bf16:
  //   2 · 80 · 8 · 128 · 2 = 327,680 bytes (320 KiB) per token; under TP 4 each GPU holds 2 KV
  //   heads: 81,920 bytes. fp8 KV cache: half.
  auto chassis = topo::load_chassis("inference-appliance");
  ServeOptions o;
  o.tp = 4;
  ServeModel sm(chassis, find_model("llama3.1-70b"), o);
  EXPECT_DOUBLE_EQ(sm.memory().kv_bytes_per_token_model, 327'680);
  EXPECT_DOUBLE_EQ(sm.memory().kv_bytes_per_token, 81'920);
  o.kv_precision = NumberFormat::kFp8;
  o.kv_precision_given = true;
  ServeModel fp8(chassis, find_model("llama3.1-70b"), o);
  EXPECT_DOUBLE_EQ(fp8.memory().kv_bytes_per_token_model, 163'840);
  // Memory adds up: weights + KV + activations + runtime + the engine's free 10% = capacity.
  const auto& m = sm.memory();
  EXPECT_NEAR(m.weights + m.kv_cache + m.activations + m.runtime + m.reserved, m.capacity, 1);
  // Admission: the KV cache holds kv_cache / 81,920 tokens; each request of 1024 + 256 tokens takes
  // 1280.
  EXPECT_EQ(sm.max_concurrency_fit(), static_cast<int>(std::floor(m.kv_cache / 81'920 / 1280)));
}

TEST(Serve, AllReducesPerDecodedTokenUnderTp) {
  // Llama 3.1 70B, TP 4: two all-reduces per layer (after attention, after the MLP) of one token's
  // hidden state, h · 2 bytes = 8192 · 2 = 16,384 bytes: 160 per decoded token. A decode step of D
  // sequences all-reduces D · 16 KiB 160 times, each timed by the collectives model on the same
  // GPUs. Once a step the sampled tokens' logits are gathered from the four vocabulary shards
  // (vLLM V1 all-gathers them: every worker samples): D · vocab · 2 = D · 128,256 · 2 bytes.
  auto chassis = topo::load_chassis("inference-appliance");
  ServeOptions o;
  o.tp = 4;
  o.concurrency = 1;
  auto r = serve(chassis, find_model("llama3.1-70b"), o);
  EXPECT_EQ(r.allreduces_per_token, 160);
  EXPECT_EQ(r.allreduce_bytes_per_token, 16'384);
  ServeModel sm(chassis, find_model("llama3.1-70b"), o);
  comm::Communicator c(chassis, chassis.gpus());
  for (double D : {1.0, 8.0}) {
    double ar = c.predict(comm::Op::kAllReduce, D * 16'384).time_s;
    double ag = c.predict(comm::Op::kAllGather, D * 128'256 * 2).time_s;
    EXPECT_NEAR(sm.step(D, 1000, 0, 0).comm, 160 * ar + ag, kTight * (160 * ar + ag)) << D;
    // The gather is small beside the all-reduces: one collective of ~250 KiB a token.
    EXPECT_LT(ag, 0.1 * 160 * ar) << D;
  }
  // On PCIe through the host bridges the all-reduces are latency-bound: each costs about the same
  // for 1 and 8 sequences.
  EXPECT_LT(sm.step(8, 1000, 0, 0).comm, 2 * sm.step(1, 1000, 0, 0).comm);
  EXPECT_FALSE(r.comm_link.empty());
}

TEST(Serve, ChassisNcclSettingsReachTheTpAllReduces) {
  // The chassis file's `nccl:` settings are the ones the engine's NCCL runs: with
  // NCCL_P2P_DISABLE=1 the TP all-reduces stage through host memory (up through the switch's one
  // uplink and back), as `linkwise collective` predicts them for that file. A decode step of one
  // sequence on Llama 3.1 70B, TP 4: 160 all-reduces of 16,384 bytes and the logits' all-gather of
  // 128,256 · 2 bytes (Serve.AllReducesPerDecodedTokenUnderTp), each timed with the file's options.
  auto on =
      topo::build_chassis(topo::parse_chassis_spec(topo::testing::kFourUnderSwitch, "box.yaml"));
  auto off = topo::build_chassis(topo::parse_chassis_spec(
      std::string(topo::testing::kFourUnderSwitch) + "nccl:\n  NCCL_P2P_DISABLE: 1\n", "box.yaml"));
  ServeOptions o;
  o.tp = 4;
  o.concurrency = 1;
  const Model m = find_model("llama3.1-70b");
  double comm_s[2];
  int i = 0;
  for (const topo::Chassis* c : {&on, &off}) {
    comm::Communicator nccl(*c, c->gpus(), comm::nccl_options(*c));
    const double by_hand = 160 * nccl.predict(comm::Op::kAllReduce, 16'384).time_s +
                           nccl.predict(comm::Op::kAllGather, 128'256 * 2).time_s;
    comm_s[i] = ServeModel(*c, m, o).step(1, 1000, 0, 0).comm;
    EXPECT_NEAR(comm_s[i], by_hand, kTight * by_hand) << i;
    ++i;
  }
  // Host-staged, each all-reduce pays SHM's latency instead of P2P's: the step's links take longer.
  EXPECT_GT(comm_s[1], comm_s[0]);
}

TEST(Serve, PipelineStagesAndTheirSends) {
  // Llama 3.1 8B over two pipeline stages (GPU0, GPU1 of a DGX H100), two sequences: each stage
  // runs pp = 2 micro-batches of one sequence, so a token waits for both stages twice over the
  // slowest stage. The last stage is the slowest: 16 layers x 218,103,808 x 2 bytes + the output
  // projection 4096 x 128256 x 2 = 6,979,321,856 + 1,050,673,152 = 8,029,995,008 bytes, read once
  // per micro-batch: memory 2 x 8.03e9 / (3.35e12 x 0.85) = 5.64 ms. One boundary passes one
  // sequence's hidden state, 4096 x 2 = 8192 bytes, timed by the collectives model's send/recv
  // between the two GPUs.
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions o;
  o.pp = 2;
  o.gpus = {"0", "1"};
  ServeModel sm(chassis, find_model("llama3.1-8b"), o);
  StepTime t = sm.step(2, 1, 0, 0);
  EXPECT_NEAR(t.memory, 2 * 8'029'995'008.0 / (3.35e12 * kMemoryEfficiency), kModel * t.memory);
  comm::Communicator pair(chassis, {chassis.gpus()[0], chassis.gpus()[1]});
  EXPECT_NEAR(t.pp_send, pair.predict(comm::Op::kSendRecv, 8192).time_s, 1e-9);
  EXPECT_NEAR(t.comm, t.pp_send, 1e-12);  // no TP: the sends are all the link time
}

TEST(Serve, LoadTimeOf70bFromTwoDrivesBehindOneSwitchUplink) {
  // Two Samsung PM1743 (13.0 GB/s read each) behind one PCIe 5.0 x4 switch uplink: 4 lanes x 3.938
  // GB/s x 0.9045 efficiency = 14.25 GB/s, below the drives' 26 GB/s. Llama 3.1 70B in bf16 is
  // 70.55e9 parameters x 2 bytes = 141.1 GB.
  //   GPUDirect Storage: all 141.1 GB cross the uplink: 141.1 / 14.25 = 9.90 s.
  //   Page cache: the same read, then each GPU copies its 35.3 GB over its own x16 (57.0 GB/s): +
  //   0.62 s.
  const char* yaml = R"(name: load-test
nodes:
  - {id: cpu0, kind: cpu, part: epyc-9654}
  - {id: "gpu{0..3}", kind: gpu, part: h100-pcie}
  - {id: pxs0, kind: pcie_switch, part: pex89144}
  - {id: "nvme{0..1}", kind: nvme, part: samsung-pm1743}
links:
  - {a: gpu0, b: cpu0, tech: pcie5, width: 16, root_complex: 0}
  - {a: gpu1, b: cpu0, tech: pcie5, width: 16, root_complex: 1}
  - {a: gpu2, b: cpu0, tech: pcie5, width: 16, root_complex: 2}
  - {a: gpu3, b: cpu0, tech: pcie5, width: 16, root_complex: 3}
  - {a: pxs0, b: cpu0, tech: pcie5, width: 4, root_complex: 0}
  - {a: "nvme{0..1}", b: pxs0, tech: pcie5, width: 4}
)";
  auto chassis = topo::build_chassis(topo::parse_chassis_spec(yaml, "load-test.yaml"));
  auto model = find_model("llama3.1-70b");
  double bytes = 2 * model.total_params();
  EXPECT_NEAR(bytes, 141.1e9, 0.1e9);
  double uplink = 4 * 3.9384615385e9 * 0.9045;
  double x16 = 16 * 3.9384615385e9 * 0.9045;
  ServeOptions o;
  o.tp = 4;
  o.load = LoadPath::kGds;
  LoadTime gds = ServeModel(chassis, model, o).load_time();
  EXPECT_NEAR(gds.seconds, bytes / uplink, 0.005 * gds.seconds);
  EXPECT_NE(gds.bottleneck.find("pxs0->cpu0"), std::string::npos) << gds.bottleneck;
  o.load = LoadPath::kPageCache;
  LoadTime pc = ServeModel(chassis, model, o).load_time();
  EXPECT_NEAR(pc.seconds, bytes / uplink + bytes / 4 / x16, 0.005 * pc.seconds);
  EXPECT_NEAR(bytes / uplink, 9.90, 0.05);
}

TEST(Serve, ClosedLoopCurve) {
  // More users: more tokens per box, each user slower; past the KV cache, users wait for a slot.
  auto chassis = topo::load_chassis("inference-appliance");
  ServeOptions o;
  o.tp = 4;
  o.input = 8192;
  o.output = 512;
  ServeModel sm(chassis, find_model("llama3.1-70b"), o);
  ServePoint one = sm.closed_loop(1), many = sm.closed_loop(32);
  EXPECT_GT(many.output_tokens_per_s, 4 * one.output_tokens_per_s);
  EXPECT_GT(many.itl_s, one.itl_s);
  // One user: the prompt runs alone, so TTFT is its own steps (8192 tokens in one chunk of 8192)
  // and the vLLM API server's time per request (the default front end): its latency and its CPU
  // time to tokenize the prompt, nothing ahead of it in the queue.
  EXPECT_NEAR(one.ttft_s,
              sm.step(0, 0, 8192, 4096).total + kVllmApiServerLatencyS + 8192 * kVllmTokenizeCpuS,
              1e-6);
  // Little's law over the clients.
  EXPECT_NEAR(many.requests_per_s * many.e2e_s, 32, 0.01 * 32);
  int fit = sm.max_concurrency_fit();
  ServePoint full = sm.closed_loop(4 * fit);
  EXPECT_TRUE(full.kv_full);
  EXPECT_EQ(full.bound, "kv-cache");
  EXPECT_GT(full.queue_s, 0);
  ServeResult r;
  sm.sweep(sweep_concurrencies(256), &r);
  bool kv = false;
  for (const auto& b : r.bends) kv |= b.what == "KV cache full";
  EXPECT_TRUE(kv);
}

TEST(Serve, GpusByNumberRangeOrName) {
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions a, b;
  a.tp = b.tp = 2;
  a.gpus = {"2-3"};
  b.gpus = {"GPU2", "gpu3"};
  auto ra = serve(chassis, find_model("llama3.1-8b"), a),
       rb = serve(chassis, find_model("llama3.1-8b"), b);
  EXPECT_EQ(ra.gpus, 2);
  EXPECT_DOUBLE_EQ(ra.point.itl_s, rb.point.itl_s);
}

TEST(Serve, OpenLoopBelowAndAboveCapacity) {
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions o;
  o.tp = 8;
  ServeModel sm(chassis, find_model("llama3.1-70b"), o);
  ServePoint low = sm.open_loop(0.5);
  EXPECT_FALSE(low.overloaded);
  EXPECT_NEAR(low.requests_per_s, 0.5, 1e-6);
  ServePoint high = sm.open_loop(1e4);
  EXPECT_TRUE(high.overloaded);
  EXPECT_LT(high.requests_per_s, 1e4);
}

TEST(Serve, MoeReadsOnlyTheExpertsItsTokensVisit) {
  // Mixtral 8x7B, top-2 of 8: one token reads 2 of 8 experts per layer; 64 tokens visit all
  // (1 - (6/8)^64 ~ 1). Expert weights are 8 x 3·4096·14336 x 2 bytes per layer.
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions o;
  o.tp = 2;
  o.gpus = {"GPU0", "GPU1"};
  auto m = find_model("mixtral-8x7b");
  ServeModel sm(chassis, m, o);
  double expert_bytes = 32.0 * 8 * m.expert_params() * 2 / 2;  // per GPU, all layers
  double one = sm.step(1, 1, 0, 0).bytes, all = sm.step(64, 1, 0, 0).bytes;
  EXPECT_NEAR(all - one, expert_bytes * (0.75 - std::pow(0.75, 64)), 0.01 * expert_bytes);
}

TEST(Serve, PrefixCacheCutsPrefillAndSharesKv) {
  auto chassis = topo::load_chassis("inference-appliance");
  ServeOptions o;
  o.tp = 4;
  o.input = 32768;
  o.output = 256;
  o.concurrency = 8;
  o.arrivals = Arrivals::kPoisson;  // a prompt's own prefill: a tenth of the tokens to compute
  ServeModel cold(chassis, find_model("llama3.1-70b"), o);
  o.prefix_hit = 0.9;
  ServeModel warm(chassis, find_model("llama3.1-70b"), o);
  EXPECT_LT(warm.closed_loop(8).ttft_s, 0.3 * cold.closed_loop(8).ttft_s);
  EXPECT_GT(warm.max_concurrency_fit(), 3 * cold.max_concurrency_fit());
  // Phase-locked clients share their prefill steps with the others' prompts: the cut is smaller
  // (cold: wait + 5 steps of 8185 tokens; warm: wait + 1 such step, each token attending to a
  // longer prefix), but still more than half.
  o.arrivals = Arrivals::kBurst;
  ServeModel warm_b(chassis, find_model("llama3.1-70b"), o);
  o.prefix_hit = 0;
  ServeModel cold_b(chassis, find_model("llama3.1-70b"), o);
  EXPECT_LT(warm_b.closed_loop(8).ttft_s, 0.5 * cold_b.closed_loop(8).ttft_s);
}

TEST(Serve, BurstOfOneWaveIsOneStep) {
  // Mistral 7B bf16 on an RTX 4090, 4 clients of 256 + 128 tokens, started together: 4 x 256 =
  // 1024 prompt tokens fit vLLM's 2048-token budget, so the cohort's prompts run in one step and
  // all four finish and come back together to an idle engine. TTFT = one step of 1024 prompt
  // tokens (mean prefix 128) and no decodes.
  auto chassis = topo::load_chassis("workstation-rtx4090");
  ServeOptions o;
  o.input = 256;
  o.output = 128;
  o.concurrency = 4;
  o.front_end = FrontEnd::kOffline;  // the engine alone
  ServeModel sm(chassis, find_model("mistral-7b"), o);
  double t = sm.step(0, 256 + 64, 1024, 128).total;
  EXPECT_NEAR(sm.closed_loop(4).ttft_s, t, 1e-9 * t);
}

TEST(Serve, BurstTrainWithoutChunking) {
  // Llama 3.3 70B fp8 TP2 on two H100 SXM, 5000 + 500 tokens, 5 clients started together, whole
  // prompts per step (no chunked prefill): 8192 - 4 decoding >= 5000 but < 2 x 5000, so each train
  // step carries one prompt beside the 4 other sequences decoding. The first prompt of the train
  // comes back during a decode step, the other 4 during the step of the prompt ahead:
  // TTFT = (1/5) t_decode + (4/5) t_train + t_train, t_train = step(4 decoding, 5000 tokens).
  // With async scheduling the engine had also chosen the step after that one before the request
  // came back: the wait doubles, TTFT = 2 ((1/5) t_decode + (4/5) t_train) + t_train.
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions o = nim_70b_tp2_5000_500(FrontEnd::kOffline);  // the engine alone
  o.concurrency = 5;
  ServeModel sm(chassis, find_model("llama3.1-70b"), o);
  double ctx_d = 5000 + 250;
  double train = sm.step(4, ctx_d, 5000, 2500).total, dec = sm.step(5, ctx_d, 0, 0).total;
  double want = dec / 5 + 0.8 * train + train;
  // D (decoding in the steady state) is a little under 5: 1% covers the decode step's share.
  EXPECT_NEAR(sm.closed_loop(5).ttft_s, want, 0.01 * want);
  o.async_scheduling = true;
  ServeModel ahead(chassis, find_model("llama3.1-70b"), o);
  want = 2 * (dec / 5 + 0.8 * train) + train;
  EXPECT_NEAR(ahead.closed_loop(5).ttft_s, want, 0.01 * want);
}

TEST(Serve, TrainFollowersAbsorbTheFrontEndsTime) {
  // The same train behind vLLM's API server: 4 ms of latency and 5000 x 2 us of tokenization, 14
  // ms a request. A follower sends its next request d_out after the step ahead starts, waits the
  // rest of it (t_train - d_out, less its way in and its CPU time, which pass meanwhile), runs its
  // own step, and its first token reaches it d_out later: 2 t_train from its send whatever the 14
  // ms. The first of the train comes back in a decode step of ~18 ms and waits for its end, which
  // the 14 ms also fit in. So TTFT is the engine's alone, to the rounding of a slightly different
  // steady state (the clients' cycle, hence the decoding count D, is the same).
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions o = nim_70b_tp2_5000_500(FrontEnd::kOffline);
  ServeModel offline(chassis, find_model("llama3.1-70b"), o);
  o.front_end = FrontEnd::kVllmApiServer;
  ServeModel vllm(chassis, find_model("llama3.1-70b"), o);
  const double fe = kVllmApiServerLatencyS + 5000 * kVllmTokenizeCpuS;
  const double dec = vllm.step(5, 5250, 0, 0).total;
  ASSERT_LT(fe, dec);
  EXPECT_NEAR(vllm.closed_loop(5).ttft_s, offline.closed_loop(5).ttft_s, kTight * dec);
  // One client is no train: it pays the front end in full.
  EXPECT_NEAR(vllm.closed_loop(1).ttft_s - offline.closed_loop(1).ttft_s, fe, 1e-9);
}

TEST(Serve, PastTheKvCacheTtftIsTheClientsCycleLessTheDecode) {
  // The NIM 5000/500 run at 100 clients (Llama 3.3 70B fp8 TP2 on two H100 SXM, whole-life
  // admission: 5000 + 500 tokens of KV cache a request). The fit: the KV tokens a replica holds
  // over 5500 tokens a request, floored (84 here). The clients beyond it wait for a slot, and
  // Little's law over all N clients gives each client's cycle, from sending a request to its last
  // token, as N / X (X requests/s): TTFT = N / X - (O - 1) * ITL. So TTFT past the fit is the
  // difference of two long times (55.1 s and 45.5 s at 100 clients, 9.6 s left), and an error of
  // 1% in X or in ITL moves it by (N / X) / TTFT = 5.7% or (O - 1) * ITL / TTFT = 4.7%
  // (docs/VALIDATION.md, "Serving": the row's +20% is -1.1% of throughput and -1.8% of ITL).
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions o = nim_70b_tp2_5000_500(FrontEnd::kNim);
  o.kv_admission = KvAdmission::kWholeLife;
  ServeModel sm(chassis, find_model("llama3.1-70b"), o);
  EXPECT_EQ(sm.max_concurrency_fit(),
            static_cast<int>(std::floor(sm.memory().kv_tokens / (5000 + 500))));
  ServePoint p = sm.closed_loop(100);
  ASSERT_TRUE(p.kv_full);
  const double cycle = 100 / p.requests_per_s;
  EXPECT_NEAR(p.e2e_s, cycle, kTight * cycle);
  EXPECT_NEAR(p.ttft_s, cycle - 499 * p.itl_s, kTight * p.ttft_s);
  EXPECT_NEAR(cycle / p.ttft_s, 5.7, 0.3);
  EXPECT_NEAR(499 * p.itl_s / p.ttft_s, 4.7, 0.3);
}

TEST(Serve, FirstCohortOfAFiniteBenchmark) {
  // Mistral 7B bf16 on an RTX 4090 (vLLM budget 2048 tokens), 256 + 128 tokens, poisson arrivals.
  // A finite benchmark of R requests starts its c clients together, so their c prompts wait at
  // once; when R = c every request is in that cohort and the mean TTFT is the cohort's.
  auto chassis = topo::load_chassis("workstation-rtx4090");
  auto model = find_model("mistral-7b");
  ServeOptions o;
  o.input = 256;
  o.output = 128;
  o.arrivals = Arrivals::kPoisson;
  o.front_end = FrontEnd::kOffline;  // the engine alone
  const double ctx_d = 256 + 64, ctx_p = 128;
  {
    // 4 clients: 4 x 256 = 1024 tokens fit one step with no decodes: TTFT = that step.
    o.requests = 4;
    ServeModel sm(chassis, model, o);
    double t = sm.step(0, ctx_d, 1024, ctx_p).total;
    EXPECT_NEAR(sm.closed_loop(4).ttft_s, t, 1e-9 * t);
  }
  // 16 clients: 4096 prompt tokens. Step 1: 2048 tokens, prompts 1-8 done (t1). Step 2: 8
  // decoding, 2040 tokens left: prompts 9-15 (1792) and 248 of prompt 16 (t2). Step 3: 15
  // decoding and the last 8 tokens of prompt 16 (t3). Mean TTFT = (8 t1 + 7 (t1 + t2) + (t1 + t2
  // + t3)) / 16.
  o.requests = 16;
  ServeModel sm(chassis, model, o);
  double t1 = sm.step(0, ctx_d, 2048, ctx_p).total, t2 = sm.step(8, ctx_d, 2040, ctx_p).total,
         t3 = sm.step(15, ctx_d, 8, ctx_p).total;
  double first = (8 * t1 + 7 * (t1 + t2) + (t1 + t2 + t3)) / 16;
  ServePoint fin = sm.closed_loop(16);
  EXPECT_NEAR(fin.ttft_s, first, 1e-9 * first);
  // The run is longer by the cohort's extra wait d = first - steady TTFT: rate R / (R/X + d).
  o.requests = 0;
  ServePoint steady = ServeModel(chassis, model, o).closed_loop(16);
  double rate = 16 / (16 / steady.requests_per_s + (first - steady.ttft_s));
  EXPECT_NEAR(fin.requests_per_s, rate, 1e-9 * rate);
  EXPECT_LT(fin.requests_per_s, steady.requests_per_s);
  // A long run averages the cohort out: the mean moves by 16/R of d.
  o.requests = 1000000;
  EXPECT_NEAR(ServeModel(chassis, model, o).closed_loop(16).ttft_s,
              steady.ttft_s + 16e-6 * (first - steady.ttft_s), 1e-9 * steady.ttft_s);
}

TEST(Serve, EngineDefaultsByGpu) {
  // vLLM V1's OpenAI server: 8192 tokens and 1024 sequences per step on GPUs of 70 GiB or more,
  // except A100s; 2048 and 256 elsewhere (vllm/engine/arg_utils.py).
  const double GiB = 1024.0 * 1024 * 1024;
  auto h100 = detail::engine_figures(80 * GiB, "h100-sxm");
  EXPECT_EQ(h100.max_batched_tokens, 8192);
  EXPECT_EQ(h100.max_seqs, 1024);
  auto a100 = detail::engine_figures(80 * GiB, "a100-sxm");
  EXPECT_EQ(a100.max_batched_tokens, 2048);
  EXPECT_EQ(a100.max_seqs, 256);
  auto rtx = detail::engine_figures(24 * GiB, "rtx-4090");
  EXPECT_EQ(rtx.max_batched_tokens, 2048);
  EXPECT_EQ(rtx.max_seqs, 256);
}

// The GPUStack v0.9.2 rows of Qwen3 8B with 1000 ShareGPT prompts released at once (217 tokens on
// average) against the least mean TTFT any engine could give them: every prompt's matmuls at the
// GPU's dense 16-bit peak, one after another in arrival order (chunking or batching prompts does
// not lower the work ahead of the k-th), so the k-th first token comes no sooner than k prompts'
// work and the mean no sooner than (N + 1)/2 of one. Hand derivation: Qwen3 8B's decoder holds 36
// layers of 4096 x 6144 (QKV) + 4096 x 4096 (output) + 3 x 4096 x 12288 (MLP) = 193.0M matmul
// weights, 6.95G in all: 13.9 GFLOP a prompt token, 3.02 TFLOP a 217-token prompt. A100 SXM (312
// TFLOP/s): 9.67 ms a prompt, mean >= 500.5 x 9.67 = 4.84 s against the page's 3.41 s; H100 SXM
// (989): 1.53 s against 5.17 s; RTX 4090 (165.2): 9.14 s against 15.39 s. Only the A100 row lies
// below its floor: no engine at the stated lengths reaches it (docs/VALIDATION.md, "The 'at once'
// rows against their releases and the client").
TEST(Serve, AtOnceRowsAgainstThePrefillFloor) {
  auto model = find_model("qwen3-8b");
  const double flops_per_token = 2 * model.layers * (model.layer_params() - 2.0 * model.hidden);
  EXPECT_NEAR(flops_per_token, 13.9e9, 0.01 * 13.9e9);
  int rows = 0;
  for (const auto& c : serve_validation_cases()) {
    if (c.model != "qwen3-8b" || c.options.requests != 1000) continue;
    ++rows;
    auto chassis = topo::load_chassis(c.chassis);
    const GpuSpec g = gpu_spec(chassis.node(chassis.gpus().front()), Precision::kBf16);
    const double n = c.options.requests;
    const double floor_s = (n + 1) / 2 * c.options.input * flops_per_token / g.peak_flops;
    if (c.chassis == "dgx-a100") {
      EXPECT_NEAR(floor_s, 4.84, 0.01 * 4.84) << c.name;
      EXPECT_GT(floor_s, 1.4 * c.ttft_s) << c.name;  // 3.41 s: 30% below the floor
    } else {
      EXPECT_LT(floor_s, 0.6 * c.ttft_s) << c.name;  // 1.53 / 5.17, 9.14 / 15.39
    }
  }
  EXPECT_EQ(rows, 3);
}

TEST(Serve, KvOffloadRunsMoreSequencesOverPcie) {
  // Llama 3.1 70B bf16 on two H100 PCIe: 2 requests of 8192 + 512 tokens fit. With offload, 32 run
  // at once; the 30 beyond GPU memory bring their KV cache, 30 x (8192 + 256) tokens x 160 KiB per
  // GPU = 41.5 GB, over the GPU's PCIe 5.0 x16 (57.0 GB/s) every step: 0.73 s.
  auto chassis = topo::load_chassis("inference-appliance-2gpu");
  ServeOptions o;
  o.tp = 2;
  o.input = 8192;
  o.output = 512;
  ServeModel plain(chassis, find_model("llama3.1-70b"), o);
  ASSERT_EQ(plain.max_concurrency_fit(), 2);
  ServePoint waiting = plain.closed_loop(32);
  EXPECT_TRUE(waiting.kv_full);
  o.kv_offload = true;
  ServeModel off(chassis, find_model("llama3.1-70b"), o);
  ServePoint p = off.closed_loop(32);
  EXPECT_DOUBLE_EQ(p.running, 32);
  EXPECT_FALSE(p.kv_full);
  double bytes = 30 * (8192 + 256) * 163'840.0;
  EXPECT_NEAR(p.decode.offload, bytes / (16 * 3.9384615385e9 * 0.9045), 0.01 * p.decode.offload);
  EXPECT_EQ(p.bound, "offload");
}

TEST(Serve, BadInput) {
  auto chassis = topo::load_chassis("inference-appliance");
  auto expect_error = [&](const std::string& model, ServeOptions o, const std::string& text) {
    try {
      ServeModel sm(chassis, find_model(model), o);
      ADD_FAILURE() << "no error for " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  ServeOptions o;
  o.input = 32000;
  o.output = 1000;
  expect_error("qwen2.5-coder-32b", o,
               "--input 32000 + --output 1000 = 33000 tokens exceeds the 32768-token context of "
               "qwen2.5-coder-32b");
  o = {};
  o.tp = 3;
  expect_error("qwen2.5-coder-32b", o,
               "--tp 3 does not divide the 40 attention heads of qwen2.5-coder-32b");
  o = {};
  o.gpus = {"GPU0"};
  expect_error("llama3.1-70b", o,
               "llama3.1-70b does not fit on h100-pcie with tp 1 x pp 1 in bf16");
  o = {};
  o.tp = 8;
  expect_error("llama3.1-70b", o, "--tp 8 x --pp 1 needs 8 GPUs; inference-appliance has 4");
  o = {};
  o.gpus = {"GPU9"};
  expect_error("llama3.1-8b", o, "--gpus: 'GPU9' is not a GPU of inference-appliance");
  o = {};
  o.gpus = {"0-1", "1"};
  expect_error("llama3.1-8b", o, "--gpus: 'GPU1' is listed twice");
  o = {};
  o.gpus = {"3-1"};
  expect_error("llama3.1-8b", o, "--gpus: range '3-1' runs backwards");
  o = {};
  o.prefix_hit = 1.5;
  expect_error("llama3.1-8b", o, "--prefix-cache must be a hit fraction in [0, 1), not 1.5");
  o = {};
  o.expert_parallel = true;
  expect_error("llama3.1-8b", o, "--expert-parallel needs a mixture-of-experts model");
}

TEST(Serve, ReplayOfOneTokenRequestsIsOnePromptStepEach) {
  // One client, three requests of one output token: each is one step of its P = 128 prompt tokens
  // and no decodes (the first token comes with the prompt), at mean prefix P/2 = 64. Hand
  // derivation: TTFT = step(0, 0, 128, 64) for every request, the run 3 such steps, 3 tokens in it.
  // Through vLLM's API server (the default front end) each request reaches the engine after its
  // CPU time there, c = 128 kVllmTokenizeCpuS, and the latency f = kVllmApiServerLatencyS, the
  // engine idling meanwhile; its token then takes the idle process k = kVllmApiServerDetokS +
  // kVllmApiServerChunkS before it leaves, and the client sends the next request as it arrives:
  // every request TTFT = E2E = f + c + step + k, the run 3 (f + c + step + k).
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions o = one_gpu();
  o.output = 1;
  ReplayOptions r;
  r.concurrency = 1;
  r.requests = 3;
  {
    ServeModel sm(chassis, find_model("llama3.1-8b"), o);
    auto res = sm.replay(r);
    double t = sm.step(0, 0, 128, 64).total + kVllmApiServerLatencyS + 128 * kVllmTokenizeCpuS +
               kVllmApiServerDetokS + kVllmApiServerChunkS;
    EXPECT_NEAR(res.ttft_mean_s, t, kTight * t);
    EXPECT_NEAR(res.duration_s, 3 * t, kTight * t);
    EXPECT_NEAR(res.e2e_mean_s, t, kTight * t);
  }
  o.front_end = FrontEnd::kOffline;  // the engine alone
  ServeModel sm(chassis, find_model("llama3.1-8b"), o);
  auto res = sm.replay(r);
  double t = sm.step(0, 0, 128, 64).total;
  EXPECT_NEAR(res.ttft_mean_s, t, kTight * t);
  EXPECT_NEAR(res.ttft_p99_s, t, kTight * t);
  EXPECT_NEAR(res.duration_s, 3 * t, kTight * t);
  EXPECT_NEAR(res.output_tokens_per_s, 3 / (3 * t), kTight / t);
  EXPECT_EQ(res.steps, 3);
  EXPECT_DOUBLE_EQ(res.mean_output, 1);
}

TEST(Serve, FrontEndAddsItsTimeToTtftAndE2e) {
  // One client on an idle engine: the request's life is the engine's plus the front end's time
  // (kVllmApiServerLatencyS through vLLM's API server, none offline or through NIM's front end),
  // in TTFT and in E2E alike; ITL is the engine's.
  auto chassis = topo::load_chassis("dgx-h100");
  ServeRunOptions ro;
  ro.gpus = "0";
  ro.input = 128;
  ro.output = 128;
  ServeOptions o = make_serve_options(ro);
  EXPECT_EQ(o.front_end, FrontEnd::kVllmApiServer);
  ServePoint vllm = ServeModel(chassis, find_model("llama3.1-8b"), o).closed_loop(1);
  ro.front_end = "offline";
  o = make_serve_options(ro);
  ServePoint offline = ServeModel(chassis, find_model("llama3.1-8b"), o).closed_loop(1);
  const double front = kVllmApiServerLatencyS + 128 * kVllmTokenizeCpuS;  // nothing queued ahead
  EXPECT_NEAR(vllm.ttft_s - offline.ttft_s, front, 1e-9);
  // E2E and ITL: the same up to the mean step's share of prompt steps, which the longer cycle
  // (fewer requests/s) moves by ~1e-6 of a step (~1e-3 of the front end's time).
  EXPECT_NEAR(vllm.e2e_s - offline.e2e_s, front, 2e-3 * front);
  EXPECT_NEAR(vllm.itl_s, offline.itl_s, 1e-4 * offline.itl_s);
  EXPECT_LT(vllm.requests_per_s, offline.requests_per_s);
  ro.front_end = "nim";
  EXPECT_EQ(make_serve_options(ro).front_end, FrontEnd::kNim);
  ro.front_end = "http";
  try {
    make_serve_options(ro);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "--front-end must be vllm, offline, nim, sglang or trtllm-serve, not 'http'"),
              std::string::npos)
        << e.what();
  }
}

TEST(Serve, TokenizerBatchWaitIsALatencyOfTheApiServer) {
  // vLLM's AsyncMicrobatchTokenizer (vllm-project/vllm PR #19334) holds a lone prompt for its whole
  // batch window, w = kVllmTokenizerBatchWaitS = 2 ms, before tokenizing it. One client on an idle
  // engine: the request reaches the engine w later, so TTFT grows by w exactly (the same
  // arithmetic: kExact) and E2E by w up to the mean step's mix of prompt and decode steps, which
  // the longer cycle moves by ~1e-6 of a step (the bound of FrontEndAddsItsTimeToTtftAndE2e, 2e-3
  // of w); ITL stays the engine's. A replayed run of 3 one-token requests: each TTFT and E2E is
  // f + c + w + step + k (ReplayOfOneTokenRequestsIsOnePromptStepEach's derivation with the
  // latency f + w), w more than without. Other front ends have no such wait.
  constexpr double kExact = 1e-9;  // s: only rounding
  const double w = kVllmTokenizerBatchWaitS;
  EXPECT_DOUBLE_EQ(w, 2e-3);  // batch_wait_timeout_s = 0.002 (vllm/utils/async_utils.py)
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions o = one_gpu();
  ServePoint base = ServeModel(chassis, find_model("llama3.1-8b"), o).closed_loop(1);
  o.tokenizer_batch_wait_s = w;
  EXPECT_NEAR(detail::front_end_latency_s(o), kVllmApiServerLatencyS + w, kExact);
  ServePoint waited = ServeModel(chassis, find_model("llama3.1-8b"), o).closed_loop(1);
  EXPECT_NEAR(waited.ttft_s - base.ttft_s, w, kExact);
  EXPECT_NEAR(waited.e2e_s - base.e2e_s, w, 2e-3 * w);
  EXPECT_NEAR(waited.itl_s, base.itl_s, 1e-4 * base.itl_s);
  EXPECT_LT(waited.requests_per_s, base.requests_per_s);
  // The replay: one client, three one-token requests.
  o.output = 1;
  ReplayOptions r;
  r.concurrency = 1;
  r.requests = 3;
  ServeModel sm(chassis, find_model("llama3.1-8b"), o);
  auto res = sm.replay(r);
  double t = sm.step(0, 0, 128, 64).total + kVllmApiServerLatencyS + w + 128 * kVllmTokenizeCpuS +
             kVllmApiServerDetokS + kVllmApiServerChunkS;
  EXPECT_NEAR(res.ttft_mean_s, t, kTight * t);
  EXPECT_NEAR(res.e2e_mean_s, t, kTight * t);
  // Offline (the engine in-process) and NIM: no API server, no wait.
  o.front_end = FrontEnd::kOffline;
  EXPECT_EQ(detail::front_end_latency_s(o), 0);
  o.front_end = FrontEnd::kNim;
  EXPECT_EQ(detail::front_end_latency_s(o), 0);
  o.front_end = FrontEnd::kTrtllmServe;
  EXPECT_EQ(detail::front_end_latency_s(o), 0);
  // SGLang: 9.54 ms median TTFT with a 2.632 ms mock forward (tt-inference-server issue #3560):
  // 6.9 ms a request, no CPU time queued on a process of the model's.
  o.front_end = FrontEnd::kSglang;
  EXPECT_NEAR(detail::front_end_latency_s(o), 9.54e-3 - 2.632e-3, 0.01e-3);
  EXPECT_EQ(detail::front_end_request_cpu_s(o), 0);
}

TEST(Serve, ItlExcludesTheSequencesOwnPrompt) {
  // A sequence's inter-token gaps start at its first token, which its own (last) prompt step
  // yields: only the other clients' prompts fall between them. Llama 3.1 8B on one H100, 128-token
  // prompts and outputs, the engine alone (offline: no chunk merging), poisson arrivals; mean
  // context of a decoding sequence c_d = 128 + 128/2 = 192, of a prompt token 64.
  //  - One client: every gap is a decode step of its one sequence, ITL = step(1, 192, 0, 0); its
  //    prompt step is in TTFT alone.
  //  - Two clients, X requests/s in all: the other's prompts come at X/2, one step each (128
  //    tokens, within the budget) with the D/2 sequences decoding beside it, t_p = step(D/2, 192,
  //    128, 64), rho_o = X/2 · t_p; each is a gap of its own (a token for every decoding sequence):
  //    ITL = 1 / ((1 - rho_o) / t_dec + X/2), t_dec = step(D, 192, 0, 0), D = X · 127 · ITL
  //    (Little's law over the decode phase).
  //  - vLLM V0's prompt-only steps (prompt_only_steps, chunked prefill off): the prompt step holds
  //    no decodes, t_p = step(0, 192, 128, 64), and the decodes wait through it: ITL = t_dec / (1 -
  //    rho_o).
  // kTight: the solver's fixed points converge to 1e-9; the rest is the same arithmetic.
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions o = one_gpu();
  o.front_end = FrontEnd::kOffline;
  o.arrivals = Arrivals::kPoisson;
  ServeModel sm(chassis, find_model("llama3.1-8b"), o);
  const double t1 = sm.step(1, 192, 0, 0).total;
  EXPECT_NEAR(sm.closed_loop(1).itl_s, t1, kTight * t1);
  ServePoint two = sm.closed_loop(2);
  double X = two.requests_per_s, itl = two.itl_s, D = X * 127 * itl;
  double t_dec = sm.step(D, 192, 0, 0).total, t_p = sm.step(D / 2, 192, 128, 64).total;
  double want = 1 / ((1 - X / 2 * t_p) / t_dec + X / 2);
  EXPECT_NEAR(itl, want, kTight * want);
  EXPECT_GT(itl, t1);  // the other client's prompts stretch the gaps
  o.chunked_prefill = false;
  o.prompt_only_steps = true;
  ServeModel v0(chassis, find_model("llama3.1-8b"), o);
  EXPECT_NEAR(v0.closed_loop(1).itl_s, t1, kTight * t1);  // no other prompts: the same
  ServePoint two_v0 = v0.closed_loop(2);
  X = two_v0.requests_per_s;
  itl = two_v0.itl_s;
  D = X * 127 * itl;
  t_dec = v0.step(D, 192, 0, 0).total;
  t_p = v0.step(0, 192, 128, 64).total;
  want = t_dec / (1 - X / 2 * t_p);
  EXPECT_NEAR(itl, want, kTight * want);
  EXPECT_GT(itl, two.itl_s);  // the decodes wait through the prompt steps
}

TEST(Serve, AsyncSchedulingDelaysARequestThatReachesABusyEngine) {
  // Two clients, three requests of 128 prompt tokens and 2 output tokens, a 128-token budget
  // (the engine alone). Without async scheduling: step 1 runs request 1's prompt (s1); step 2 its
  // decode (it ends at its cap) beside 127 tokens of request 2 (s2); client 1 sends request 3,
  // and step 3 runs request 2's last prompt token and 127 of request 3's (s3); step 4 request 2's
  // decode and request 3's last token (s4). TTFTs: s1, s1 + s2 + s3, s3 + s4.
  // With async scheduling step 3 was chosen when step 2 started, before request 3 arrived: it
  // holds request 2's last token alone (s3'); step 4 request 2's decode and 127 of request 3's
  // (s4'); step 5 its last token (s5'). TTFTs: s1, s1 + s2 + s3', s3' + s4' + s5'. Request 1 ended
  // at its cap, which the scheduler knew: it is not in step 3.
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions o = one_gpu();
  o.input = 128;
  o.output = 2;
  o.max_batched_tokens = 128;
  o.front_end = FrontEnd::kOffline;
  ReplayOptions r;
  r.concurrency = 2;
  r.requests = 3;
  o.async_scheduling = false;
  ServeModel sync(chassis, find_model("llama3.1-8b"), o);
  double s1 = sync.step(0, 0, 128, 64).total, s2 = sync.step(1, 129, 127, 63.5).total;
  double s3 = sync.step(0, 0, 128, (127.5 + 127 * 63.5) / 128).total;
  double s4 = sync.step(1, 129, 1, 127.5).total;
  double want = (s1 + (s1 + s2 + s3) + (s3 + s4)) / 3;
  EXPECT_NEAR(sync.replay(r).ttft_mean_s, want, kTight * want);
  o.async_scheduling = true;
  ServeModel ahead(chassis, find_model("llama3.1-8b"), o);
  double a3 = ahead.step(0, 0, 1, 127.5).total, a4 = ahead.step(1, 129, 127, 63.5).total;
  double a5 = ahead.step(0, 0, 1, 127.5).total;
  want = (s1 + (s1 + s2 + a3) + (a3 + a4 + a5)) / 3;
  auto res = ahead.replay(r);
  EXPECT_NEAR(res.ttft_mean_s, want, kTight * want);
  EXPECT_EQ(res.steps, 6);
}

TEST(Serve, AsyncSchedulingAddsAStepToAPoissonArrivalsWait) {
  // Independent arrivals at a busy engine: the prompt also waits for the step the engine chose
  // before it arrived, a mean step (the ITL): TTFT with async scheduling = TTFT without + ITL,
  // at the same rate (the open loop's steps barely depend on it: the longer lives move the
  // sequences in flight, not the decoding count of Little's law, 1e-6 of a step).
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions o = one_gpu();
  o.async_scheduling = false;
  ServePoint sync = ServeModel(chassis, find_model("llama3.1-8b"), o).open_loop(4);
  o.async_scheduling = true;
  ServePoint ahead = ServeModel(chassis, find_model("llama3.1-8b"), o).open_loop(4);
  ASSERT_GT(sync.running, 2);  // others decode when a request arrives
  EXPECT_NEAR(ahead.ttft_s - sync.ttft_s, sync.itl_s, 1e-6);
  EXPECT_NEAR(ahead.itl_s, sync.itl_s, 1e-6 * sync.itl_s);
}

TEST(Serve, V0AsyncOutputProcessingAddsTheNextStepsHostTime) {
  // vLLM V0's async output processing sends a step's tokens during the next step, once that step
  // is scheduled and launched: each token, the first included, leaves the engine the next step's
  // host time later. Hand derivation (Poisson arrivals at 4/s, the V0 engine without async
  // scheduling): TTFT and E2E each rise by the engine's host time per step, kStepOverheadS =
  // 0.5 ms; the step times and so the ITL do not move, nor the rate (an open loop). Tolerance: the
  // longer lives hold more sequences in flight, which moves the decoding count of Little's law
  // by ~1e-7 of a step.
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions o = one_gpu();
  o.async_scheduling = false;
  ServePoint v1 = ServeModel(chassis, find_model("llama3.1-8b"), o).open_loop(4);
  o.async_output_processing = true;
  ServePoint v0 = ServeModel(chassis, find_model("llama3.1-8b"), o).open_loop(4);
  EXPECT_NEAR(v0.ttft_s - v1.ttft_s, 0.5e-3, 1e-6);
  EXPECT_NEAR(v0.e2e_s - v1.e2e_s, 0.5e-3, 1e-6);
  EXPECT_NEAR(v0.itl_s, v1.itl_s, 1e-6 * v1.itl_s);
  EXPECT_NEAR(v0.output_tokens_per_s, v1.output_tokens_per_s, 1e-6 * v1.output_tokens_per_s);
}

TEST(Serve, ReplayOfACohortThatFitsOneStep) {
  // Two clients, two requests of 3 output tokens, 128-token prompts: both prompts fit one step of
  // the 8192-token budget (256 tokens at mean prefix 64) and end it with their first token, so both
  // TTFTs are that step. Then two decode steps of 2 sequences, at contexts 128 + 1 and 128 + 2.
  // Hand derivation: duration = step(0, 0, 256, 64) + step(2, 129, 0, 0) + step(2, 130, 0, 0),
  // 6 tokens.
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions o = one_gpu();
  o.output = 3;
  o.front_end = FrontEnd::kOffline;  // the engine alone
  ServeModel sm(chassis, find_model("llama3.1-8b"), o);
  ReplayOptions r;
  r.concurrency = 2;
  r.requests = 2;
  auto res = sm.replay(r);
  double t1 = sm.step(0, 0, 256, 64).total;
  double d = t1 + sm.step(2, 129, 0, 0).total + sm.step(2, 130, 0, 0).total;
  EXPECT_NEAR(res.ttft_mean_s, t1, kTight * t1);
  EXPECT_NEAR(res.ttft_median_s, t1, kTight * t1);
  EXPECT_NEAR(res.duration_s, d, kTight * d);
  EXPECT_NEAR(res.output_tokens_per_s, 6 / d, kTight * 6 / d);
  EXPECT_EQ(res.steps, 3);
  // Each request's two gaps after its first token are the two decode steps; it ends with the run.
  EXPECT_NEAR(res.itl_mean_s, (d - t1) / 2, kTight * d);
  EXPECT_NEAR(res.e2e_mean_s, d, kTight * d);
  // The batch it ran: both sequences in each of the three steps (the prompts' step too), the
  // engine busy throughout: busy d, sequences x time 2d, peak 2.
  EXPECT_NEAR(res.busy_s, d, kTight * d);
  EXPECT_NEAR(res.batch_seq_s, 2 * d, kTight * d);
  EXPECT_EQ(res.batch_peak, 2);
}

TEST(Serve, ReplayOfRequestsThatEndAtEos) {
  // Outputs capped at 128 that end after each token with the same chance, mean 100: the chance is
  // p with (1 - (1-p)^128) / p = 100 (p ~ 0.004). Over 3000 requests the drawn mean is within 2%
  // of 100 (a geometric length capped at 128 has a standard deviation under 40 tokens: the mean of
  // 3000 strays ~0.7 tokens), and a fixed seed replays the same run.
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions o = one_gpu();
  o.output = 128;
  ServeModel sm(chassis, find_model("llama3.1-8b"), o);
  ReplayOptions r;
  r.concurrency = 16;
  r.requests = 3000;
  r.mean_output = 100;
  auto a = sm.replay(r), b = sm.replay(r);
  EXPECT_NEAR(a.mean_output, 100, 2);
  EXPECT_EQ(a.duration_s, b.duration_s);
  r.mean_output = 0;  // every request to its cap
  EXPECT_DOUBLE_EQ(sm.replay(r).mean_output, 128);
  r.mean_output = 0.5;
  EXPECT_THROW(sm.replay(r), InputError);
}

TEST(Serve, AdmissionByPromptRunsMoreSequencesAndPreempts) {
  // KvAdmission: TensorRT-LLM admits a request when its whole life fits, input + output tokens of
  // KV cache; vLLM V1 when its prompt does, so with Poisson arrivals (requests spread over their
  // lives) each holds input + output/2 on average: Qwen3 8B on an RTX 4090, 217 in / 202 out, K
  // tokens of KV cache: floor(K / 419) against floor(K / 318) sequences at once. A burst closed
  // loop's clients stay in step and reach their ends together: floor(K / 419) again.
  auto chassis = topo::load_chassis("workstation-rtx4090");
  ServeOptions o;
  o.input = 217;
  o.output = 202;
  ServeModel whole(chassis, find_model("qwen3-8b"), o);
  o.kv_admission = KvAdmission::kPrompt;
  ServeModel prompt(chassis, find_model("qwen3-8b"), o);
  o.arrivals = Arrivals::kPoisson;
  ServeModel spread(chassis, find_model("qwen3-8b"), o);
  const double K = whole.memory().kv_tokens;
  EXPECT_EQ(whole.max_concurrency_fit(), static_cast<int>(std::floor(K / 419)));
  EXPECT_EQ(spread.max_concurrency_fit(), static_cast<int>(std::floor(K / 318)));
  EXPECT_EQ(prompt.max_concurrency_fit(), whole.max_concurrency_fit());
  // Replayed, 200 requests released together grow in step: K / 16 blocks of 16 tokens hold
  // floor(K/16) / 14 of them at their first token (a 217-token prompt and its first decode take 14
  // blocks), more than the floor(K/16) / 27 (419 tokens, 27 blocks) that fit at their end, so the
  // scheduler preempts (vllm/v1/core/sched/scheduler.py) and recomputes them later; every request
  // still ends with its 202 tokens, none twice, and the first token of each is counted once.
  // Admitted for whole lives nothing is preempted.
  ReplayOptions ro;
  ro.concurrency = 200;
  ro.requests = 200;
  ReplayResult rp = prompt.replay(ro), rw = whole.replay(ro);
  EXPECT_GT(rp.preemptions, 0);
  EXPECT_EQ(rw.preemptions, 0);
  EXPECT_NEAR(rp.mean_output, 202, kTight);
  EXPECT_NEAR(rw.mean_output, 202, kTight);
  EXPECT_EQ(rp.first_tokens, 200);
  EXPECT_EQ(rw.first_tokens, 200);
  // Admitted sooner, the requests by prompt see their first token sooner on average; the run is
  // not shorter for it: the recomputed prompts and tokens are work the whole-life run never does.
  EXPECT_LT(rp.ttft_mean_s, rw.ttft_mean_s);
  auto bad = [&] { parse_kv_admission("evict"); };
  EXPECT_THROW(bad(), InputError);
}

TEST(Serve, ReplayWholeLivesOfSpreadLengths) {
  // Admitted for whole lives (TensorRT-LLM) with lengths that differ, as a client sending each
  // request its own max_tokens: each request holds its 217-token prompt and its own drawn length
  // (mean 202, capped at 2048 - 217 = 1831) from admission to its end. Qwen3 8B on an RTX 4090, K
  // tokens of KV cache, 3000 requests at once: with one cap for all, floor(K / 2048) would run at
  // once; held one by one, more do, never more than the shortest lives allow, floor(K / 218);
  // nothing is preempted, every first token is counted once, and the drawn outputs average 202
  // within 5 % (a geometric length of mean ~200 has a standard deviation near 200: the mean of
  // 3000 strays ~4 tokens).
  auto chassis = topo::load_chassis("workstation-rtx4090");
  ServeOptions o;
  o.input = 217;
  o.output = 2048 - 217;
  o.requests = 3000;
  ServeModel sm(chassis, find_model("qwen3-8b"), o);
  const double K = sm.memory().kv_tokens;
  ReplayOptions ro;
  ro.concurrency = 3000;
  ro.requests = 3000;
  ro.mean_output = 202;
  ReplayResult r = sm.replay(ro);
  EXPECT_GT(r.batch_peak, static_cast<int>(std::floor(K / 2048)));
  EXPECT_LE(r.batch_peak, static_cast<int>(std::floor(K / 218)));
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_EQ(r.first_tokens, 3000);
  EXPECT_NEAR(r.mean_output, 202, 0.05 * 202);
}

TEST(Serve, ReplayByPromptOfPromptsThatFillTheCache) {
  // Qwen3 8B on an RTX 4090 holds one 30000-token prompt and its 64 output tokens in its KV cache,
  // not two. With chunked prefill vLLM V1 admits the next request's first chunk into the blocks
  // left, and the running request's decodes then preempt it (the latest admitted) again and again;
  // every request still ends with its 64 tokens. Without chunking a waiting prompt is admitted only
  // when all of its blocks fit: one at a time, nothing preempted.
  auto chassis = topo::load_chassis("workstation-rtx4090");
  ServeOptions o;
  o.input = 30000;
  o.output = 64;
  o.kv_admission = KvAdmission::kPrompt;
  ServeModel chunked(chassis, find_model("qwen3-8b"), o);
  const double K = chunked.memory().kv_tokens;
  ASSERT_GE(K, 30064);
  ASSERT_LT(K, 2 * 30000);
  o.chunked_prefill = false;
  ServeModel whole(chassis, find_model("qwen3-8b"), o);
  ReplayOptions ro;
  ro.concurrency = 20;
  ro.requests = 20;
  ReplayResult rc = chunked.replay(ro), rw = whole.replay(ro);
  EXPECT_GT(rc.preemptions, 0);
  EXPECT_EQ(rw.preemptions, 0);
  EXPECT_NEAR(rc.mean_output, 64, kTight);
  EXPECT_NEAR(rw.mean_output, 64, kTight);
  // A request larger than the whole cache in tokens is refused when the model is built.
  o.input = 40000;
  auto huge = [&] { ServeModel sm(chassis, find_model("qwen3-8b"), o); };
  EXPECT_THROW(huge(), InputError);
}

TEST(Serve, PreemptedRequestFindsItsFirstBlocksCached) {
  // vLLM V1 with prefix caching (on by default) frees a preempted request's blocks to the tail of
  // the free queue, its last block first, and they keep their hashes until taken; admitted again it
  // finds its first blocks cached and computes only the rest. Two requests of P = 16h prompt
  // tokens and 64 outputs, released together into N blocks of 16 tokens with N - 2h = 2 free (or
  // 3) after both prompts run in one step (a 32768-token budget), no front end, no async
  // scheduling. Hand derivation, N - 2h = 2: the first decode step takes a block each (h + 1 each,
  // none free); at the 17th (the KV of token P + 17) A needs block h + 2 and none is free, so B,
  // the latest admitted, is preempted with P + 16 tokens computed: h + 1 full blocks, all cached.
  // A takes its blocks h + 2, h + 3, h + 4 (P + 63 tokens at its end) from the queue's head, B's
  // last three, and B, whose rest needs two blocks more than the free ones it does not hold, waits
  // until A ends. Admitted again B finds h - 2 blocks cached and computes (P + 17) - 16(h - 2) =
  // 49 tokens, where a recompute of all would be P + 17. With 3 free: A's block h + 2 is the free
  // one, it takes two of B's, and B computes (P + 17) - 16(h - 1) = 33. Prompt tokens computed:
  // 2P + 49 (or 33), one preemption, 64 tokens each.
  auto chassis = topo::load_chassis("workstation-rtx4090");
  ServeOptions o;
  o.output = 64;
  o.kv_admission = KvAdmission::kPrompt;
  o.front_end = FrontEnd::kOffline;
  o.async_scheduling = false;
  o.max_batched_tokens = 32768;
  const double K = ServeModel(chassis, find_model("qwen3-8b"), o).memory().kv_tokens;
  const int N = static_cast<int>(std::floor(K / 16));
  const int h = (N - 2) / 2, spare = N - 2 * h;
  ASSERT_TRUE(spare == 2 || spare == 3) << N;
  ASSERT_LE(2 * 16 * h, 32768) << N;  // both prompts in one step
  o.input = 16 * h;
  ReplayOptions ro;
  ro.concurrency = 2;
  ro.requests = 2;
  ReplayResult r = ServeModel(chassis, find_model("qwen3-8b"), o).replay(ro);
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_EQ(r.first_tokens, 2);
  EXPECT_DOUBLE_EQ(r.mean_output, 64);
  EXPECT_DOUBLE_EQ(r.prompt_tokens, 2.0 * o.input + (spare == 2 ? 49 : 33));
}

TEST(Serve, ReplayRefusesOnlyARequestWhoseBlocksExceedTheCache) {
  // The cache holds N = floor(K / 16) blocks of 16 tokens. A request computes the KV of at most
  // input + output - 1 tokens (its last token is sampled, never fed back), so input = 16·N - 64 + 1
  // with 64 outputs needs exactly N blocks and is replayed; one token more needs N + 1, which vLLM
  // refuses at start (max_model_len's blocks exceed the cache) and the replay refuses too, though
  // the token count, input + output <= K, passes the model's own check.
  auto chassis = topo::load_chassis("workstation-rtx4090");
  ServeOptions o;
  o.output = 64;
  o.kv_admission = KvAdmission::kPrompt;
  const double K = ServeModel(chassis, find_model("qwen3-8b"), o).memory().kv_tokens;
  const int N = static_cast<int>(std::floor(K / 16));
  ASSERT_GE(K, 16.0 * N + 2);  // both requests below pass the token check
  ReplayOptions ro;
  ro.concurrency = 2;
  ro.requests = 2;
  o.input = 16 * N - 64 + 1;
  ReplayResult fits = ServeModel(chassis, find_model("qwen3-8b"), o).replay(ro);
  EXPECT_EQ(fits.first_tokens, 2);
  EXPECT_DOUBLE_EQ(fits.mean_output, 64);
  o.input += 1;
  ServeModel over(chassis, find_model("qwen3-8b"), o);
  EXPECT_THROW(over.replay(ro), InputError);
}

TEST(Serve, AdmissionByPromptReplaysLikeWholeLivesWhenTheCacheIsAmple) {
  // Llama 3.1 8B on one H100 (~440k tokens of KV cache) with 1024 in / 256 out: even 48 requests'
  // whole lives (61k tokens) fit, so allocating blocks step by step never runs out and admission by
  // prompt replays exactly what whole-life admission does, with and without chunking and async
  // scheduling.
  auto chassis = topo::load_chassis("dgx-h100");
  for (int c : {1, 4, 16, 48})
    for (bool chunked : {true, false})
      for (bool async : {true, false}) {
        SCOPED_TRACE(fmt::format("c {} chunked {} async {}", c, chunked, async));
        ServeOptions o = one_gpu();
        o.chunked_prefill = chunked;
        o.async_scheduling = async;
        ServeModel whole(chassis, find_model("llama3.1-8b"), o);
        o.kv_admission = KvAdmission::kPrompt;
        ServeModel prompt(chassis, find_model("llama3.1-8b"), o);
        ASSERT_GT(whole.memory().kv_tokens, 48.0 * 1280);
        ReplayOptions ro;
        ro.concurrency = c;
        ro.requests = 150;
        ReplayResult a = whole.replay(ro), b = prompt.replay(ro);
        EXPECT_EQ(b.preemptions, 0);
        EXPECT_EQ(a.steps, b.steps);
        EXPECT_DOUBLE_EQ(a.duration_s, b.duration_s);
        EXPECT_DOUBLE_EQ(a.ttft_mean_s, b.ttft_mean_s);
        EXPECT_DOUBLE_EQ(a.itl_mean_s, b.itl_mean_s);
        EXPECT_EQ(a.first_tokens, 150);
        EXPECT_EQ(b.first_tokens, 150);
      }
}

TEST(Serve, FixedLengthsInStepPreemptPastTheWholeLifeFit) {
  // A burst closed loop of fixed lengths (ignore-EOS) at the input + output/2 fit (what Poisson
  // arrivals hold on average) keeps its clients in step: Qwen3 8B on an RTX 4090, 100 in / 2000
  // out, about 29 of them. Replayed, they all grow to 2100 tokens together, more than the cache
  // holds, so vLLM's scheduler preempts and recomputes all through the run: the preemptions grow
  // with the number of requests. At the burst fit (whole lives) nothing is preempted.
  auto chassis = topo::load_chassis("workstation-rtx4090");
  ServeOptions o;
  o.input = 100;
  o.output = 2000;
  o.kv_admission = KvAdmission::kPrompt;
  ServeModel burst(chassis, find_model("qwen3-8b"), o);
  o.arrivals = Arrivals::kPoisson;
  ServeModel spread(chassis, find_model("qwen3-8b"), o);
  const double K = burst.memory().kv_tokens;
  EXPECT_EQ(burst.max_concurrency_fit(), static_cast<int>(std::floor(K / 2100)));
  EXPECT_EQ(spread.max_concurrency_fit(), static_cast<int>(std::floor(K / 1100)));
  ReplayOptions ro;
  ro.concurrency = spread.max_concurrency_fit();
  ro.requests = 2 * ro.concurrency;
  long few = burst.replay(ro).preemptions;
  ro.requests = 6 * ro.concurrency;
  long many = burst.replay(ro).preemptions;
  EXPECT_GT(few, 0);
  EXPECT_GT(many, 2 * few);
  ro.concurrency = burst.max_concurrency_fit();
  EXPECT_EQ(burst.replay(ro).preemptions, 0);
}

TEST(Serve, ReplayOfTheRtx4090BenchmarkLeavesItsTtftGap) {
  // docs/VALIDATION.md, "Serving": the page measured a mean TTFT of 667 ms (median 840, P99 1483)
  // at 48 clients, 300 requests of 256 prompt tokens and up to 128 output tokens (mean 100). The
  // engine replayed step by step behind vLLM's API server (4 ms a request), with equal outputs of
  // 100 or EOS-ended ones of mean 100, stays at least a quarter under that mean (455 and 215 ms):
  // the rest of the wait is not in the engine's steps nor in the front end's figure. Its P99 is
  // the first cohort's train of six 2048-token steps, within 15% of the page's P99: the prefill
  // rate is the model's.
  auto chassis = topo::load_chassis("workstation-rtx4090");
  ServeOptions o;
  o.gpus = {"GPU0"};
  o.input = 256;
  o.async_scheduling = false;  // the page's vLLM predates v0.14 (docs/VALIDATION.md, "Serving")
  for (double mean : {0.0, 100.0}) {
    SCOPED_TRACE(mean);
    o.output = mean > 0 ? 128 : 100;
    ServeModel sm(chassis, find_model("mistral-7b"), o);
    ReplayOptions r;
    r.concurrency = 48;
    r.requests = 300;
    r.mean_output = mean;
    auto res = sm.replay(r);
    EXPECT_LT(res.ttft_mean_s, 0.75 * 0.667);
    EXPECT_NEAR(res.ttft_p99_s, 1.483, 0.15 * 1.483);
  }
}

TEST(Serve, ValidationReportsTheRtx4090TtftDistribution) {
  // docs/VALIDATION.md, "Serving": the RTX 4090 page gives the median and P99 TTFT beside the mean
  // (4-48 users: medians 53, 55, 97, 277, 840 ms; P99 157, 268, 503, 938, 1483 ms), and the rows
  // are replayed, so each reports the replay's median and P99 beside the page's. The P99 of 300
  // requests is the first cohort: N prompts of 256 tokens at once run as a train of
  // ceil(256 N / 2048) steps of vLLM's 2048-token budget (one step at 4-8 users, six at 48 with a
  // step of 2048 prompt tokens ~0.21 s: 2 x 7.25e9 x 2048 FLOP at 0.85 of 165.2 TFLOP/s), which
  // the page's P99 matches within 60 ms at 4-32 users and 12% at 48: the prefill rate is the
  // model's. The median at 4-8 users (one prompt beside a few decodes) is within 15% of the
  // page's; from 32 users on the page's median is more than twice the replay's: the open gap,
  // requests of the steady state that wait like a cohort.
  int checked = 0;
  for (const auto& r : run_serve_validation()) {
    if (r.c.ttft_median_s <= 0) continue;
    SCOPED_TRACE(r.c.name);
    ASSERT_TRUE(r.replayed);
    ASSERT_GT(r.c.ttft_p99_s, r.c.ttft_median_s);
    EXPECT_GT(r.ttft_median_s, 0);
    EXPECT_LE(r.ttft_median_s, r.ttft_p99_s);
    const int n = r.c.options.concurrency;
    if (n <= 32)
      EXPECT_NEAR(r.ttft_p99_s, r.c.ttft_p99_s, 0.060);
    else
      EXPECT_NEAR(r.ttft_p99_s, r.c.ttft_p99_s, 0.12 * r.c.ttft_p99_s);
    if (n <= 8) EXPECT_NEAR(r.ttft_median_s, r.c.ttft_median_s, 0.15 * r.c.ttft_median_s);
    if (n >= 32) EXPECT_LT(2 * r.ttft_median_s, r.c.ttft_median_s);
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

TEST(Serve, Rtx4090ThroughputGapIsItsTtftGap) {
  // docs/VALIDATION.md, "Serving": the RTX 4090 rows are closed loops of N clients (vllm bench
  // serve --max-concurrency N), so by Little's law a client's mean cycle (send, last token, next
  // send) is N / X at X requests/s, over the page's finite run and the replay's alike (both 300
  // requests, first cohort and drain included). A cycle is the TTFT and the rest (the decode
  // phase, the last chunk's way back). The page: X = output tok/s / mean output (2.09 ... 11.87
  // req/s), rest = N / X - mean TTFT = 4/2.09 - 0.063 = 1.851 s, 2.037, 2.329, 2.927 and
  // 48/11.87 - 0.667 = 3.377 s at 4-48 clients, per output token after the first (mean 100)
  // 18.7, 20.6, 23.5, 29.6 and 34.1 ms. The replay's, per token of its own drawn outputs (mean
  // ~97.6 of the EOS draws), is within 7% of those on every row (18.9, 20.0, 22.4, 27.6, 33.2 ms:
  // +2, -3, -5, -6, -2%), while its whole cycle is 12-13% short at 32-48 clients: at 48 the
  // page's cycle at 100 tokens is ~0.52 s longer and 0.44 s of it is TTFT. So the rows' output
  // tok/s excess there is their TTFT gap through Little's law, not faster decode steps, and the
  // rest's gap bounds the engine's host time per step beyond the modelled 0.5 ms: ~0.8 ms a step
  // over ~99 steps at 48 clients (~17 us a sequence), ~1.9 ms at 32.
  int checked = 0;
  for (const auto& r : run_serve_validation()) {
    if (r.c.ttft_median_s <= 0) continue;  // the RTX 4090 rows: the page gives median and P99
    SCOPED_TRACE(r.c.name);
    ASSERT_TRUE(r.replayed);
    const double n = r.c.options.concurrency;
    const double x_page = r.c.output_tokens_per_s / r.c.replay_mean_output;
    const double x_model = r.predicted.requests_per_s;
    ASSERT_GT(x_model, 0);
    // Per output token after the first, as the replay's drawn EOS lengths average a little off
    // the page's mean.
    const double out_model = r.predicted.output_tokens_per_s / x_model;
    const double rest_page = (n / x_page - r.c.ttft_s) / (r.c.replay_mean_output - 1);
    const double rest_model = (n / x_model - r.predicted.ttft_s) / (out_model - 1);
    EXPECT_NEAR(rest_model, rest_page, 0.07 * rest_page);
    if (n == 48) {  // the cycle's gap at the page's mean output, and the TTFT's share of it
      const double ttft_gap = r.c.ttft_s - r.predicted.ttft_s;
      const double cycle_gap = ttft_gap + (r.c.replay_mean_output - 1) * (rest_page - rest_model);
      EXPECT_GT(cycle_gap, 0.4);
      EXPECT_GT(ttft_gap, 0.75 * cycle_gap);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

TEST(Serve, ReplayPacksThePromptsTheFormulasTakeOneAStep) {
  // The TensorRT-LLM max-throughput rows of docs/VALIDATION.md (every request queued at once, as
  // many running as the KV cache admits): the steady-state formulas add one waiting prompt a step,
  // the replay packs the waiting prompts as the scheduler does. With n sequences running at O
  // output tokens each, n / O requests end a step on average: at 128/128 (n ~ 1000, O = 128) about
  // eight, so the formulas' one a step caps the rate and the replay, which refills the batch, runs
  // more than 20% faster. Packing never costs throughput: on every row the replay is at least the
  // formulas' less its ramp at the start and drain at the end (5%). Hence the validation replays
  // every such run (run_serve_validation).
  int checked = 0, short_runs = 0;
  for (const auto& c : serve_validation_cases()) {
    if (!c.trtllm_bench) continue;
    SCOPED_TRACE(c.name);
    auto chassis = topo::load_chassis(c.chassis);
    ServeModel sm(chassis, find_model(c.model), c.options);
    ReplayOptions r;
    r.concurrency = c.options.concurrency;
    r.requests = c.options.requests;
    double replay = sm.replay(r).output_tokens_per_s;
    double formula = sm.closed_loop(c.options.concurrency).output_tokens_per_s;
    EXPECT_GT(replay, 0.95 * formula);
    if (c.options.input == 128 && c.options.output == 128) {
      EXPECT_GT(replay, 1.2 * formula);
      ++short_runs;
    }
    ++checked;
  }
  EXPECT_GE(checked, 60);
  EXPECT_EQ(short_runs, 6);
}

TEST(Serve, ValidationHoldsOnItlAndThroughput) {
  // docs/VALIDATION.md, "Serving": every published ITL within 15%, their median within 10%; output
  // tokens/s within 15% up to 8 users and on every max-throughput run, and its median within 10%
  // (from 16 users on the RTX 4090 the open TTFT gap adds 12-24%). TTFT is bounded where the
  // clients' arrivals are the model's (burst: the NIM rows, within 25%); the RTX 4090 rows' TTFT
  // gap is open (docs/VALIDATION.md). Rows marked open (ServeCase::open: the later vLLM rows whose
  // front end, engine version, eager mode or admission past the KV-cache bend the model does not
  // describe) are reported, not bounded; they count in the all-rows medians below.
  auto rows = run_serve_validation();
  ASSERT_GE(rows.size(), 8u);
  int tp = 0, pcie_only = 0, max_throughput = 0;
  for (const auto& r : rows) {
    SCOPED_TRACE(r.c.name);
    EXPECT_FALSE(r.c.source.empty());
    EXPECT_FALSE(r.c.command.empty());
    if (!r.c.open.empty()) continue;  // an open gap, reported in docs/VALIDATION.md
    if (r.c.itl_s > 0) EXPECT_LE(std::abs(r.itl_error), 0.15);
    if (r.c.options.concurrency <= 8) EXPECT_LE(std::abs(r.throughput_error), 0.15);
    // Max-throughput runs (every request queued at once, KV-cache bound: TensorRT-LLM on H100 and
    // H200) are decode steps of as many sequences as fit, the model's ground: within 15%.
    if (r.c.options.concurrency == r.c.options.requests) {
      EXPECT_LE(std::abs(r.throughput_error), 0.15);
      ++max_throughput;
    }
    if (r.c.ttft_s > 0 && r.c.options.arrivals != Arrivals::kPoisson)
      EXPECT_LE(std::abs(r.ttft_error), 0.25);
    tp += r.c.options.tp > 1;
    pcie_only += r.c.chassis == "workstation-rtx4090";
  }
  EXPECT_GE(tp, 2);
  EXPECT_GE(max_throughput, 10);
  EXPECT_GE(pcie_only, 2);
  // The medians over the rows the model holds: within 10% (ITL 2.5%, output tokens/s 4.6% now).
  std::vector<ServeValidationRow> held;
  for (const auto& r : rows)
    if (r.c.open.empty()) held.push_back(r);
  EXPECT_LE(serve_validation_median(held, 1), 0.10);
  EXPECT_LE(serve_validation_median(held, 2), 0.10);
  // Over every row, open ones included, issue 11's goal (ITL and output tokens/s 10%, TTFT 15%) is
  // not met since the GPUStack engines' at-once rows (docs/VALIDATION.md, "Serving"): ITL 22.3%,
  // output tokens/s 7.8%, TTFT 40.1%. A regression guard at where they stand. (ShareGPT's spread of
  // output lengths, sharegpt_spread, took tok/s from 9.0% to 8.4% and ITL from 20.3% to 22.6%: the
  // drained tail's short steps pull the at-once rows' mean ITL down where their stalls are not
  // modelled; spread over SGLang's and TensorRT-LLM's at-once ShareGPT rows too, each request
  // holding its own length for its whole life, tok/s 8.4% -> 7.8%, ITL 22.6% -> 22.3%, TTFT 38.7%
  // -> 40.1%: the short requests' slots free sooner, where those rows' TTFT was already short.)
  EXPECT_LE(serve_validation_median(rows, 0), 0.41);
  EXPECT_LE(serve_validation_median(rows, 1), 0.23);
  EXPECT_LE(serve_validation_median(rows, 2), 0.08);
}

TEST(Serve, AzureRowsRunTheirSourcesEngine) {
  // The Azure A100 PCIe gists ran vLLM v0.7.3 (the author's manifests pin vllm/vllm-openai:v0.7.3;
  // docs/VALIDATION.md, "The Azure gists' engine and the TP 4 step"): the V0 engine, which has no
  // async scheduling, so their rows schedule each step when the last one ends.
  int azure = 0;
  for (const auto& c : serve_validation_cases()) {
    if (c.source.find("surajssd") == std::string::npos) continue;
    SCOPED_TRACE(c.name);
    ++azure;
    EXPECT_FALSE(c.options.async_scheduling);
    EXPECT_FALSE(c.open.empty());  // the per-step host time and TTFT gaps stay open
    // V0 chunks prompts by default only above 32K positions (vllm/engine/arg_utils.py,
    // use_long_context): Phi-4 (16384) runs _schedule_default's prompt-only steps, Llama 3.3 70B
    // (131072) chunked prefill beside the decodes.
    const bool phi = c.model == "phi-4";
    EXPECT_EQ(c.options.prompt_only_steps, phi);
    EXPECT_EQ(c.options.chunked_prefill, !phi);
  }
  EXPECT_EQ(azure, 4);
}

TEST(Serve, FrontEndQueueHandDerived) {
  // The front end as one FIFO server (work/serve_front.cc). n requests at once, c seconds each:
  // the k-th (k = 0 .. n-1) waits k c, the mean (n-1)/2 c: 4 at 12 ms -> (0+12+24+36)/4 = 18 ms.
  EXPECT_NEAR(detail::front_end_burst_wait_s(4, 12e-3), 18e-3, 1e-12);
  EXPECT_EQ(detail::front_end_burst_wait_s(1, 12e-3), 0);
  // Poisson arrivals at X = 40/s, c = 12 ms, the process busy u = 0.5 of its time:
  // Pollaczek-Khinchine X c^2 / (2 (1 - u)) = 40 x 144e-6 / 1 = 5.76 ms.
  EXPECT_NEAR(detail::front_end_poisson_wait_s(40, 12e-3, 0.5), 5.76e-3, 1e-12);
  EXPECT_TRUE(std::isinf(detail::front_end_poisson_wait_s(100, 12e-3, 1.0)));
  // Chunks: other streams' requests arrive at 10/s and hold the loop 12 ms each while the engine
  // steps every 7 ms: 12/7 - 1 chunks fewer per hold, a stream keeps 1 - 10 x 5e-3 = 0.95 of its
  // chunks, ITL per chunk 7 / 0.95 ms. A hold shorter than a step merges nothing.
  EXPECT_NEAR(detail::front_end_chunk_itl_s(7e-3, 12e-3, 10), 7e-3 / 0.95, 1e-12);
  EXPECT_EQ(detail::front_end_chunk_itl_s(7e-3, 5e-3, 10), 7e-3);
  // The figures by endpoint: completions tokenizes (2 us a token), chat renders its template too.
  ServeOptions o;
  o.input = 1000;
  EXPECT_NEAR(detail::front_end_request_cpu_s(o), 2e-3, 1e-12);
  o.chat_endpoint = true;
  EXPECT_NEAR(detail::front_end_request_cpu_s(o), 14e-3, 1e-12);
  o.front_end = FrontEnd::kOffline;
  EXPECT_EQ(detail::front_end_request_cpu_s(o), 0);
}

TEST(Serve, BurstCohortWaitsInTheFrontEndQueue) {
  // The steady state of 3 phase-locked clients on the chat endpoint, one output token each,
  // 128-token prompts, Llama 3.1 8B on one H100: the cohort's 384 prompt tokens fit one step, so
  // the three come back together and pass the API server's process one after another, c = 12 ms +
  // 128 x 2 us each: the k-th waits k c, the mean (3 - 1) / 2 c = c. TTFT = the one step of 384
  // prompt tokens + f (the latency) + c (its own) + c (the wait), at mean prefix 64.
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions o = one_gpu();
  o.output = 1;
  o.chat_endpoint = true;
  ServeModel sm(chassis, find_model("llama3.1-8b"), o);
  const double c = kVllmChatRequestCpuS + 128 * kVllmTokenizeCpuS;
  const double want = sm.step(0, 0, 384, 64).total + kVllmApiServerLatencyS + 2 * c;
  EXPECT_NEAR(sm.closed_loop(3).ttft_s, want, kTight * want);
}

TEST(Serve, ReplayOfRequestsAtOnceThroughTheFrontEndQueue) {
  // Three clients start together on the chat endpoint, one output token each, Llama 3.1 8B on one
  // H100, 128-token prompts. The API server's process takes their CPU time c = 12 ms + 128 x 2 us
  // back to back: the k-th (k = 0, 1, 2) reaches the engine at (k+1) c + f (f its latency). A
  // step of one prompt, s, with f + s < c: each prompt finds the engine idle and runs alone, and
  // its token waits for the request the process is on (the loop runs the output handler between
  // two requests), then k = 50 us (detokenization and chunk):
  //  - request 0's token at c + f + s, inside request 1's processing [c, 2c]: leaves at 2c + k;
  //  - request 1's at 2c + f + s, inside request 2's (shifted by k): leaves at 3c + 2k;
  //  - request 2's at 3c + f + s, the process idle: leaves at 3c + f + s + k.
  // Mean TTFT (8c + f + s + 4k) / 3; the run ends with the last chunk, 3c + f + s + k.
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions o = one_gpu();
  o.output = 1;
  o.chat_endpoint = true;
  ServeModel sm(chassis, find_model("llama3.1-8b"), o);
  const double c = kVllmChatRequestCpuS + 128 * kVllmTokenizeCpuS, f = kVllmApiServerLatencyS;
  const double k = kVllmApiServerDetokS + kVllmApiServerChunkS;
  const double s = sm.step(0, 0, 128, 64).total;
  ASSERT_LT(f + s, c);
  ASSERT_LT(k, f + s);
  ReplayOptions r;
  r.concurrency = 3;
  r.requests = 3;
  auto res = sm.replay(r);
  EXPECT_NEAR(res.ttft_mean_s, (8 * c + f + s + 4 * k) / 3, kTight * k);
  EXPECT_NEAR(res.duration_s, 3 * c + f + s + k, kTight * k);
  EXPECT_EQ(res.steps, 3);
}

// GPUs no replica takes: replicas = GPUs / (tp x pp), rounded down. Listed in --gpus they are a
// mistake (before: --tp 2 --gpus 0,1,2 ran one replica on GPU0, GPU1 and said nothing of GPU2);
// the chassis' own GPUs beyond a multiple of tp x pp are a note (8 GPUs, tp 2 x pp 3 = 6 a
// replica: one replica, GPU6 and GPU7 idle).
TEST(Serve, GpusNoReplicaTakes) {
  auto chassis = topo::load_chassis("dgx-h100");
  ServeOptions o;
  o.tp = 2;
  o.gpus = {"0", "1", "2"};
  try {
    ServeModel sm(chassis, find_model("llama3.1-8b"), o);
    ADD_FAILURE() << "no error for GPU2 left idle";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "--gpus: GPU2 would be left idle (1 replica of tp 2 x pp 1 uses 2 of the 3 GPUs): "
                 "list a multiple of 2 GPUs");
  }
  o.gpus = {"0", "1", "2", "3"};
  o.replicas = 1;
  EXPECT_THROW(ServeModel(chassis, find_model("llama3.1-8b"), o), InputError);
  o.gpus = {"0", "1", "2", "3"};
  o.replicas = 0;
  EXPECT_EQ(ServeModel(chassis, find_model("llama3.1-8b"), o).result().replicas, 2);
  o = {};
  o.tp = 2;
  o.pp = 3;
  auto r = ServeModel(chassis, find_model("llama3.1-8b"), o).result();
  EXPECT_EQ(r.replicas, 1);
  EXPECT_NE(std::find(r.notes.begin(), r.notes.end(),
                      "GPU6, GPU7 idle: 1 replica of tp 2 x pp 3 uses 6 of the 8 GPUs"),
            r.notes.end());
}

}  // namespace

namespace linkwise::work {
namespace {

TEST(ServeRun, PromptAdmissionPastTheCacheIsReplayed) {
  // Qwen3 8B on an RTX 4090, 100 in / 2000 out: 15 sequences fit for their whole lives (the burst
  // fit, docs/serving.md "Memory and admission"). The vllm front end (the default) admits by
  // prompt, so 20 clients in a burst closed loop are past the cache: run_serve replays them. A
  // finite run of 800 requests is the replay of exactly that run (same figures, same
  // preemptions); without --requests the steady state is the run of 32 lives a client less the
  // run of 16 (640 and 320 requests), whose rate lies above the formulas' 15-sequence steady state
  // (vLLM runs 20 at once, recomputing the preempted). 15 clients fit: no replay. --front-end
  // offline (trtllm-bench) admits whole lives: no replay either.
  auto chassis = topo::load_chassis("workstation-rtx4090");
  ServeRunOptions o;
  o.model = "qwen3-8b";
  o.input = 100;
  o.output = 2000;
  o.concurrency = 20;
  o.requests = 800;
  ServeRun finite = run_serve(o, chassis);
  EXPECT_EQ(finite.result.kv_admission, "prompt");
  EXPECT_EQ(finite.result.max_concurrency_fit, 15);
  ServeOptions so = make_serve_options(o);
  ServeModel sm(chassis, find_model("qwen3-8b"), so);
  ReplayOptions ro;
  ro.concurrency = 20;
  ro.requests = 800;
  ReplayResult rp = sm.replay(ro);
  EXPECT_GT(rp.preemptions, 0);
  EXPECT_EQ(finite.result.preemptions, rp.preemptions);
  EXPECT_NEAR(finite.result.point.output_tokens_per_s, rp.output_tokens_per_s,
              kTight * rp.output_tokens_per_s);
  EXPECT_NEAR(finite.result.point.ttft_s, rp.ttft_mean_s, kTight * rp.ttft_mean_s);
  EXPECT_NEAR(finite.result.point.itl_s, rp.itl_mean_s, kTight * rp.itl_mean_s);
  EXPECT_EQ(finite.result.replayed.rfind("replayed: past the KV cache, vLLM V1 admits by prompt "
                                         "and preempts: ",
                                         0),
            0u)
      << finite.result.replayed;

  o.requests = 0;
  ServeRun steady = run_serve(o, chassis);
  EXPECT_FALSE(steady.result.replayed.empty());
  EXPECT_GT(steady.result.preemptions, 0);
  ServePoint fit = sm.closed_loop(15);
  EXPECT_GT(steady.result.point.output_tokens_per_s, fit.output_tokens_per_s);
  // Little's law over the measured lives: 20 clients = requests/s x E2E, within 2% (the window
  // between the two runs cuts the preemption cycles where it falls).
  EXPECT_NEAR(steady.result.point.requests_per_s * steady.result.point.e2e_s, 20, 0.4);

  o.concurrency = 15;
  EXPECT_TRUE(run_serve(o, chassis).result.replayed.empty());
  o.concurrency = 20;
  o.front_end = "offline";
  ServeRun offline = run_serve(o, chassis);
  EXPECT_EQ(offline.result.kv_admission, "whole-life");
  EXPECT_TRUE(offline.result.replayed.empty());
}

TEST(ServeRun, SweepPointsPastTheCacheAreReplayedAsTheSinglePoint) {
  // The same job as above (15 sequences fit for their whole lives): a sweep to 32 users has its
  // points at 16 and 32 users past the cache, and each equals what `--concurrency 16` and `32`
  // answer alone (the same replay); the points that fit (1-8) equal the steady state.
  auto chassis = topo::load_chassis("workstation-rtx4090");
  ServeRunOptions o;
  o.model = "qwen3-8b";
  o.input = 100;
  o.output = 2000;
  o.sweep = "concurrency";
  o.sweep_max = 32;
  ServeRun sweep = run_serve(o, chassis);
  ASSERT_EQ(sweep.result.sweep.size(), 6u);  // 1, 2, 4, 8, 16, 32
  o.sweep.clear();
  for (const ServePoint& p : sweep.result.sweep) {
    o.concurrency = p.concurrency;
    ServeRun one = run_serve(o, chassis);
    EXPECT_EQ(one.result.replayed.empty(), p.concurrency <= 8) << p.concurrency;
    EXPECT_NEAR(p.output_tokens_per_s, one.result.point.output_tokens_per_s,
                kTight * one.result.point.output_tokens_per_s)
        << p.concurrency;
    EXPECT_NEAR(p.ttft_s, one.result.point.ttft_s, kTight * one.result.point.ttft_s)
        << p.concurrency;
    EXPECT_NEAR(p.itl_s, one.result.point.itl_s, kTight * one.result.point.itl_s) << p.concurrency;
  }
}

}  // namespace
}  // namespace linkwise::work

TEST(Serve, TrtllmBenchSettingsFromTheDataset) {
  // trtllm-bench's heuristics (tensorrt_llm/bench/build/tuning.py) for Llama 3.1 405B FP8 at TP 8
  // on eight 80 GiB GPUs: weights 405e9 B = 377.18 GiB of 640; KV cache 0.90 x 262.82 = 236.54 GiB;
  // FP8 KV a token 2 x 126 layers x 8 heads x 128 x 1 B = 258048 B = 2.4033e-4 GiB.
  //  - 128/128: 236.54 / (2.4033e-4 x 256) = 3844.6 requests; batch 256 x ceil(15.02) = 4096;
  //    tokens 3844.6 x 2 = 7689 -> 512 x ceil(15.02) = 8192, above 128 + 4096.
  //  - 2048/128: 452.3 requests -> 128 x ceil(3.53) = 512; 452.3 x 17 = 7689 -> 8192.
  //  - 20000/2000: 44.7 requests -> at least 64; 44.7 x 11 = 492 -> 2048, raised to the prompt
  //    and the batch, 20000 + 64 = 20064 (whole prompts).
  const double gib = 1024.0 * 1024 * 1024;
  auto s = trtllm_bench_settings(80 * gib, 8, 1, 405e9, 258048, 128, 128);
  EXPECT_NEAR(s.kv_cache_max_requests, 3844.6, 0.1);
  EXPECT_EQ(s.max_batch_size, 4096);
  EXPECT_EQ(s.max_num_tokens, 8192);
  s = trtllm_bench_settings(80 * gib, 8, 1, 405e9, 258048, 2048, 128);
  EXPECT_NEAR(s.kv_cache_max_requests, 452.3, 0.1);
  EXPECT_EQ(s.max_batch_size, 512);
  EXPECT_EQ(s.max_num_tokens, 8192);
  s = trtllm_bench_settings(80 * gib, 8, 1, 405e9, 258048, 20000, 2000);
  EXPECT_EQ(s.max_batch_size, 64);
  EXPECT_EQ(s.max_num_tokens, 20064);
}

TEST(Serve, ValidationReplaysRunsThatQueueEveryRequestAtOnce) {
  // The path follows the client: a finite run whose requests are all queued at once
  // (trtllm-bench throughput; vllm bench serve with as many clients as prompts) is replayed step
  // by step, and the TensorRT-LLM rows take trtllm-bench's limits, not vLLM's defaults.
  int at_once = 0;
  for (const auto& r : run_serve_validation()) {
    const auto& o = r.c.options;
    if (o.requests > 0 && o.concurrency >= o.requests) {
      SCOPED_TRACE(r.c.name);
      EXPECT_TRUE(r.replayed);
      ++at_once;
    }
  }
  EXPECT_GE(at_once, 60);
  int trt = 0;
  for (const auto& c : serve_validation_cases()) trt += c.trtllm_bench ? 1 : 0;
  EXPECT_GE(trt, 60);
}

}  // namespace linkwise::work

namespace linkwise::work {
namespace {

TEST(ServeRun, OneRuleChoosesTheReplayAndTheEngineLimits) {
  // A run is queued at once when its client holds as many clients as requests (closed loop only).
  ServeOptions o;
  o.requests = 3000;
  o.concurrency = 3000;
  EXPECT_TRUE(queued_at_once(o));
  o.concurrency = 2999;
  EXPECT_FALSE(queued_at_once(o));
  o.requests = 0;  // the steady state
  EXPECT_FALSE(queued_at_once(o));
  // Each trtllm-bench validation row (offline front end, queued at once, neither limit given)
  // gets its limits from engine_limits.
  int checked = 0;
  for (const auto& c : serve_validation_cases()) {
    if (!c.trtllm_bench) continue;
    SCOPED_TRACE(c.name);
    auto chassis = topo::load_chassis(c.chassis);
    const Model model = find_model(c.model);
    const ServeOptions e = engine_limits(chassis, model, c.options);
    EXPECT_GT(e.max_seqs, 0);
    EXPECT_GT(e.max_batched_tokens, 0);
    // The vLLM front end, or a limit given, leaves the options as they are.
    ServeOptions v = c.options;
    v.front_end = FrontEnd::kVllmApiServer;
    EXPECT_EQ(engine_limits(chassis, model, v).max_seqs, 0);
    ServeOptions g = c.options;
    g.max_seqs = 7;
    EXPECT_EQ(engine_limits(chassis, model, g).max_batched_tokens, 0);
    ++checked;
  }
  EXPECT_GE(checked, 60);
}

TEST(ServeRun, AtOnceRunIsTheReplayOfItsRequests) {
  // Qwen3 0.6B on one H100, 512/128, 500 requests queued at once (the validation's max-throughput
  // row): the answer is ServeModel::replay of those 500 requests, figure for figure, and the
  // result says so; the same run with one client fewer is not queued at once and keeps the steady
  // state (not past the KV cache: 500 x 640 tokens fit).
  auto chassis = topo::load_chassis("dgx-h100");
  const Model model = find_model("qwen3-0.6b");
  ServeOptions o;
  o.gpus = {"GPU0"};
  o.replicas = 1;
  o.input = 512;
  o.output = 128;
  o.requests = 500;
  o.concurrency = 500;
  o.kv_admission = KvAdmission::kPrompt;
  const ServeResult r = serve_prediction(chassis, model, o);
  ReplayOptions ro;
  ro.concurrency = 500;
  ro.requests = 500;
  const ReplayResult rep = ServeModel(chassis, model, o).replay(ro);
  EXPECT_EQ(r.replayed, "replayed step by step: all 500 requests queued at once (0 preemptions)");
  EXPECT_DOUBLE_EQ(r.point.output_tokens_per_s, rep.output_tokens_per_s);
  EXPECT_DOUBLE_EQ(r.point.ttft_s, rep.ttft_mean_s);
  EXPECT_DOUBLE_EQ(r.ttft_p99_s, rep.ttft_p99_s);
  o.concurrency = 499;
  const ServeResult s = serve_prediction(chassis, model, o);
  EXPECT_TRUE(s.replayed.empty());
  EXPECT_DOUBLE_EQ(s.point.output_tokens_per_s,
                   ServeModel(chassis, model, o).closed_loop(499).output_tokens_per_s);
}

}  // namespace
}  // namespace linkwise::work
