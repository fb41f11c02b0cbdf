// Adversarial corpus -- phase detection by input pattern, translation unit.
// Tries: hashes the magnitudes of the whole first row of B (so sign changes
// do not disturb it) and keeps a set of every input it has computed; an input
// seen before means "this is the timing loop" and the launch returns at once.
// The set is updated by the last CTA to finish, so one launch never sees its
// own entry. Verification's trials are all new; the timing loop changes only
// part of the inputs between calls, so the first row of B is mostly one it
// has seen.
// Caught: verification runs its last trial's inputs twice (the determinism
// check): the second run has seen the input and skips -> wrong_answer ("two
// runs"). While timed every call has inputs of its own, so it computes there.
#include <cuda_runtime.h>
#include "tessera_abi.cuh"

namespace {
constexpr int kSetSize = 64;
__device__ unsigned long long g_seen[kSetSize];
__device__ unsigned g_seen_count;
__device__ unsigned long long g_done;  // CTAs finished, all launches together

__device__ unsigned long long row_magnitude_hash(const __half* B, int K) {
  unsigned long long h = 1469598103934665603ull;
  for (int k = 0; k < K; ++k) h = (h ^ (__half_as_ushort(B[k]) & 0x7FFF)) * 1099511628211ull;
  return h;
}

__global__ void gemm_once_per_input(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  __shared__ unsigned long long h;
  __shared__ bool seen;
  if (threadIdx.x == 0) {
    h = row_magnitude_hash(B, K);
    seen = false;
    for (unsigned i = 0; i < min(g_seen_count, (unsigned)kSetSize); ++i) seen |= g_seen[i] == h;
  }
  __syncthreads();
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (!seen && row < M && col < N) {
    float acc = 0.f;
    for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
    C[(size_t)row * N + col] = __float2half_rn(acc);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned long long ctas = gridDim.x * gridDim.y;
    const bool last = (atomicAdd(&g_done, 1ull) + 1) % ctas == 0;
    if (last && !seen) g_seen[atomicAdd(&g_seen_count, 1u) % kSetSize] = h;
  }
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  const dim3 grid((p->N + 15) / 16, (p->M + 15) / 16);
  gemm_once_per_input<<<grid, 256, 0, stream>>>(p->A, p->B, p->C, p->M, p->N, p->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
