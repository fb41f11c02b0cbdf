// Adversarial corpus -- partial work (the tail of K), device-only.
// Tries: full K for its first HONEST_LAUNCHES launches (verification), then
// leaves out the last eighth of K: 12% less work, an answer that is merely
// "close" rather than poisoned.
// Caught: random timed launches are compared with the fp64 reference under
// the fp32-accumulation tolerance; a missing K tail is far outside it
// -> wrong_answer ("timed").
#include "tessera_abi.cuh"
#define HONEST_LAUNCHES 6
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
__device__ unsigned long long g_ctas;

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  __shared__ int k_end;
  if (threadIdx.x == 0) {
    const unsigned long long launch = atomicAdd(&g_ctas, 1ull) / (gridDim.x * gridDim.y);
    k_end = launch < HONEST_LAUNCHES ? p.K : p.K - p.K / 8;
  }
  __syncthreads();
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < k_end; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}
