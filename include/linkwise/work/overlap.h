// Compute beside NCCL kernels, kernel by kernel: persistent GEMMs split into two waves.
//
// An NCCL collective runs as one kernel that holds C SMs (one CTA per channel, nccl_channels in
// compute.h) from its start to its end. Kernels launched with one CTA per output tile (element-wise
// work, attention, and the GEMMs of Ampere and older) lose the SMs it holds and a share of the HBM:
// they progress at 1 - σ while it runs (comm_kernel_slowdown, compute.h).
//
// cuBLAS's Hopper GEMMs are persistent: they launch one CTA per SM, each CTA working through its
// share of the output tiles in a row (pytorch/pytorch PR #144974: "Newer matmul kernels, e.g. those
// targeting Hopper GPUs, sometime use a persistent schedule which consists in launching as many
// CUDA blocks as there are SMs on the GPU"; issue #143988: FSDP training on H100, "the matmuls
// take 2x as long to complete when they are overlapped with a NCCL kernel", every matmul
// persistent). Launched while an NCCL kernel holds C SMs, N - C of its N CTAs start and the other
// C wait for an SM: they start when the NCCL kernel ends or the first CTAs finish, whichever comes
// first, and then take the GEMM's whole time w again. A GEMM started at t beside a collective that
// ends at t_e:
//
//     end = min(t_e, t + w) + w            (its time alone: t + w)
//
// so a GEMM shorter than the collective takes twice its time, and one longer loses the
// collective's remaining time whole: between a/2 and a of a collective's time a is lost, against
// C/N (about a quarter) for one-CTA-per-tile kernels. The other way round, an NCCL kernel that
// becomes ready while a persistent GEMM holds every SM starts when that GEMM's first CTAs finish.
// Collectives beside the same compute run one after another (one NCCL stream per process group)
// from the compute's start. PyTorch's SM carve-out for cuBLAS (`torch._C._set_sm_carveout_
// experimental`, PR #147966, 2025; off by default) is what avoids the second wave; not modelled.
// The GEMMs are taken to fill the GPU (at least N - C CTAs: training shapes have hundreds of
// tiles, and split-K fills the SMs of smaller outputs).
#pragma once

#include <vector>

#include "linkwise/work/compute.h"

namespace linkwise::work {

/// One kernel of a layer's compute, in issue order.
struct OverlapKernel {
  double seconds = 0;       ///< its time alone
  bool persistent = false;  ///< a persistent GEMM (one CTA per SM)
  double mem_fraction = 0;  ///< memory-bound share (μ of comm_kernel_slowdown)
};

/// One collective beside the compute: its time alone and its bus bandwidth (which sets its
/// channels and HBM traffic).
struct OverlapCollective {
  double seconds = 0;
  double busbw_Bps = 0;
};

/// Whether a GPU's dense GEMMs (cuBLAS) are persistent kernels: Hopper (header note).
bool persistent_gemms(const GpuSpec& gpu);

/// Seconds the kernels take beyond their own time when the collectives run one after another
/// beside them from the first kernel's start (header note); kernels after the last collective's
/// end run at their own speed.
double compute_lost_beside_s(const GpuSpec& gpu, const std::vector<OverlapKernel>& kernels,
                             const std::vector<OverlapCollective>& collectives);

/// Share of a collective's time that the compute beside it loses, the collective starting with
/// `kernels` (one layer's) and running beside as many of its layers, the kernels repeated, as its
/// time spans: Σ lost / a while it ends among them. A collective longer than 64 layers' kernels
/// loses their steady share, lost / (their time + lost), for the rest. Charged against one layer
/// alone (lost / a), a collective longer than the layer would be charged only that layer's loss.
double share_lost_beside(const GpuSpec& gpu, const std::vector<OverlapKernel>& kernels,
                         const OverlapCollective& collective);

/// One layer's forward (or backward) for one micro-batch as kernels: the four weight GEMMs
/// (persistent where persistent_gemms) in issue order and the rest of each block between them,
/// memory-bound in the layer's proportion. Backward: each weight GEMM twice (input and weight
/// gradients; once for LoRA's frozen weights), after the recomputed forward under full
/// recomputation.
std::vector<OverlapKernel> layer_kernels(const LayerCompute& lc, const GpuSpec& gpu, const Job& job,
                                         bool backward);

}  // namespace linkwise::work
