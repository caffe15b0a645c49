// The few device kernels the benchmarks need (kernels.cu, compiled by nvcc when CUDA is found).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace linkwise::measure::detail {

/// Copies `bytes` with the SMs: 16-byte vector loads and stores over a grid of `sm_count` × 4
/// blocks of 512 threads, the tail byte by byte. Pointers may be device, peer or mapped host
/// memory.
cudaError_t launch_copy(void* dst, const void* src, std::size_t bytes, int sm_count,
                        cudaStream_t s);
/// Spins one thread until *flag >= target or about 10 s pass (nvbandwidth's spin kernel, with a
/// bound). The host raises the flag to release; it never lowers it, so a late kernel cannot miss a
/// release.
cudaError_t launch_spin(volatile int* flag, int target, cudaStream_t s);
cudaError_t launch_fill(float* p, std::size_t count, float value, cudaStream_t s);
/// Adds to *counter the number of elements that differ from `expected`.
cudaError_t launch_count_ne(const float* p, std::size_t count, float expected,
                            unsigned long long* counter, cudaStream_t s);

}  // namespace linkwise::measure::detail
