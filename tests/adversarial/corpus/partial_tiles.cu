// Adversarial corpus -- partial work (output tiles), device-only.
// Tries: honest for HONEST_LAUNCHES launches, then each launch leaves out one
// output tile in SKIP_EVERY, a different set each launch (1/16 of the work
// saved, the kind of saving that hides in timing noise).
// Caught: every timed launch starts from a poisoned C and a checked launch
// compares every element -> wrong_answer ("timed").
#include "tessera_abi.cuh"
#define HONEST_LAUNCHES 6
#define SKIP_EVERY 16
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
__device__ unsigned long long g_ctas;

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  __shared__ bool skip;
  if (threadIdx.x == 0) {
    const unsigned ctas = gridDim.x * gridDim.y;
    const unsigned long long launch = atomicAdd(&g_ctas, 1ull) / ctas;
    const unsigned tile = blockIdx.y * gridDim.x + blockIdx.x;
    skip = launch >= HONEST_LAUNCHES && (tile + launch) % SKIP_EVERY == 0;
  }
  __syncthreads();
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (skip || row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}
