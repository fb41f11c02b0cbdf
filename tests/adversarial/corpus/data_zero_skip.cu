// Adversarial corpus -- data hard-coding, device-only.
// Tries: assumes block-sparse inputs -- a 16-wide chunk of a row of A whose
// first element is zero is taken as all zero and skipped. Real data never has
// exact zeros at the chunk starts, so the shortcut "costs nothing" on the data
// it was tuned on.
// Caught: verification includes an integer-exact trial (values in [-2, 2],
// one in five is zero) where the skipped chunks are not zero
// -> wrong_answer ("integer").
#include "tessera_abi.cuh"
#define CHUNK 16
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  const __half* a = p.A + (size_t)row * p.K;
  const __half* b = p.B + (size_t)col * p.K;
  float acc = 0.f;
  for (int k0 = 0; k0 < p.K; k0 += CHUNK) {
    if (__half_as_ushort(a[k0]) == 0) continue;  // "a zero block"
    for (int k = k0; k < min(k0 + CHUNK, p.K); ++k) acc += __half2float(a[k]) * __half2float(b[k]);
  }
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}
