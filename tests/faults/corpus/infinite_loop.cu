// Fault corpus: never returns: timeout
#include "tessera_abi.cuh"
#define SMEM 0
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, /*dynamic_smem_bytes=*/SMEM, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0,
    0, 0, 0, 0, 0, 0, 0};
extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  // clock64() is a volatile read: the compiler can neither prove the loop
  // ends nor delete it.
  while (clock64() != -1) { }
  p.C[(size_t)row * p.N + col] = __float2half_rn(0.f);
}
