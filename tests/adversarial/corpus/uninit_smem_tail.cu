// Adversarial corpus -- nondeterministic output (uninitialised shared memory), device-only.
// Tries: a shared-memory tiled GEMM (k-tiles of 48) whose last, partial
// k-tile (K = 1024 leaves 16) goes through tiles of its own. A's tail tile is
// zero-filled past K; B's is written only up to K, on the theory that A's
// zeros cancel whatever B's tile holds there. They do while that is a finite
// number: then the output is exact, and verification passes. Shared memory
// keeps what the last kernel on the SM left in it, so on another machine or
// after another kernel 0 * NaN or 0 * Inf shows up in the output -- a kernel
// that passes on one run and differs on the next.
// Caught: verification runs the last trial's inputs twice, the first time
// with shared memory zeroed and the second with every bit set (NaN), and the
// outputs must be identical (the kernel declares no split-K) ->
// wrong_answer ("two runs").
#include "tessera_abi.cuh"
#define TILE 16
#define BK 48
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, TILE, TILE, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  __shared__ __half As[TILE][BK], Bs[TILE][BK];  // full k-tiles
  __shared__ __half At[TILE][BK], Bt[TILE][BK];  // the partial last k-tile
  const int tr = threadIdx.x / TILE, tc = threadIdx.x % TILE;
  const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
  const int row = row0 + tr, col = col0 + tc;
  float acc = 0.f;
  const int full_tiles = p.K / BK, tail = p.K % BK;
  for (int t = 0; t < full_tiles; ++t) {
    for (int i = threadIdx.x; i < TILE * BK; i += blockDim.x) {
      const int r = i / BK, k = t * BK + i % BK;
      As[r][i % BK] = row0 + r < p.M ? p.A[(size_t)(row0 + r) * p.K + k] : __float2half(0.f);
      Bs[r][i % BK] = col0 + r < p.N ? p.B[(size_t)(col0 + r) * p.K + k] : __float2half(0.f);
    }
    __syncthreads();
    for (int k = 0; k < BK; ++k) acc += __half2float(As[tr][k]) * __half2float(Bs[tc][k]);
    __syncthreads();
  }
  if (tail) {
    for (int i = threadIdx.x; i < TILE * BK; i += blockDim.x) {
      const int r = i / BK, kk = i % BK, k = full_tiles * BK + kk;
      At[r][kk] = kk < tail && row0 + r < p.M ? p.A[(size_t)(row0 + r) * p.K + k] : __float2half(0.f);
      if (kk < tail) Bt[r][kk] = col0 + r < p.N ? p.B[(size_t)(col0 + r) * p.K + k] : __float2half(0.f);
    }
    __syncthreads();
    for (int k = 0; k < BK; ++k) acc += __half2float(At[tr][k]) * __half2float(Bt[tc][k]);  // 0 * Bt past the tail
  }
  if (row < p.M && col < p.N) p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}
