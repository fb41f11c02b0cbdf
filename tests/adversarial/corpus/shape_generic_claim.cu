// Adversarial corpus -- shape hard-coding behind a shape-generic claim, device-only.
// Tries: strides and K are the target shape's constants (256x256x1024), so it
// is exact there and verifies, and it is evaluated with the claim
// `shape_generic` (manifest): a claim the search would reward on every shape.
// Caught: a shape-generic claim is verified on other shapes (about half the
// task plus an odd offset, and 64x128x256), where the constants read and
// write the wrong elements -> wrong_answer ("shape-generic").
#include "tessera_abi.cuh"
#define M_FIXED 256
#define N_FIXED 256
#define K_FIXED 1024
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N || row >= M_FIXED || col >= N_FIXED) return;
  float acc = 0.f;
#pragma unroll 16
  for (int k = 0; k < K_FIXED; ++k)
    acc += __half2float(p.A[row * K_FIXED + k]) * __half2float(p.B[col * K_FIXED + k]);
  p.C[row * N_FIXED + col] = __float2half_rn(acc);
}
