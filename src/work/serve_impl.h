// Internals of work/serve.h: the figures the serving model uses, each with its source, and
// ServeModel::Impl.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "linkwise/comm/predict.h"
#include "linkwise/work/compute.h"
#include "linkwise/work/serve.h"

namespace linkwise::work {

inline constexpr double kGiB = 1024.0 * 1024 * 1024;

// Share of a GPU's peak memory bandwidth the decode kernels (skinny GEMMs streaming weights, paged
// attention streaming the KV cache) sustain. derived: estimate; device-to-device copies and STREAM
// triad reach 90-92% of the HBM peak on A100 and H100, and weight-streaming GEMV/GEMM kernels with
// a handful of rows a little less (NVIDIA CUTLASS and FlashInfer decode kernels report 80-90% of
// peak); 0.85.
inline constexpr double kMemoryEfficiency = 0.85;
// FP8 GEMMs reach a smaller share of their (twice as high) peak than 16-bit GEMMs of theirs: on
// Hopper the best dense FP8 GEMM of DeepGEMM reaches 1404 of 1979 TFLOP/s (71%;
// deepseek-ai/DeepGEMM pull request #74, "Normal GEMMs for dense models", 4096x7168x16384 before
// its tile change) where bf16 cuBLAS reaches 797.5 of 989 (81%; zzc0721/torch-performance-test-data
// issue #79, H100 80GB HBM3, 8192^3). derived: 0.71 / 0.81 = 0.88 of the GPU's GEMM efficiency.
inline constexpr double kFp8GemmRelative = 0.88;
// Fused attention runs at this fraction of the GEMM efficiency (FlashAttention-2 forward: 50-73% of
// A100 peak against ~85% for large GEMMs, Dao 2023 section 4.1; the same figure as
// work/compute.cc).
inline constexpr double kFlashFactor = 0.75;
// Kernels per decoder layer in one step of a Llama-style model in vLLM (vllm/model_executor/models/
// llama.py): fused add + RMSNorm, QKV GEMM, rotary embedding, KV-cache write, attention, output
// GEMM, fused add + RMSNorm, gate/up GEMM, SiLU-and-multiply, down GEMM; two all-reduces more under
// TP.
inline constexpr double kKernelsPerLayer = 10, kKernelsPerLayerTp = 12;
// Launch, ramp-up and tail of one kernel inside a CUDA graph. derived: estimate, the same 3 us per
// kernel work/compute.cc charges (CUDA C++ Best Practices Guide, "Kernel launch overhead": 2-5 us;
// graphs remove the CPU launch, not the ramp and tail of short kernels).
inline constexpr double kKernelGapS = 3e-6;
// Per-step work of the serving engine on the CPU that the GPU waits for: scheduling, copying the
// sampled tokens to the host, preparing the next step's inputs. derived: estimate; vLLM's V0 engine
// left 4-13 ms of GPU idle per decode step (vllm-project/vllm issue #6854), which multi-step
// scheduling and asynchronous output processing (issue #6913) and the V1 engine overlap with the
// GPU's work, leaving the sampled tokens' device-to-host copy and the scheduler's critical path,
// ~0.5 ms.
inline constexpr double kStepOverheadS = 0.5e-3;
// vLLM's default --gpu-memory-utilization (vllm/engine/arg_utils.py): the engine sizes its KV cache
// to fill 90% of the GPU's memory and leaves the rest to other processes and fragmentation.
inline constexpr double kGpuMemoryUtilization = 0.9;
// CUDA context, cuBLAS workspaces, captured CUDA graphs and NCCL buffers per GPU. derived:
// estimate; vLLM logs "CUDA graphs took 0.5-1.5 GiB" at start and the CUDA context takes ~0.5 GiB
// on Hopper.
inline constexpr double kRuntimeBytes = 1.5 * kGiB;

// Time a request spends in vLLM's OpenAI-compatible front end before its first token reaches the
// client, beyond the engine's own work: the HTTP request through uvicorn/FastAPI, tokenizing the
// prompt on the API server process, the ZMQ hop to the engine core process and the first token's
// way back (output processor, detokenization, the first streamed chunk). derived: the direct
// measurement of it, the same prompts run offline (the engine in-process) and through the server:
// tenstorrent/tt-inference-server issue #190 (comment of 2025-05-08, Llama 3.3 70B, batch 32,
// 128-token prompts): mean TTFT 231 ms offline, 235 ms online, "+4 ms ... from HTTP server + ZMQ
// latency". Consistent with ray-project/ray issue #59681 (comment of 2026-07-04): bare `vllm
// serve` (vLLM 0.22) at one streaming client gives a TTFT p50 of 16.9 ms for Qwen2.5 0.5B on an
// RTX 5050, front end and prompt together. 4 ms, a latency per request: the server's throughput
// limit (its CPU time per request on one Python process) has no public figure and is not applied.
inline constexpr double kVllmApiServerLatencyS = 4e-3;

namespace detail {
/// The front end's time per request before the first token (seconds): vLLM's API server
/// kVllmApiServerLatencyS; an offline engine none; NIM's front end none (no public figure).
double front_end_latency_s(FrontEnd f);
struct EngineFigures {
  int max_batched_tokens = 8192;
  int max_seqs = 1024;
};
EngineFigures engine_figures(double gpu_memory_bytes, const std::string& part);
double head_dim(const Model& m);
}  // namespace detail

struct ServeModel::Impl {
  Impl(const topo::Chassis& chassis, Model model, ServeOptions options);

