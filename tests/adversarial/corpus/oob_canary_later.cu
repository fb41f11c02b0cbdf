// Adversarial corpus -- a write outside its buffers, only once timed, device-only.
// Tries: computes correctly every launch, and past verification (whose
// per-trial canary checks would see it) also writes one element past the end
// of C -- the shape of a stray epilogue store, or of scratch space taken from
// memory that is not the kernel's.
// Caught: canary bands surround every buffer (C and every hot-rotation
// output included); the post-timing audit checks them all
// -> wrong_answer ("canary").
#include "tessera_abi.cuh"
#define HONEST_LAUNCHES 6
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
__device__ unsigned long long g_ctas;

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  __shared__ unsigned long long launch;
  if (threadIdx.x == 0) launch = atomicAdd(&g_ctas, 1ull) / (gridDim.x * gridDim.y);
  __syncthreads();
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
  if (launch >= HONEST_LAUNCHES && row == p.M - 1 && col == p.N - 1) p.C[(size_t)p.M * p.N + 64] = __float2half_rn(acc);
}
