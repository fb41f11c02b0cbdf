// Fault corpus: a 16-byte store to an address that is not 16-byte aligned: runtime_fault (misaligned address)
#include "tessera_abi.cuh"
#define SMEM 0
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, /*dynamic_smem_bytes=*/SMEM, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0,
    0, 0, 0, 0, 0, 0, 0};
extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  if (row == 0 && col == 0) {
    // C + 1 is 2-byte aligned: a 16-byte vector store there is a misaligned
    // address (inline PTX, so that the compiler cannot split the store).
    asm volatile("st.global.v4.f32 [%0], {%1, %1, %1, %1};" ::"l"(p.C + 1), "f"(0.f) : "memory");
  }
  p.C[(size_t)row * p.N + col] = __float2half_rn(0.f);
}
