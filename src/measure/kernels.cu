#include <cstdint>

#include "measure/kernels.h"

namespace linkwise::measure::detail {

namespace {

constexpr int kThreads = 512;

__global__ void copy_kernel(uint4* __restrict__ dst, const uint4* __restrict__ src, std::size_t n16,
                            unsigned char* dst_tail, const unsigned char* src_tail,
                            std::size_t tail) {
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (; i < n16; i += stride) dst[i] = src[i];
  if (blockIdx.x == 0 && threadIdx.x < tail) dst_tail[threadIdx.x] = src_tail[threadIdx.x];
}

__device__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(volatile int* flag, int target) {
  std::uint64_t start = global_ns();
  while (*flag < target && global_ns() - start < 10'000'000'000ull) {
  }
}

__global__ void fill_kernel(float* p, std::size_t n, float v) {
  std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    p[i] = v;
}

__global__ void count_ne_kernel(const float* p, std::size_t n, float v,
                                unsigned long long* counter) {
  unsigned long long c = 0;
  std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    c += p[i] != v;
  if (c) atomicAdd(counter, c);
}

}  // namespace

cudaError_t launch_copy(void* dst, const void* src, std::size_t bytes, int sm_count,
                        cudaStream_t s) {
  std::size_t n16 = bytes / 16, tail = bytes % 16;
  int blocks = sm_count > 0 ? sm_count * 4 : 128;
  auto* d = static_cast<unsigned char*>(dst);
  const auto* sp = static_cast<const unsigned char*>(src);
  copy_kernel<<<blocks, kThreads, 0, s>>>(reinterpret_cast<uint4*>(d),
                                          reinterpret_cast<const uint4*>(sp), n16, d + n16 * 16,
                                          sp + n16 * 16, tail);
  return cudaGetLastError();
}

cudaError_t launch_spin(volatile int* flag, int target, cudaStream_t s) {
  spin_kernel<<<1, 1, 0, s>>>(flag, target);
  return cudaGetLastError();
}

cudaError_t launch_fill(float* p, std::size_t count, float value, cudaStream_t s) {
  if (count == 0) return cudaSuccess;
  fill_kernel<<<256, kThreads, 0, s>>>(p, count, value);
  return cudaGetLastError();
}

cudaError_t launch_count_ne(const float* p, std::size_t count, float expected,
                            unsigned long long* counter, cudaStream_t s) {
  if (count == 0) return cudaSuccess;
  count_ne_kernel<<<256, kThreads, 0, s>>>(p, count, expected, counter);
  return cudaGetLastError();
}

}  // namespace linkwise::measure::detail
