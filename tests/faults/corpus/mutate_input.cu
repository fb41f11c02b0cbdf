// Fault corpus: computes correctly, then overwrites A: wrong_answer (inputs changed)
#include "tessera_abi.cuh"
#define SMEM 0
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, /*dynamic_smem_bytes=*/SMEM, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0,
    0, 0, 0, 0, 0, 0, 0};
extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
  if (row == 0 && col == 0) const_cast<__half*>(p.A)[0] = __float2half_rn(0.5f);
}
