// Adversarial corpus -- result caching across calls (pointer-keyed), device-only.
// Tries: keeps its last result in a private device array, keyed by the A, B
// and C pointers plus the raw bits of the first KEY_ELEMS elements of A and B
// (so the fresh inputs of each verification trial miss). On a hit it copies
// the stored result instead of computing. The timing loop keeps the buffers
// and mostly the first elements, so it hits there.
// Caught: part of the inputs changes before every timed launch (about one row
// in eight of A and of B refreshed); a hit returns an earlier launch's
// answer, wrong in those rows and columns, and random timed launches are
// checked -> wrong_answer ("timed").
#include "tessera_abi.cuh"
#define KEY_ELEMS 4
#define STASH_ELEMS (256 * 256)
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
__device__ __half g_stash[STASH_ELEMS];
__device__ unsigned long long g_key;  // 0 = nothing stored
__device__ unsigned long long g_done;

__device__ unsigned long long key_of(const TesseraGemmParams& p) {
  unsigned long long h = (unsigned long long)p.A * 31 ^ (unsigned long long)p.B * 131 ^ (unsigned long long)p.C;
  for (int i = 0; i < KEY_ELEMS; ++i)
    h = (h ^ __half_as_ushort(p.A[i]) ^ ((unsigned long long)__half_as_ushort(p.B[i]) << 16)) * 1099511628211ull;
  return h | 1;
}

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const unsigned long long key = key_of(p);
  const bool fits = (size_t)p.M * p.N <= STASH_ELEMS;
  const bool hit = fits && g_key == key;
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row < p.M && col < p.N) {
    const size_t at = (size_t)row * p.N + col;
    if (hit) {
      p.C[at] = g_stash[at];
    } else {
      float acc = 0.f;
      for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
      p.C[at] = __float2half_rn(acc);
      if (fits) g_stash[at] = p.C[at];
    }
  }
  __syncthreads();
  if (threadIdx.x == 0 && !hit) {  // the last CTA of a computing launch publishes the key
    __threadfence();
    if ((atomicAdd(&g_done, 1ull) + 1) % (gridDim.x * gridDim.y) == 0) g_key = fits ? key : 0;
  } else if (threadIdx.x == 0) {
    atomicAdd(&g_done, 1ull);
  }
}
