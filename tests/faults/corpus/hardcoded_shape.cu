// Fault corpus: correct only for 256x256x1024 (the shape is baked in): ok on that task,
// wrong_answer once it claims to be shape-generic (cheat 8: hard-coding to the test shape).
#include "tessera_abi.cuh"
#define M_FIXED 256
#define N_FIXED 256
#define K_FIXED 1024
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < K_FIXED && k < p.K; ++k)
    acc += __half2float(p.A[(size_t)row * K_FIXED + k]) * __half2float(p.B[(size_t)col * K_FIXED + k]);
  p.C[(size_t)row * N_FIXED + col] = __float2half_rn(acc);
}
