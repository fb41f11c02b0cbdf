// Fault corpus: unbounded recursion in a kernel overflows the thread's stack: runtime_fault
#include "tessera_abi.cuh"
#define SMEM 0
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, /*dynamic_smem_bytes=*/SMEM, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0,
    0, 0, 0, 0, 0, 0, 0};
// Each frame keeps a local array alive across the call, so the compiler can
// neither inline nor turn the recursion into a loop.
__device__ __noinline__ float deep(const __half* a, int depth) {
  volatile float frame[64];
  for (int i = 0; i < 64; ++i) frame[i] = __half2float(a[(depth + i) & 63]);
  if (depth == 0) return frame[0];
  return deep(a, depth - 1) + frame[depth & 63];
}
extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  // A million frames of 256+ bytes: far past any per-thread stack the driver grants.
  const float v = deep(p.A, p.K * 1024);
  p.C[(size_t)row * p.N + col] = __float2half_rn(v);
}
