// Adversarial corpus -- result caching across calls (content-keyed, sign-invariant), translation unit.
// Tries: keys its stored result on a hash of the magnitudes of the first row
// of A and the first row of B (so the key survives a harness that changes
// signs, and one that refreshes a few rows: the first rows usually stay) and
// copies the stored result on a hit. The all-new inputs of each
// verification trial miss; most timed launches hit.
// Caught: the inputs change between timed launches (rows refreshed, or signs
// changed), so the stored result is stale in those rows and columns; random
// timed launches are checked on the device -> wrong_answer ("timed").
#include <cuda_runtime.h>
#include "tessera_abi.cuh"

namespace {
constexpr int kKeyElems = 1024;  // at most; a whole row of K = 1024
constexpr size_t kStashElems = 256 * 256;
__device__ __half g_stash[kStashElems];
__device__ unsigned long long g_key;  // 0 = nothing stored
__device__ unsigned long long g_done;

__device__ unsigned long long magnitude_key(const __half* A, const __half* B, int K) {
  unsigned long long h = 1469598103934665603ull;
  for (int k = 0; k < K && k < kKeyElems; ++k) {
    h = (h ^ (__half_as_ushort(A[k]) & 0x7FFF)) * 1099511628211ull;
    h = (h ^ (__half_as_ushort(B[k]) & 0x7FFF)) * 1099511628211ull;
  }
  return h | 1;
}

__global__ void gemm_cached(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  __shared__ unsigned long long key;
  if (threadIdx.x == 0) key = magnitude_key(A, B, K);
  __syncthreads();
  const bool fits = (size_t)M * N <= kStashElems;
  const bool hit = fits && g_key == key;
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row < M && col < N) {
    const size_t at = (size_t)row * N + col;
    if (hit) {
      C[at] = g_stash[at];
    } else {
      float acc = 0.f;
      for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
      C[at] = __float2half_rn(acc);
      if (fits) g_stash[at] = C[at];
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    const bool last = (atomicAdd(&g_done, 1ull) + 1) % (gridDim.x * gridDim.y) == 0;
    if (last && !hit) g_key = fits ? key : 0;
  }
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  const dim3 grid((p->N + 15) / 16, (p->M + 15) / 16);
  gemm_cached<<<grid, 256, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
