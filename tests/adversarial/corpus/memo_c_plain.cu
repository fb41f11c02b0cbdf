// Adversarial corpus -- control: memo_c_global.cu without its cache, device-only.
// Tries nothing: the same dot products, the same grid and the same code as
// memo_c_global.cu's computing path, so that the memoised kernel's hot time
// can be compared with an honest one (the manifest's hot_no_faster_than).
// Expected ok.
#include "tessera_abi.cuh"
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};

__device__ float dot_row_col(const __half* A, const __half* B, int row, int col, int K) {
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);
  return acc;
}

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row < p.M && col < p.N) p.C[(size_t)row * p.N + col] = __float2half_rn(dot_row_col(p.A, p.B, row, col, p.K));
}
