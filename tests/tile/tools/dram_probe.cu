// DRAM read probe (a diagnostic, docs/tile.md): how fast 96-192 CTAs stream
// a 6144 x 8192-byte matrix (an fp16 weight of K = 4096) when each CTA reads
// a panel of rows, C bytes of each row per step (a TMA box of 64 fp16
// columns is C = 128), either cold as the harness times (the L2 overwritten
// first, so it is full of dirty lines) or clean (another buffer read first).
// Times from %globaltimer, the first CTA's start to the last one's end; the
// median of 7 launches.
//   nvcc -O3 -arch=sm_90a -o dram_probe tests/tile/tools/dram_probe.cu && ./dram_probe
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t ce_ = (x); if (ce_ != cudaSuccess) { printf("err %s line %d\n", cudaGetErrorString(ce_), __LINE__); return 1; } } while (0)
__device__ unsigned long long t_start[1024], t_end[1024];
__device__ __forceinline__ unsigned long long gt() { unsigned long long v; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v)); return v; }
// Each CTA: rows [b*P, b*P+P) of the matrix, all of their bytes, C bytes of each row per step.
__global__ void __launch_bounds__(1024) panel(const uint4* W, size_t row16, int P, int C16, int* sink) {
  if (threadIdx.x == 0) t_start[blockIdx.x] = gt();
  const int per_step = P * C16;            // 16-byte loads per step
  const int steps = int(row16 / C16);
  const size_t base_row = size_t(blockIdx.x) * P;
  uint4 acc = {0, 0, 0, 0};
  const int total = per_step * steps;
  int i = threadIdx.x;
  for (; i + 7 * 1024 < total; i += 8 * 1024) {
    uint4 v[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      const int j = i + u * 1024, step = j / per_step, r = (j % per_step) / C16, c = j % C16;
      v[u] = __ldcg(W + (base_row + r) * row16 + size_t(step) * C16 + c);
    }
#pragma unroll
    for (int u = 0; u < 8; ++u) acc.x ^= v[u].x, acc.y ^= v[u].y, acc.z ^= v[u].z, acc.w ^= v[u].w;
  }
  for (; i < total; i += 1024) {
    const int step = i / per_step, r = (i % per_step) / C16, c = i % C16;
    uint4 v = __ldcg(W + (base_row + r) * row16 + size_t(step) * C16 + c);
    acc.x ^= v.x;
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x12345678) sink[0] = 1;
  __syncthreads();
  if (threadIdx.x == 0) t_end[blockIdx.x] = gt();
}
int main() {
  const size_t rows = 6144, row_bytes = 8192, bytes = rows * row_bytes;
  int l2 = 0; CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  void *W, *W2, *scrub; int* sink;
  CK(cudaMalloc(&W, bytes)); CK(cudaMalloc(&W2, bytes)); CK(cudaMalloc(&scrub, 2 * size_t(l2))); CK(cudaMalloc(&sink, 4));
  CK(cudaMemset(W, 1, bytes)); CK(cudaMemset(W2, 2, bytes));
  std::vector<unsigned long long> s(1024), e(1024);
  printf("matrix %zu MB, L2 %d MB\n", bytes >> 20, l2 >> 20);
  for (int P : {64, 48, 32}) for (int C : {128, 256, 512, 1024}) for (int mode = 0; mode < 2; ++mode) {
    const int ctas = int(rows / P);
    std::vector<double> us;
    for (int rep = 0; rep < 7; ++rep) {
      if (mode == 0) CK(cudaMemset(scrub, rep + 1, 2 * size_t(l2)));          // cold: L2 full of dirty lines
      else panel<<<48, 1024>>>((const uint4*)W2, row_bytes / 16, 128, 8, sink); // clean: another buffer read
      panel<<<ctas, 1024>>>((const uint4*)W, row_bytes / 16, P, C / 16, sink);
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpyFromSymbol(s.data(), t_start, 8 * ctas)); CK(cudaMemcpyFromSymbol(e.data(), t_end, 8 * ctas));
      us.push_back((*std::max_element(e.begin(), e.begin() + ctas) - *std::min_element(s.begin(), s.begin() + ctas)) / 1e3);
    }
    std::sort(us.begin(), us.end());
    printf("rows/CTA %3d CTAs %3d chunk %4d B %-5s: %7.2f us  %5.2f TB/s (min %.2f)\n", P, ctas, C, mode ? "clean" : "cold",
           us[3], bytes / us[3] / 1e6, us[0]);
  }
  return 0;
}
