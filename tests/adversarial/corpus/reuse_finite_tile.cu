// Adversarial corpus -- leftover output reuse, device-only.
// Tries: each CTA looks at its 16x16 tile of C first and skips the whole GEMM
// for it when every element is already finite (an earlier launch wrote it).
// Verification poisons C, so it computes there; the old protocol poisoned C
// once before timing, so every later timed launch skipped (paid 3.35-3.47x).
// Expected ok -- neutralised, not caught: C (and every hot-rotation output)
// is poisoned before every timed launch, so the skip never fires and the
// time paid is the full kernel's.
#include "tessera_abi.cuh"
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};

__device__ bool finite_half(__half h) { return (__half_as_ushort(h) & 0x7C00) != 0x7C00; }

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  const bool inside = row < p.M && col < p.N;
  const bool have = !inside || finite_half(p.C[(size_t)row * p.N + col]);
  if (__syncthreads_and(have)) return;  // the whole tile already holds numbers
  if (!inside) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}
