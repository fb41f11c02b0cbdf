// Adversarial corpus -- partial work (rows), translation unit.
// Tries: honest for HONEST_LAUNCHES launches, then the last SKIPPED_ROWS
// rows of C are left out (the CTAs of that tile row return at once).
// Caught: poisoned C before every timed launch, random timed launches
// checked element by element -> wrong_answer ("timed").
#include <cuda_runtime.h>
#include "tessera_abi.cuh"
#define HONEST_LAUNCHES 6
#define SKIPPED_ROWS 16

namespace {
__device__ unsigned long long g_ctas;

__global__ void gemm_most_rows(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  __shared__ unsigned long long launch;
  if (threadIdx.x == 0) launch = atomicAdd(&g_ctas, 1ull) / (gridDim.x * gridDim.y);
  __syncthreads();
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  const int rows = launch < HONEST_LAUNCHES ? M : M - SKIPPED_ROWS;
  if (row >= rows || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
  C[(size_t)row * N + col] = __float2half_rn(acc);
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  const dim3 grid((p->N + 15) / 16, (p->M + 15) / 16);
  gemm_most_rows<<<grid, 256, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
