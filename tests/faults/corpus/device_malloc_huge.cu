// Fault corpus: device code allocates 1 TiB from the device heap (which cannot
// grant it) and writes through the null pointer it gets: runtime_fault
#include "tessera_abi.cuh"
#define SMEM 0
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, /*dynamic_smem_bytes=*/SMEM, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0,
    0, 0, 0, 0, 0, 0, 0};
extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  if (row == 0 && col == 0) {
    volatile float* huge = static_cast<float*>(malloc(size_t(1) << 40));
    huge[threadIdx.x] = 1.f;
  }
  p.C[(size_t)row * p.N + col] = __float2half_rn(0.f);
}