  const topo::Chassis& chassis;
  Model model;
  ServeOptions opt;
  std::vector<std::string> notes;
  int replicas = 1;
  std::vector<std::vector<int>> groups;  ///< per replica: GPU node indices, stage by stage
  GpuSpec gpu;                           ///< the slowest GPU's figures
  double attention_peak_flops = 0;       ///< its 16-bit peak: attention runs in bf16/fp16
  bool fp8_matmuls = false;              ///< the weight matmuls run on FP8 tensor cores
  int gpu_node = -1;
  detail::EngineFigures engine;
  ServeMemory mem;
  double layers_stage = 1, w_layer_bytes = 0, w_expert_bytes_layer = 0, w_stage_bytes = 0,
         kv_heads_gpu = 1;
  int fit_replica = 1, fit_box = 1;

  struct Replica {
    std::vector<std::unique_ptr<comm::Communicator>> tp;  ///< per stage (tp > 1)
    std::vector<std::unique_ptr<comm::Communicator>> pp;  ///< per stage boundary
  };
  std::vector<Replica> reps;

  struct Cached {
    double time_s = 0;
    std::string link, algo;
  };
  mutable std::map<std::tuple<const comm::Communicator*, int, double>, Cached> cache;

  void validate();
  void place();
  void size_memory();
  void build_comms();
  double collective(const comm::Communicator& c, comm::Op op, double bytes,
                    std::string* link = nullptr, std::string* algo = nullptr) const;
  StepTime stage_step(int replica, int stage, double D, double ctx_d, double C, double ctx_p,
                      bool last) const;
  StepTime step(double D, double ctx_d, double C, double ctx_p) const;
  double offload_time(double running, double ctx) const;
  double h2d_bytes_per_s() const;
  struct Eval {
    bool feasible = false;
    double tau = 0, ttft = 0, e2e = 0, D = 0, rho = 0;
    StepTime mean;
  };
  /// burst: the n clients of a closed loop arrive phase-locked (ServeOptions::arrivals).
  Eval evaluate(double X, double n, bool burst) const;
  Eval closed(double n, double* X, bool burst) const;
  bool burst_arrivals() const;
  double burst_ttft(double n, double P, double D, double ctx_d, double ctx_p) const;
  double first_cohort_ttft(double n) const;
  ServePoint solve(double clients, double rate) const;
  LoadTime load() const;
  void describe(ServeResult* r) const;
};

}  // namespace linkwise::work
