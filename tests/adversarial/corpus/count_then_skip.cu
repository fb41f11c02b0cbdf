// Adversarial corpus -- launch counting (device-side counter), device-only.
// Tries: the whole GEMM for its first HONEST_LAUNCHES launches (the
// verification trials), then every launch returns at once. Under the old
// protocol (C poisoned once before timing, checked once after) this was paid
// 2.93x over cuBLAS at an empty kernel's time.
// Caught: every timed launch starts from a poisoned C and randomly chosen
// timed launches are checked on the device -> wrong_answer ("timed"); or, if
// its time is below the device's ceiling, rejected as implausible.
#include "tessera_abi.cuh"
#define HONEST_LAUNCHES 6
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
__device__ unsigned long long g_ctas;  // CTAs started so far, all launches together

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  __shared__ unsigned long long ticket;
  if (threadIdx.x == 0) ticket = atomicAdd(&g_ctas, 1ull);
  __syncthreads();
  if (ticket / (gridDim.x * gridDim.y) >= HONEST_LAUNCHES) return;  // launches never overlap on one stream
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}
