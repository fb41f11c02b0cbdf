// Adversarial corpus -- result caching in hot replay (memoised outputs, a ring of 32), translation unit.
// Tries: keeps the last 32 outputs in device globals, each keyed by a hash of
// sampled input elements (16 of A and 16 of B, raw bits), and copies the one
// whose key matches. Against a harness that rotated a fixed pool of input
// sets through hot replay (fewer than 32, never refreshed), every call after
// the first pass would hit.
// Expected ok, hot time no faster than memo_c_plain_tu.cu (the same kernel
// without the cache, beyond what their cold times differ by): every input set
// of a hot replay is refreshed before every replay, so no key ever repeats.
#include <cuda_runtime.h>
#include "tessera_abi.cuh"

namespace {
constexpr int kSamples = 16;
constexpr int kEntries = 32;
constexpr size_t kStashElems = 256 * 256;
__device__ __half g_ring[kEntries][kStashElems];
__device__ unsigned long long g_keys[kEntries];  // 0 = empty
__device__ unsigned long long g_next;             // the entry the next computing launch fills
__device__ unsigned long long g_done;

__device__ float dot_row_col(const __half* A, const __half* B, int row, int col, int K) {
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
  return acc;
}

__device__ unsigned long long sampled_key(const __half* A, const __half* B, int M, int N, int K) {
  const size_t a_elems = (size_t)M * K, b_elems = (size_t)N * K;
  unsigned long long h = 1469598103934665603ull;
  for (int i = 0; i < kSamples; ++i) {
    h = (h ^ __half_as_ushort(A[(i * 2654435761ull) % a_elems])) * 1099511628211ull;
    h = (h ^ __half_as_ushort(B[(i * 40503ull + 7) % b_elems])) * 1099511628211ull;
  }
  return h | 1;
}

__global__ void gemm_memo(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  __shared__ unsigned long long key;
  __shared__ int entry;  // the matching entry, or -1
  __shared__ unsigned long long slot;
  if (threadIdx.x == 0) {
    key = sampled_key(A, B, M, N, K);
    entry = -1;
    for (int e = 0; e < kEntries; ++e)
      if (*(volatile unsigned long long*)&g_keys[e] == key) entry = e;
    slot = *(volatile unsigned long long*)&g_next % kEntries;
  }
  __syncthreads();
  const bool fits = (size_t)M * N <= kStashElems;
  const bool hit = fits && entry >= 0;
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row < M && col < N) {
    const size_t at = (size_t)row * N + col;
    if (hit) {
      C[at] = g_ring[entry][at];
    } else {
      C[at] = __float2half_rn(dot_row_col(A, B, row, col, K));
      if (fits) g_ring[slot][at] = C[at];
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {  // the last CTA of a computing launch publishes the entry
    __threadfence();
    const bool last = (atomicAdd(&g_done, 1ull) + 1) % (gridDim.x * gridDim.y) == 0;
    if (last && !hit && fits) {
      g_keys[slot] = key;
      g_next = g_next + 1;
    }
  }
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  const dim3 grid((p->N + 15) / 16, (p->M + 15) / 16);
  gemm_memo<<<grid, 256, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
