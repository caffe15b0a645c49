// What one thread block moves through pinned host memory with SM loads and stores: the data path of
// one NCCL SHM channel (src/transport/shm.cc: the sender's SMs store into a host buffer, the
// receiver's SMs load from it; a middle rank of a ring loads from one host buffer, adds its own
// data and stores into the next). Each block streams its own slice; per configuration the payload
// rate of the block (bytes of payload / time) is printed as CSV.
//
//   nvcc -O3 -arch=sm_90 -o gpu-shm-channel scripts/gpu-shm-channel.cu && ./gpu-shm-channel >
//   out.csv
//
// Modes: load (host -> device: SM loads from host memory), store (device -> host: SM stores into
// host memory), both (host -> add -> host: what a middle rank of a host-staged ring does).
// Columns: mode, threads per block, unroll (16-byte loads in flight a thread), blocks, payload
// bytes per block, seconds (median of 5), payload GB/s per block, GB/s all blocks.
// Purpose (docs/VALIDATION.md, "Rows 22-24"): whether one block's SM access to host memory is what
// holds a host-staged NCCL channel to about 7 GB/s (Gen5) and how it scales with threads (NCCL runs
// 256 or 512 a channel) and unroll (4 before SM80, 8 from it, 6 on SM120). Prepared; not yet run.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                      \
  do {                                                                                \
    cudaError_t e = (x);                                                              \
    if (e != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

enum Mode { kLoad = 0, kStore = 1, kBoth = 2 };

template <int Unroll>
__global__ void stream(const int4* src, const int4* local, int4* dst, size_t per_block) {
  const size_t base = blockIdx.x * per_block;
  const size_t step = static_cast<size_t>(blockDim.x) * Unroll;
  for (size_t i = threadIdx.x; i < per_block; i += step) {
    int4 v[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const size_t k = i + static_cast<size_t>(u) * blockDim.x;
      v[u] = k < per_block ? __ldcv(src + base + k) : make_int4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const size_t k = i + static_cast<size_t>(u) * blockDim.x;
      if (k < per_block) {
        const int4 w = local[base + k];
        dst[base + k] = make_int4(v[u].x + w.x, v[u].y + w.y, v[u].z + w.z, v[u].w + w.w);
      }
    }
  }
}

int main() {
  const size_t per_block_bytes = 64ull << 20;  // 64 MiB a block
  const int max_blocks = 8;
  const size_t n = per_block_bytes / sizeof(int4) * max_blocks;
  int4 *h_src = nullptr, *h_dst = nullptr, *d_src = nullptr, *d_dst = nullptr, *d_local = nullptr;
  CHECK(cudaHostAlloc(&h_src, n * sizeof(int4), cudaHostAllocMapped | cudaHostAllocPortable));
  CHECK(cudaHostAlloc(&h_dst, n * sizeof(int4), cudaHostAllocMapped | cudaHostAllocPortable));
  std::fill(reinterpret_cast<char*>(h_src), reinterpret_cast<char*>(h_src + n), 1);
  std::fill(reinterpret_cast<char*>(h_dst), reinterpret_cast<char*>(h_dst + n), 0);
  int4 *hs_dev = nullptr, *hd_dev = nullptr;
  CHECK(cudaHostGetDevicePointer(&hs_dev, h_src, 0));
  CHECK(cudaHostGetDevicePointer(&hd_dev, h_dst, 0));
  CHECK(cudaMalloc(&d_src, n * sizeof(int4)));
  CHECK(cudaMalloc(&d_dst, n * sizeof(int4)));
  CHECK(cudaMalloc(&d_local, n * sizeof(int4)));
  CHECK(cudaMemset(d_src, 1, n * sizeof(int4)));
  CHECK(cudaMemset(d_local, 2, n * sizeof(int4)));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# %s, %d SMs, PCI %04x:%02x:%02x\n", prop.name, prop.multiProcessorCount,
              prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
  std::printf("mode,threads,unroll,blocks,bytes_per_block,seconds,GBps_per_block,GBps_total\n");
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  const char* names[] = {"load", "store", "both"};
  for (int mode = 0; mode < 3; ++mode)
    for (int threads : {256, 512})
      for (int unroll : {4, 8})
        for (int blocks : {1, 2, 4, 8, 16, 132}) {
          // Up to 8 blocks each stream 64 MiB; more blocks split the 512 MiB buffers (132: one a
          // streaming multiprocessor of an H200, the whole GPU's rate for comparison).
          const size_t per_block =
              blocks <= max_blocks ? per_block_bytes / sizeof(int4) : n / blocks;
          const int4* src = mode == kStore ? d_src : hs_dev;
          int4* dst = mode == kLoad ? d_dst : hd_dev;
          std::vector<float> ms;
          for (int rep = 0; rep < 6; ++rep) {
            CHECK(cudaEventRecord(a));
            if (unroll == 4)
              stream<4><<<blocks, threads>>>(src, d_local, dst, per_block);
            else
              stream<8><<<blocks, threads>>>(src, d_local, dst, per_block);
            CHECK(cudaEventRecord(b));
            CHECK(cudaEventSynchronize(b));
            CHECK(cudaGetLastError());
            float t = 0;
            CHECK(cudaEventElapsedTime(&t, a, b));
            if (rep > 0) ms.push_back(t);  // the first is a warm-up
          }
          std::sort(ms.begin(), ms.end());
          const double s = ms[ms.size() / 2] / 1e3;
          const double per = per_block * sizeof(int4) / s / 1e9;
          std::printf("%s,%d,%d,%d,%zu,%.6f,%.3f,%.3f\n", names[mode], threads, unroll, blocks,
                      per_block * sizeof(int4), s, per, per * blocks);
          std::fflush(stdout);
        }
  return 0;
}
