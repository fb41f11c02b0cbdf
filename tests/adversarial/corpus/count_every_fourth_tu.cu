// Adversarial corpus -- launch counting (device-side counter), translation unit.
// Tries: honest for its first HONEST_LAUNCHES launches, then computes only
// one launch in four and returns at once in the other three: a cheaper
// cheat hoping a check lands on a computed launch (the output of an earlier
// launch is still there under the old protocol).
// Caught: every timed launch starts from a poisoned C; random timed launches
// are checked, so three in four checks see poison -> wrong_answer ("timed").
#include <cuda_runtime.h>
#include "tessera_abi.cuh"
#define HONEST_LAUNCHES 6

namespace {
__device__ unsigned long long g_ctas;

__global__ void gemm_sometimes(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  __shared__ unsigned long long launch;
  if (threadIdx.x == 0) launch = atomicAdd(&g_ctas, 1ull) / (gridDim.x * gridDim.y);
  __syncthreads();
  if (launch >= HONEST_LAUNCHES && launch % 4 != 0) return;
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
  C[(size_t)row * N + col] = __float2half_rn(acc);
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  const dim3 grid((p->N + 15) / 16, (p->M + 15) / 16);
  gemm_sometimes<<<grid, 256, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
