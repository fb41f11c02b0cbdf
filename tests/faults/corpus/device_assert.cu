// Fault corpus: a device-side assert fires: runtime_fault (cudaErrorAssert)
#include "tessera_abi.cuh"
#define SMEM 0
extern "C" __device__ void __assertfail(const char* message, const char* file, unsigned int line, const char* function,
                                        size_t char_size);
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, /*dynamic_smem_bytes=*/SMEM, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0,
    0, 0, 0, 0, 0, 0, 0};
extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  if (row == 0 && col == 0) __assertfail("p.K < 0", __FILE__, __LINE__, "tessera_hgemm", 1);
  p.C[(size_t)row * p.N + col] = __float2half_rn(0.f);
}
