#include "linkwise/work/compute.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"
#include "linkwise/work/framework.h"
#include "linkwise/work/hf_stack.h"
#include "linkwise/work/memory.h"

namespace linkwise::work {

namespace {

// Fraction of the dense peak a large cuBLAS GEMM reaches at the SM clock it runs at. derived:
// estimate. Large square bf16/fp16 GEMMs in cuBLAS run at 85-90% of the A100's 312 TFLOP/s (NVIDIA
// Matrix Multiplication Background User's Guide, DU-09799-001, Figure 2 and section 2.3 give the
// A100 curves). V100: an fp16 cuBLAS GEMM of 8192^3 reaches ~101 TFLOP/s, ~90% of the V100 PCIe's
// 112 (NVIDIA developer forums, "Understanding IPC and issue slot utilization when using Tensor
// Cores", 2019, kernel volta_h884gemm_128x128), so 0.85 too, but with Volta's smaller 128x128
// output tiles (kTile below), which quantize worse on big layers.
constexpr double kGemmEfficiencyAtClock = 0.85;

// η by architecture, for parts whose catalog entry gives no clock under GEMM load. Hopper and
// Blackwell: 0.75, derived: estimate, ~75-80% of the H100 SXM's 989 TFLOP/s, which boosts less
// under its 700 W limit than the clock its peak is quoted at.
double gemm_efficiency_for(const std::string& arch) {
  if (arch == "hopper" || arch == "blackwell") return 0.75;
  return kGemmEfficiencyAtClock;
}

// η of a part: where the catalog gives the SM clock a dense GEMM holds under the board's power
// limit (gemm_sustained_clock_mhz) and the clock the tensor peak is quoted at
// (tensor_peak_clock_mhz), the GEMM runs at kGemmEfficiencyAtClock of the peak scaled to that
// clock; else by architecture.
double gemm_efficiency_of(const topo::Node& gpu, const std::string& arch) {
  double held = gpu.fig("gemm_sustained_clock_mhz", -1),
         peak = gpu.fig("tensor_peak_clock_mhz", -1);
  if (held > 0 && peak > 0) return kGemmEfficiencyAtClock * std::min(1.0, held / peak);
  return gemm_efficiency_for(arch);
}

bool pre_ampere(const std::string& arch) {
  return arch == "volta" || arch == "turing" || arch == "pascal";
}

// Fused attention kernels by backend, causal (the decoder's mask). Both FlashAttention-2 and
// cuDNN's fused attention walk the score matrix in tiles and skip the tiles above the diagonal
// (Dao 2023, "FlashAttention-2", section 3.1.1 "Causal masking": blocks whose column indices are
// all above the row indices are skipped, "about 1.7-1.8x speedup" over the unmasked kernel;
// Dao-AILab/flash-attention csrc/flash_attn/src/flash_fwd_kernel.h, n_block_max bounded by the
// row block's last query under Is_causal). The kernel runs half of the s x s FLOPs, and each row
// block (forward) or column block (backward) also pays its half-computed diagonal tile and its
// own prologue and epilogue (load Q or K/V, rescale and write O and the log-sum-exp; write dK/dV)
// whatever the sequence: charged as `tail` extra keys per query, time = (causal FLOPs) x (1 +
// tail / keys) / rate, so short sequences run slower.
struct AttentionKernel {
  double fwd, bwd;            ///< fraction of the 16-bit dense peak (fwd, bwd FLOPs)
  double tail_fwd, tail_bwd;  ///< keys' worth of fixed work per query tile
};
// FlashAttention-2 forward reaches 50-73% of A100 peak (Dao 2023, section 4.1) against ~85% for
// large GEMMs: about 0.75 of the GEMM efficiency. derived: 0.62 / 0.85 ~ 0.75. Backward kept at the
// same rate (the paper's backward reaches up to 63%).
constexpr double kFlashFactor = 0.75;
// FlashAttention-2 on H100 SXM: "up to 335 TFLOPs/s" forward (Dao 2023, section 4.1) of its 989
// dense bf16: 0.34 of the Hopper peak (it issues Ampere-style mma.sync, not Hopper's wgmma). The
// H200 measurement (PyTorch 2.11 SDPA flash backend, data/measured/h200-compute-shapes-2026-12-01,
// causal, seq 1k-32k, 32 heads of 128) agrees: derived, least squares of time / causal FLOPs
// against 1 / seq: forward 337 TFLOP/s (0.34) with a 518-key tail, backward 323 TFLOP/s (0.33) with
// an 846-key tail.
constexpr double kFa2OnHopper = 0.34, kFa2OnHopperBwd = 0.33;
constexpr double kFa2TailFwd = 518, kFa2TailBwd = 846;
// cuDNN fused attention on Hopper (Transformer Engine's default fused backend on sm90; PyTorch SDPA
// cudnn backend): derived from the same H200 measurement (cuDNN 9.19; that section ran at 1620-1980
// MHz, not held at the GEMMs' capped clock), as a multiple of η of the same 700 W GH100 parts
// (0.676: 669 TFLOP/s): forward 641 TFLOP/s, 0.96 η, with a 547-key tail; backward 559 TFLOP/s,
// 0.84 η, with a 718-key tail.
constexpr double kCudnnOnHopperFwd = 0.96, kCudnnOnHopperBwd = 0.84;
constexpr double kCudnnTailFwd = 547, kCudnnTailBwd = 718;
// Backward of fused attention: 5 matmuls against the forward's 2 (Dao 2023, algorithm 2).
constexpr double kFlashBackwardFlops = 2.5;

AttentionKernel attention_kernel(const GpuSpec& gpu, bool fa2_on_hopper) {
  if (gpu.arch == "hopper" && fa2_on_hopper)
    return {kFa2OnHopper, kFa2OnHopperBwd, kFa2TailFwd, kFa2TailBwd};
  if (gpu.arch == "hopper")
    return {gpu.gemm_efficiency * kCudnnOnHopperFwd, gpu.gemm_efficiency * kCudnnOnHopperBwd,
            kCudnnTailFwd, kCudnnTailBwd};
  // FlashAttention-2 (Ampere, Ada) and Blackwell's kernels: η · 0.75, FlashAttention-2's tiles.
  double e = gpu.gemm_efficiency * kFlashFactor;
  return {e, e, kFa2TailFwd, kFa2TailBwd};
}
// Per-kernel launch and tail overhead. derived: estimate, CUDA kernel launch latency is 2-5 us
// (CUDA C++ Best Practices Guide, "Kernel launch overhead"); with CUDA graphs and overlap about 3
// us.
constexpr double kLaunchS = 3e-6;
// Output tile of the GEMM kernels (DU-09799-001, section 2.3: 256x128 is cuBLAS's largest tile);
// Volta's cuBLAS fp16 kernels top out at 128x128 (volta_h884gemm_128x128, the forum thread above).
constexpr double kTileM = 256, kTileN = 128, kVoltaTileM = 128;
// Split-K (CUTLASS docs, efficient_gemm.md "Parallelized Reductions", cutlass/gemm/device/
// gemm_splitk_parallel.h and the serial GemmSplitKSerial; cuBLAS picks split-K kernels for outputs
// of few tiles and deep k): an output with fewer tiles than the GPU has SMs splits its k loop into
// slices run on the idle SMs, s = min(floor(SMs / tiles), floor(k / 256)) ways. Each slice keeps
// at least 256 of k: four 64-deep k-blocks of the mainloop pipeline (CUTLASS sm80/sm90 mainloops
// stage 32-64-deep k-blocks). derived: estimate. Checked on one H200
// (data/measured/h200-compute-shapes-2026-12-01, decode section, at m = 256, one row of tiles):
// Llama 3 8B down 4096 x 14336, 32 tiles: unsplit one tile's k loop takes 167 us at η 0.75, split
// 4 ways 42 us, measured 60.8 us with the host's dispatch between the CUDA events and its bytes'
// 31 us; QKV 6144 x 4096, 48 tiles: 48 us unsplit, 24 us split 2 ways, measured 40.9 us.
// Splitting the tiles of a last, partial wave too (the data-parallel + stream-K hybrid of Osama et
// al., "Stream-K", PPoPP 2023, section 4; CUTLASS ThreadblockSwizzleStreamK) fits the H200's
// training-shape GEMMs a little better (Llama 3 70B TP8 QKV 4096 x 1280 x 8192: 160 tiles, +42%
// -> -11% at the power-capped η) but moves three published training rows past 15% (Narayanan
// 1.7B, Korthikanti 22B, MPT 30B H100; before the power-capped η): not applied.
constexpr double kSplitKMinK = 256;
// Share of the HBM peak a GEMM's memory side streams at: the thin GEMMs of a decode step (weights
// read once, a few rows of activations) are memory-bound. derived: the one figure beside
// work/serve_impl.h's kMemoryEfficiency (device copies and STREAM triad reach 0.90-0.92 of HBM
// peak on A100/H100); checked on one H200 (data/measured/h200-compute-shapes-2026-12-01, decode
// section): between the Llama 3 up-projections of 235 MB and 940 MB at m = 1 the time grows 163.5
// us for 705 MB, 4.31 TB/s = 0.90 of 4.8; a CUTLASS fp8 16x14336x4096 kernel on H100 reaches
// ~68% (NVIDIA/cutlass issue #1139), cuBLAS ~40% at 16 x 2752 x 4096 (issue #1176).
constexpr double kGemmMemoryEfficiency = 0.85;

// kFp8GemmShareOfEta (linkwise/work/compute.h): fp8 GEMMs at 0.88 of the 16-bit efficiency.

// What one NCCL channel (one CTA on one SM) moves. derived: HGX A100 runs its NVSwitch ring
// collectives on 24 channels (NCCL INFO "Channel 23/24", nccl-tests issue #100) at ~230-235 GB/s
// bus bandwidth (docs/ VALIDATION.md, nccl-tests issue #149): ~10 GB/s each; NCCL "would use 16
// SMs" on a DGX with 8 NICs at ~190 GB/s (NVIDIA/nccl issue #689, S. Jeaugey): ~12 GB/s each; "2
// SMs" for one 12-24 GB/s NIC.
constexpr double kChannelBytesPerS = 10e9;
// NCCL's channel bounds: MAXCHANNELS 32 (src/include/device.h), at least 2 (NVIDIA/nccl issue #689:
// "2 is the minimum").
constexpr int kMaxChannels = 32, kMinChannels = 2;
// HBM bytes per byte a collective moves on the bus. derived: each byte a GPU sends is read from its
// memory once and each byte it receives is written once (P2P/IPC read or write, GPUDirect RDMA);
// the Simple protocol's staging through the peer's FIFO would add more and is not counted.
constexpr double kHbmPerBusByte = 2;

double hd(const Model& m) {
  return m.head_dim > 0 ? m.head_dim : static_cast<double>(m.hidden) / m.heads;
}

}  // namespace

Precision resolve_precision(const topo::Node& gpu, Precision asked) {
  if (asked != Precision::kAuto) return asked;
  return gpu.fig("bf16_dense_tflops", -1) > 0 ? Precision::kBf16 : Precision::kFp16;
}

bool has_fused_attention(const topo::Node& gpu) { return !pre_ampere(gpu.part->attr("arch")); }

GpuSpec gpu_spec(const topo::Node& gpu, Precision precision) {
  GpuSpec g;
  g.part = gpu.part->id;
  precision = resolve_precision(gpu, precision);
  const char* field = precision == Precision::kFp8    ? "fp8_dense_tflops"
                      : precision == Precision::kBf16 ? "bf16_dense_tflops"
                                                      : "fp16_dense_tflops";
  double tf = gpu.fig(field, -1);
  if (tf <= 0) {
    if (precision == Precision::kFp8)
      throw InputError(fmt::format("{} has no FP8 tensor cores", g.part));
    if (precision == Precision::kBf16)
      throw InputError(fmt::format("{} has no BF16 tensor cores (use --precision fp16)", g.part));
    throw InputError(fmt::format("{} has no fp16_dense_tflops figure in the catalog", g.part));
  }
  g.peak_flops = tf * 1e12;
  g.fp8 = precision == Precision::kFp8;
  g.half_peak_flops = g.fp8 ? gpu.fig("bf16_dense_tflops", tf) * 1e12 : g.peak_flops;
  g.memory_bytes_per_s = gpu.fig("memory_bytes_per_s", 1e12);
  g.memory_bytes = gpu.fig("memory_bytes", 80.0 * (1ull << 30));
  g.sms = static_cast<int>(gpu.fig("sm_count", 100));
  g.arch = gpu.part->attr("arch");
  g.gemm_efficiency = gemm_efficiency_of(gpu, g.arch);
  g.burst_gemm_efficiency = gemm_efficiency_for(g.arch);
  if (pre_ampere(gpu.part->attr("arch"))) g.tile_m = kVoltaTileM;
  return g;
}

GemmTime gemm_parts(const GpuSpec& gpu, double m, double n, double k, double count,
                    double b_bytes) {
  GemmTime t;
  if (m <= 0 || n <= 0 || k <= 0 || count <= 0) return t;
  const double sms = gpu.sms;
  double tiles = std::ceil(m / gpu.tile_m) * std::ceil(n / kTileN) * count;
  // Full waves run one tile per SM; the tiles of a last, partial wave (all of them when there are
  // fewer tiles than SMs) split their k loop over the idle SMs, each slice at least kSplitKMinK
  // deep, and reduce their fp32 partial sums (written and read once).
  double full = std::floor(tiles / sms), rest = tiles - full * sms;
  double split = rest > 0 && full == 0
                     ? std::max(1.0, std::min(std::floor(sms / rest), std::floor(k / kSplitKMinK)))
                     : 1;
  double waves = full + (rest > 0 ? 1 / split : 0);
  double q = tiles / (waves * sms);
  double flops = 2 * m * n * k * count;
  double bytes = (2 * (m * k + m * n) + b_bytes * k * n) * count;
  if (split > 1) bytes += 2 * 4 * m * n * count * (rest / tiles) * split;
  t.compute_s = flops / (gpu.peak_flops * gpu.gemm_efficiency * q);
  t.memory_s = bytes / (gpu.memory_bytes_per_s * kGemmMemoryEfficiency);
  t.launch_s = kLaunchS;
  return t;
}

GpuSpec weight_gemm_gpu(GpuSpec g) {
  if (g.fp8 && g.peak_flops > g.half_peak_flops) g.gemm_efficiency *= kFp8GemmShareOfEta;
  return g;
}

double gemm_time(const GpuSpec& gpu, double m, double n, double k, double count, double b_bytes) {
  return gemm_parts(gpu, m, n, k, count, b_bytes).total();
}

double fused_attention_time(const GpuSpec& gpu, bool fa2_on_hopper, double full_flops, double keys,
                            bool backward) {
  if (full_flops <= 0 || keys <= 0) return 0;
  AttentionKernel k = attention_kernel(gpu, fa2_on_hopper);
  double peak = gpu.half_peak_flops > 0 ? gpu.half_peak_flops : gpu.peak_flops;
  double causal = full_flops / 2 * (backward ? kFlashBackwardFlops : 1);
  double tail = backward ? k.tail_bwd : k.tail_fwd;
  return causal * (1 + tail / keys) / (peak * (backward ? k.bwd : k.fwd)) + kLaunchS;
}

double memory_time(const GpuSpec& gpu, double bytes) {
  return bytes <= 0 ? 0 : bytes / gpu.memory_bytes_per_s + kLaunchS;
}

int nccl_channels(double busbw_Bps) {
  if (busbw_Bps <= 0) return 0;
  return std::clamp(static_cast<int>(std::ceil(busbw_Bps / kChannelBytesPerS)), kMinChannels,
                    kMaxChannels);
}

double comm_kernel_slowdown(const GpuSpec& gpu, double busbw_Bps, double mem_fraction) {
  if (busbw_Bps <= 0) return 0;
  double mu = std::clamp(mem_fraction, 0.0, 1.0);
  double sm_share =
      std::min(1.0, static_cast<double>(nccl_channels(busbw_Bps)) / std::max(1, gpu.sms));
  double hbm_share = std::min(1.0, kHbmPerBusByte * busbw_Bps / gpu.memory_bytes_per_s);
  return (1 - mu) * sm_share + mu * hbm_share;
}

double eager_kernel_share(EagerKernel k) {
  // derived: data/measured/h200-compute-shapes-2026-12-01 (compute.h), GB/s over 4,800.
  switch (k) {
    case EagerKernel::kElementwise:
      return 3478.0 / 4800;  // add: 0.72
    case EagerKernel::kActivation:
      return 2395.0 / 4800;  // GeLU: 0.50
    case EagerKernel::kSoftmax:
      return 3702.0 / 4800;  // fp32 softmax: 0.77
    case EagerKernel::kLayerNorm:
      return 1888.0 / 4800;  // 0.39
    case EagerKernel::kRmsNorm:
      return 2355.0 / 4800;  // F.rms_norm: 0.49
    case EagerKernel::kDropout:
      return 2218.0 / 4800;  // 0.46
    case EagerKernel::kSlicedSwiglu:
      return 1839.0 / 4800;  // 0.38
  }
  return 1;
}

void EagerOps::add(EagerKernel k, double b, double n) {
  bytes += b;
  peak_bytes += b / eager_kernel_share(k);
  kernels += n;
}

double eager_rms_norm_out(double in, double w) { return std::max(in, w); }

EagerOps eager_rms_norm(double in, double w) {
  EagerOps n;
  const auto e = EagerKernel::kElementwise;
  const bool cast = in != 4;
  if (cast) n.add(e, in + 4);                // to(float32)
  n.add(e, 8);                               // pow(2)
  n.add(e, 4);                               // mean(-1)
  n.add(e, 0, 2);                            // + eps, rsqrt: one value per row
  n.add(e, 8);                               // x * rsqrt(...)
  if (cast) n.add(e, 4 + in);                // to(input dtype)
  n.add(e, in + eager_rms_norm_out(in, w));  // weight * x
  return n;
}

EagerOps eager_swiglu() {
  EagerOps s;
  s.add(EagerKernel::kActivation, 2 + 2);   // silu(gate)
  s.add(EagerKernel::kElementwise, 4 + 2);  // * up
  return s;
}

namespace {

struct Dims {
  double S, s, h, d, a, g, f, t, sp, count;
  double cp = 1;          ///< context-parallel ranks: the ring's steps, each on s / cp of the keys
  double norm_bytes = 4;  ///< per element: one fused norm reads 2 and writes 2 bytes
  double act_bytes = 6;   ///< per element of f: gated activation read 4, write 2 (GeLU: 4)
  double add_bytes = 6;   ///< per element of h: residual add read 4, write 2
  double gelu_bytes = 4;  ///< per element of f: GeLU read 2, write 2
  /// Share of the HBM peak each element-wise part streams at (eager_kernel_share; 1 fused).
  double norm_share = 1, act_share = 1, add_share = 1, dropout_share = 1;
  /// Kernels a norm and a gated activation launch (eager RMSNorm: 8, eager SwiGLU: 2).
  double norm_kernels = 1, act_kernels = 1;
  bool eager = false;  ///< element-wise work as eager PyTorch kernels, each launched apart
};

// Element-wise bytes per element, fused or eager. Fused (Megatron's fused layer norm / SwiGLU
// kernels): a norm reads and writes once (4 bytes), SwiGLU reads gate and up and writes once (6).
// Eager PyTorch charges every kernel it launches at its kind's share (eager_kernel_share): the
// RMSNorm of Hugging Face's LlamaRMSNorm and torchtitan's RMSNorm is eight element-wise kernels
// (eager_rms_norm), SwiGLU silu then a product (eager_swiglu); LayerNorm is one kernel in eager
// PyTorch too (torch.nn.LayerNorm), as are GeLU, the residual add and dropout. Models with gated
// MLPs are taken to use RMSNorm (the Llama family).

// fp8 training (Transformer Engine, docs "Using FP8 with Transformer Engine"): only the linear
// layers' GEMMs run in fp8; each GEMM input is cast from bf16 (read 2 bytes, write 1), and in
// training the cast also writes the transposed copy the weight-gradient GEMM needs (cast_transpose:
// 4 bytes per element; LoRA has no weight gradient of the base: 3). Fused attention stays in 16-bit
// (TE's fp8 attention is opt-in).
double fp8_cast_bytes(const Job& job) { return job.mode == Mode::kLora ? 3 : 4; }

// The fused attention kernel a job's framework runs on Hopper: cuDNN's (Transformer Engine) or
// FlashAttention-2 (PyTorch SDPA's flash backend, the flash-attn package); framework.h.
bool fa2_on_hopper(const Job& job, const GpuSpec& gpu) {
  return gpu.arch == "hopper" && !framework_traits(job, Plan{}).hopper_attention;
}

// The causal core of one micro-batch, forward or backward, as Megatron-core runs it
// (FrameworkTraits::causal_attention): cp ring steps (one, the whole causal kernel, without
// context parallelism), each a kernel of its own on this GPU's S = s / cp tokens of each sequence.
// Every step computes 2c² scores of the chunk size c = s / 2cp (framework.cc): the S²/2 of a
// causal kernel of S queries on S keys, charged as that kernel, fused_attention_time of the
// whole S x S matrix with its tail at S keys (the steps of half the queries on all S arriving keys
// carry less tail per score: an upper bound there). cp steps of S²/2 are s·S/2: half the whole
// matrix.
double causal_core_time(const GpuSpec& gpu, bool fa2, const Dims& x, bool backward) {
  const double keys = x.s / x.cp;  // this GPU's tokens of one sequence
  const double step_full = 4 * x.S * keys * x.a / x.t * x.d;
  return x.cp * fused_attention_time(gpu, fa2, step_full, keys, backward);
}

GpuSpec half_precision(GpuSpec g) {
  g.peak_flops = g.half_peak_flops > 0 ? g.half_peak_flops : g.peak_flops;
  return g;
}

// The norm, residual add and (when the model has it) dropout of one block over its S x h / sp
// activations, each kind at its share of the HBM peak.
double elementwise_time(const GpuSpec& gpu, const Dims& x, bool dropout) {
  double elems = x.S * x.h / x.sp;
  double bytes = elems * (x.norm_bytes / x.norm_share + x.add_bytes / x.add_share +
                          (dropout ? 5 / x.dropout_share : 0));
  // memory_time charges one launch; eager PyTorch launches the norm's kernels, the add and the
  // dropout apart.
  double eager_launches = x.eager ? x.norm_kernels + (dropout ? 1 : 0) : 0;
  return memory_time(gpu, bytes) + eager_launches * kLaunchS;
}

// Attention block forward: QKV projection, attention core, output projection, norm, residual
// (seconds).
double attention_forward(const Model& m, const Job& job, const GpuSpec& gpu, const Dims& x,
                         bool core_only, double* flops, double* mem) {
  double core_flops = 4 * x.S * x.s * x.a / x.t * x.d;
  double core;
  if (job.flash_attention && framework_traits(job, Plan{}).causal_attention) {
    core = causal_core_time(gpu, fa2_on_hopper(job, gpu), x, false);
    core_flops /= 2;  // executed (the hardware FLOPs); model FLOPs count the whole matrix
  } else if (job.flash_attention) {
    // The PyTorch and DeepSpeed stacks: the whole s x s score matrix at the rates below, twice
    // what the causal kernel runs; charged causal, two of their rows leave the 15 % bound (MPT 13B
    // on 8 A100s +17.7 %, AutoModel's 70B LoRA on two boxes +19.8 %): a cost of theirs not found
    // yet, which this charge stands in for (docs/VALIDATION.md "Compute by shape").
    double eff = fa2_on_hopper(job, gpu) ? kFa2OnHopper : gpu.gemm_efficiency * kFlashFactor;
    core = core_flops / (half_precision(gpu).peak_flops * eff) + kLaunchS;
  } else {
    double heads = x.S / x.s * x.a / x.t;  // b·a/t score matrices
    double scores = heads * x.s * x.s;
    double softmax = memory_time(gpu, 4 * scores) + (m.dropout ? memory_time(gpu, 5 * scores) : 0);
    GpuSpec half = half_precision(gpu);
    core = gemm_time(half, x.s, x.s, x.d, heads) + gemm_time(half, x.s, x.d, x.s, heads) + softmax;
    *mem += softmax;
  }
  *flops += core_flops;
  if (core_only) return core;
  double qkv_n = (x.a + 2 * std::max(x.g, x.t)) * x.d / x.t;
  const GpuSpec w = weight_gemm_gpu(gpu);
  double proj = gemm_time(w, x.S, qkv_n, x.h) + gemm_time(w, x.S, x.h, x.a * x.d / x.t);
  *flops += 2 * x.S * qkv_n * x.h + 2 * x.S * x.h * x.a * x.d / x.t;
  double elementwise = elementwise_time(gpu, x, m.dropout);  // norm, add, dropout
  if (gpu.fp8)
    elementwise += memory_time(
        gpu, fp8_cast_bytes(job) * x.S * (x.h + x.a * x.d / x.t));  // QKV and proj inputs
  *mem += elementwise;
  return core + proj + elementwise;
}

// The MLP's down projection (each local expert's for MoE): its seconds and FLOPs, which an
// early-stopping recomputation leaves out (FrameworkTraits::recompute_early_stop).
struct DownProjection {
  double s = 0, flops = 0;
};

double mlp_forward(const Model& m, const Job& job, const GpuSpec& gpu, const Dims& x, double* flops,
                   double* mem, DownProjection* down) {
  double up_n = (m.gated_ffn ? 2 : 1) * x.f / x.t;
  double tokens = x.S * m.top_k;
  double per_expert = tokens / x.count;  // tokens each local expert sees (x.count local experts)
  const GpuSpec w = weight_gemm_gpu(gpu);
  down->s = gemm_time(w, per_expert, x.h, x.f / x.t, x.count);
  down->flops = 2 * tokens * x.h * x.f / x.t;
  double t = gemm_time(w, per_expert, up_n, x.h, x.count) + down->s;
  *flops += 2 * tokens * up_n * x.h + down->flops;
  if (m.moe()) {
    t += gemm_time(half_precision(gpu), x.S, m.experts, x.h);  // router (a 16-bit linear)
    *flops += 2 * x.S * x.h * m.experts;
  }
  double act_bytes = (m.gated_ffn ? x.act_bytes : x.gelu_bytes) * tokens * x.f / x.t;
  double elementwise = memory_time(gpu, act_bytes / x.act_share) +
                       (x.eager ? x.act_kernels - 1 : 0) * kLaunchS +
                       elementwise_time(gpu, x, m.dropout);
  if (gpu.fp8)
    elementwise += memory_time(
        gpu, fp8_cast_bytes(job) * (x.S * x.h + tokens * x.f / x.t));  // up and down inputs
  *mem += elementwise;
  return t + elementwise;
}

}  // namespace

// Context parallelism's ring (Transformer Engine's AttnFuncWithCP, which Megatron-core and NeMo
// run; NVIDIA/TransformerEngine transformer_engine/pytorch/attention.py, 2024 releases): each of
// the cp steps is a separate attention call on this GPU's queries against one K,V chunk, and its
// partial output is merged into the running one by its log-sum-exp (flash_attn_fwd_out_correction:
// out += out_per_step · exp(lse_per_step - lse), 16-bit: read the step's output, read and write the
// running one, 6 bytes an element); the backward adds each step's dq and dK,dV into the running
// gradients the same way (dq.add_(dq_), dkv.add_(dkv_): 6 bytes an element). With load-balanced
// causal chunks (two chunks a GPU, chunk i and 2·cp-1-i), step 0 is this GPU's own diagonal block
// (all its queries and keys), and each later step covers either all its queries against the
// first half of the arriving keys or the second half of its queries against all of them: on
// average over the ranks 3/4 of the queries and 3/4 of the K,V a step. Not counted: the per-step
// log-sum-exp update (one value a query row and head, 1/d of the output) and the contiguous copies
// of the half chunks.
RingMergeBytes cp_ring_merge_bytes(const Model& m, const Job& job, const Plan& p) {
  RingMergeBytes r;
  if (p.cp <= 1 || !job.flash_attention) return r;
  const int mb = p.micro_batch > 0 ? p.micro_batch : job.micro_batch;
  const double S = static_cast<double>(job.seq) * mb / p.cp, d = hd(m);
  const double q_elems = S * m.heads / p.tp * d;
  const double kv_elems = 2 * S * std::max(static_cast<double>(m.kv_heads), 1.0 * p.tp) / p.tp * d;
  const double steps = 1 + 0.75 * (p.cp - 1);  // the diagonal step whole, the others 3/4
  constexpr double kMergeBytes = 6;            // read the partial, read and write the running
  r.forward = kMergeBytes * q_elems * steps;
  r.backward = kMergeBytes * (q_elems + kv_elems) * steps;
  return r;
}

LayerCompute layer_compute(const Model& m, const Job& job, const Plan& p, const GpuSpec& gpu) {
  int mb = p.micro_batch > 0 ? p.micro_batch : job.micro_batch;
  // Context parallelism: each GPU holds seq/cp of every sequence's tokens (its GEMMs see S/cp
  // rows), and its queries attend over the whole sequence's keys (the ring brings them), so the
  // attention core's FLOPs are 1/cp of the sequence's (balanced causal chunks).
  Dims x{static_cast<double>(job.seq) * mb / p.cp,
         static_cast<double>(job.seq),
         static_cast<double>(m.hidden),
         hd(m),
         static_cast<double>(m.heads),
         static_cast<double>(m.kv_heads),
         static_cast<double>(m.ffn),
         static_cast<double>(p.tp),
         (p.sp && p.tp > 1) ? static_cast<double>(p.tp) : 1.0,
         m.moe() ? static_cast<double>(m.experts) / p.ep : 1.0};
  x.cp = p.cp;
  const FrameworkTraits fw = framework_traits(job, p);
  if (!fw.fused_elementwise) {
    // Each eager kernel at its kind's share: the gated (Llama) family's eight-kernel RMSNorm and
    // two-kernel SwiGLU (16-bit activations), else one LayerNorm and one GeLU kernel.
    x.eager = true;
    if (m.gated_ffn) {
      const EagerOps norm = eager_rms_norm(2, 2), act = eager_swiglu();
      x.norm_bytes = norm.bytes, x.norm_share = norm.share(), x.norm_kernels = norm.kernels;
      x.act_bytes = act.bytes, x.act_share = act.share(), x.act_kernels = act.kernels;
    } else {
      x.norm_share = eager_kernel_share(EagerKernel::kLayerNorm);
      x.act_share = eager_kernel_share(EagerKernel::kActivation);
    }
    x.add_share = eager_kernel_share(EagerKernel::kElementwise);
    x.dropout_share = eager_kernel_share(EagerKernel::kDropout);
  }
  const bool hf = job.framework == Framework::kHf;  // its element-wise work: hf_eager_layer
  if (hf) x.norm_bytes = x.act_bytes = x.add_bytes = x.gelu_bytes = 0, x.eager = false;
  LayerCompute c;
  double attn_flops = 0, mlp_flops = 0, core_flops = 0, core_mem = 0;
  c.attn_f = attention_forward(m, job, gpu, x, false, &attn_flops, &c.mem_f);
  DownProjection down;
  c.mlp_f = mlp_forward(m, job, gpu, x, &mlp_flops, &c.mem_f, &down);
  double core_f = attention_forward(m, job, gpu, x, true, &core_flops, &core_mem);
  c.flops_f = attn_flops + mlp_flops;
  {  // the GEMMs beside the TP collectives, as attention_forward and mlp_forward time them
    double qkv_n = (x.a + 2 * std::max(x.g, x.t)) * x.d / x.t;
    const GpuSpec w = weight_gemm_gpu(gpu);
    c.gemm_qkv = gemm_time(w, x.S, qkv_n, x.h);
    c.gemm_proj = gemm_time(w, x.S, x.h, x.a * x.d / x.t);
    c.sms = gpu.sms;
    if (!m.moe()) {
      c.gemm_up = gemm_time(w, x.S, (m.gated_ffn ? 2 : 1) * x.f / x.t, x.h);
      c.gemm_down = gemm_time(w, x.S, x.h, x.f / x.t);
    }
  }
  // What torchtitan's per-op checkpointing runs again (Recompute::kOp): the element-wise work of
  // both halves (norms, RoPE, activation, residual adds) and every even linear GEMM of the block.
  // Its policy (_custom_policy) counts the block's aten.mm calls afresh in each forward (the
  // context_fn makes a new count) and saves the odd ones' outputs: Q, K, V, O, then gate, up, down
  // (w1, w3, w2) recompute K, O and up; without gating (up, down) K, O and down. The attention
  // kernel's output is saved. A MoE block's experts run grouped GEMMs, not aten.mm: the whole MLP
  // (mlp_ew below holds it) runs again.
  const double attn_ew = std::max(0.0, c.attn_f - core_f - c.gemm_qkv - c.gemm_proj);
  const double mlp_ew = std::max(0.0, c.mlp_f - c.gemm_up - c.gemm_down);
  const double ew_mem = c.mem_f;
  const double kv_heads = std::max(x.g, x.t);  // as the QKV GEMM counts them (qkv_n above)
  const double op_attn_gemm = c.gemm_qkv * kv_heads / (x.a + 2 * kv_heads) + c.gemm_proj;
  const double op_mlp_gemm = m.moe() ? 0 : m.gated_ffn ? c.gemm_up / 2 : c.gemm_down;
  const double op_flops = 2 * x.S * x.h * (kv_heads + x.a) * x.d / x.t +
                          (m.moe() ? mlp_flops : 2 * x.S * x.h * x.f / x.t);
  // Backward: weight-matmul parts twice (input and weight gradients), once for LoRA's frozen
  // weights (input gradients only); the attention core twice, 2.5x when fused (Megatron's causal
  // kernels at their own backward rates and tails: causal_core_time); element-wise twice.
  bool lora = job.mode == Mode::kLora;
  double wfactor = lora ? 1.0 : 2.0;
  double core_b = !job.flash_attention  ? 2 * core_f
                  : fw.causal_attention ? causal_core_time(gpu, fa2_on_hopper(job, gpu), x, true)
                                        : core_f * kFlashBackwardFlops;
  c.attn_b = wfactor * (c.attn_f - core_f) + core_b;
  c.core_f = core_f, c.core_b = core_b;
  c.mlp_b = wfactor * c.mlp_f;
  c.flops_b = wfactor * (attn_flops - core_flops + mlp_flops) +
              (job.flash_attention ? kFlashBackwardFlops : 2.0) * core_flops;
  c.mem_b = 2 * c.mem_f;  // element-wise backward moves twice the forward bytes (header note)
  if (p.cp > 1 && job.flash_attention) {  // the ring's merges, one kernel launch a step
    const RingMergeBytes ring = cp_ring_merge_bytes(m, job, p);
    const double f = memory_time(gpu, ring.forward) + (p.cp - 1) * kLaunchS,
                 b = memory_time(gpu, ring.backward) + (p.cp - 1) * kLaunchS;
    c.attn_f += f, c.mem_f += f;
    c.attn_b += b, c.mem_b += b;
  }
  if (lora && job.base_weights == BaseWeights::kNf4) {
    // QLoRA dequantizes each frozen NF4 weight to bf16 before its GEMM, in the forward and again
    // for the input gradient (Dettmers et al. 2023, section 3): read 0.52 bytes, write 2, per
    // parameter.
    double layer_w = (m.attention_params() + m.experts * m.expert_params()) / (p.tp * p.ep);
    double t = memory_time(gpu, (base_weight_bytes(job) + 2) * layer_w);
    c.attn_f += t, c.attn_b += t, c.mem_f += t, c.mem_b += t;
  }
  if (lora) {  // adapters: rank-r matmuls on the targeted matrices, forward + 2x backward
    double per_token = 2 * lora_params(m, job.lora) / m.layers / p.tp;
    double t = 3 * x.S * per_token / (half_precision(gpu).peak_flops * gpu.gemm_efficiency) +
               6 * kLaunchS * job.lora.targets.size();
    c.attn_b += t * 2 / 3;
    c.attn_f += t / 3;
    c.flops_f += x.S * per_token;
    c.flops_b += 2 * x.S * per_token;
  }
  if (hf) hf_eager_layer(c, m, job, p, gpu.memory_bytes_per_s, kLaunchS);
  // The attention wrapper's unpad and pad copies (framework.h), before the recomputation, which
  // runs them again.
  auto [unpad_f, unpad_b] = attention_unpad_s(m, job, p, gpu.memory_bytes_per_s);
  c.attn_f += unpad_f, c.mem_f += unpad_f;
  c.attn_b += unpad_b, c.mem_b += unpad_b;
  if (job.recompute == Recompute::kFull) {
    c.attn_b += c.attn_f;
    c.mlp_b += c.mlp_f;
    c.flops_b += c.flops_f;
    c.mem_b += c.mem_f;
    if (fw.recompute_early_stop && !lora) {
      // The recomputation stops before the MLP's down projection (FrameworkTraits): its GEMM (each
      // local expert's for MoE) and FLOPs come off; the residual add after it, a few bytes an
      // element, is left in. Not under LoRA: PEFT's adapter matmuls run after the frozen down
      // projection (its lora_B the last to save a tensor), so the frozen GEMM is recomputed.
      c.mlp_b -= down.s;
      c.flops_b -= down.flops;
    }
  } else if (job.recompute == Recompute::kSelective) {
    // Megatron-core's selective recomputation (--recompute-granularity selective, module
    // core_attn) checkpoints the attention core: its backward runs the core's forward again,
    // fused or not (megatron/core/transformer/attention.py, checkpoint_core_attention ->
    // _checkpointed_attention_forward around core_attention, TEDotProductAttention included;
    // Transformer Engine's DotProductAttention(checkpoint_core_attention=True) does the same). The
    // fused kernel's backward recomputes the scores inside it as well: both are paid.
    c.attn_b += core_f;
    c.core_b += core_f;
    c.flops_b += core_flops;
    c.mem_b += core_mem;
  } else if (job.recompute == Recompute::kOp) {
    c.attn_b += attn_ew + op_attn_gemm;
    c.mlp_b += mlp_ew + op_mlp_gemm;
    c.flops_b += op_flops;
    c.mem_b += ew_mem;
  }
  // The framework's copies around its weight gathers and gradient reduce-scatters (framework.h),
  // once per gather: after the recomputation above, which reuses the backward's gather.
  auto [copy_f, copy_b] = framework_copy_s(m, job, p, gpu.memory_bytes_per_s);
  c.attn_f += copy_f, c.mem_f += copy_f;
  c.attn_b += copy_b, c.mem_b += copy_b;
  return c;
}

double metric_loss_time(const Model& m, const Job& job, const Plan& p, const GpuSpec& gpu) {
  const int passes = framework_traits(job, p).metric_loss_passes;
  if (passes <= 0) return 0;
  const int mb = p.micro_batch > 0 ? p.micro_batch : job.micro_batch;
  const double logits = static_cast<double>(job.seq) * mb / p.cp * m.vocab / p.tp;
  // One pass per logit as the eager loss of hf_stack.h runs it forward.
  const EagerOps ce = eager_cross_entropy_forward();
  return passes * (ce.peak_bytes * logits / gpu.memory_bytes_per_s + ce.kernels * kLaunchS);
}

double head_compute(const Model& m, const Job& job, const Plan& p, const GpuSpec& gpu) {
  int mb = p.micro_batch > 0 ? p.micro_batch : job.micro_batch;
  double S = static_cast<double>(job.seq) * mb / p.cp, V = static_cast<double>(m.vocab) / p.tp;
  // The output layer stays 16-bit in fp8 jobs: Megatron-core's is a tensor_parallel
  // ColumnParallelLinear, not a Transformer Engine module (megatron/core/models/gpt/gpt_model.py),
  // so it runs outside fp8_autocast's reach; torchtitan's float8 conversion skips "output"
  // (filter_fqns).
  double f = gemm_time(half_precision(gpu), S, V, m.hidden);
  double loss = memory_time(gpu, 10 * S * V);  // logits read, fp32 softmax written and read back
  double b = 2 * f;  // input and weight gradients of the output projection
  if (job.mode == Mode::kLora) b = f;
  if (job.framework == Framework::kHf)
    return hf_eager_head(f + b, m, job, p, gpu.memory_bytes_per_s, kLaunchS);
  return f + b + loss + metric_loss_time(m, job, p, gpu) +
         memory_time(gpu, 4 * S * m.hidden);  // embedding gather and its gradient
}

double fp8_weight_cast_time(double params, const GpuSpec& gpu) {
  // Transformer Engine casts each linear layer's bf16 weight to fp8 with its transpose (the dgrad
  // GEMM's operand) in one cast_transpose kernel: read 2 bytes, write 1 + 1. Megatron-core passes
  // is_first_microbatch to the TE modules (set_is_first_microbatch in the pipeline schedules), so
  // the cast runs on a step's first micro-batch and later ones reuse it: once a step. (Before that,
  // every micro-batch cast again: NVIDIA/Megatron-LM issue #629, "about 5%" of a NeMo 7B fp8 step
  // on the reporter's nsys timeline.) Delayed scaling's amax reductions and scale updates (one
  // small all-reduce of the amaxes and a multi-tensor update per forward and backward) are a few
  // tens of microseconds a micro-batch and not counted.
  return !gpu.fp8 || params <= 0 ? 0 : memory_time(gpu, 4 * params);
}

double optimizer_time(double params, const GpuSpec& gpu, double bytes_per_param, double share) {
  // A fused AdamW reads fp32 master, m, v and the bf16 gradient, writes master, m, v and the bf16
  // weight: 28 bytes; frameworks that step in eager PyTorch move more, and PyTorch's optimizer
  // kernels stream them below the peak (FrameworkTraits).
  return params <= 0 || share <= 0 ? 0 : memory_time(gpu, bytes_per_param * params / share);
}

double model_flops_per_token(const Model& m, const Job& job) {
  double fwd = m.forward_flops_per_token(job.seq);
  if (job.mode != Mode::kLora) return 3 * fwd;
  double core = m.layers * m.attention_core_flops_per_token(job.seq);
  double adapters = 2 * lora_params(m, job.lora);
  return fwd + (fwd - core) + 2 * core + 3 * adapters;
}

}  // namespace linkwise::work
