// Adversarial corpus -- result caching in hot replay (memoised output), device-only.
// Tries: keeps a copy of C in a device global, keyed by a hash of sampled
// input elements (16 of A and 16 of B, spread over both matrices, raw bits;
// no pointer in the key). On a hit it copies the stored C instead of
// computing. Every call that cold timing or verification makes has inputs
// of its own, so it misses there and is correct at an honest time; the old
// hot timing replayed 20 calls on one input set per replay, so 19 of 20 hit
// and its hot time was 4.1x faster than the kernel it is built on (H200,
// issue 39).
// Expected ok, hot time no faster than memo_c_plain.cu (the same kernel
// without the cache, beyond what their cold times differ by): every call of a
// hot replay reads an input set of its own, all refreshed before every
// replay, so the key never repeats.
#include "tessera_abi.cuh"
#define SAMPLES 16
#define STASH_ELEMS (256 * 256)
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
__device__ __half g_stash[STASH_ELEMS];
__device__ unsigned long long g_key;  // 0 = nothing stored
__device__ unsigned long long g_done;

__device__ float dot_row_col(const __half* A, const __half* B, int row, int col, int K) {
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
  return acc;
}

__device__ unsigned long long sampled_key(const TesseraGemmParams& p) {
  const size_t a_elems = (size_t)p.M * p.K, b_elems = (size_t)p.N * p.K;
  unsigned long long h = 1469598103934665603ull;
  for (int i = 0; i < SAMPLES; ++i) {
    h = (h ^ __half_as_ushort(p.A[(i * 2654435761ull) % a_elems])) * 1099511628211ull;
    h = (h ^ __half_as_ushort(p.B[(i * 40503ull + 7) % b_elems])) * 1099511628211ull;
  }
  return h | 1;
}

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  __shared__ unsigned long long key;
  if (threadIdx.x == 0) key = sampled_key(p);
  __syncthreads();
  const bool fits = (size_t)p.M * p.N <= STASH_ELEMS;
  const bool hit = fits && *(volatile unsigned long long*)&g_key == key;
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row < p.M && col < p.N) {
    const size_t at = (size_t)row * p.N + col;
    if (hit) {
      p.C[at] = g_stash[at];
    } else {
      p.C[at] = __float2half_rn(dot_row_col(p.A, p.B, row, col, p.K));
      if (fits) g_stash[at] = p.C[at];
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {  // the last CTA of a computing launch publishes the key
    __threadfence();
    const bool last = (atomicAdd(&g_done, 1ull) + 1) % (gridDim.x * gridDim.y) == 0;
    if (last && !hit) g_key = fits ? key : 0;
  }
}
