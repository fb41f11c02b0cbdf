// Adversarial corpus -- a decoy kernel, device-only.
// Tries: the module carries a correct, tensor-core-looking GEMM
// (`hgemm_tensor_core`) that nothing launches -- what a reader or a scan of
// the module would take for the work -- while the launched tessera_hgemm is
// honest only for its first HONEST_LAUNCHES launches and returns at once
// afterwards.
// Caught: only what is launched is verified and timed, and every timed
// launch can be the checked one -> wrong_answer ("timed").
#include <mma.h>

#include "tessera_abi.cuh"

using namespace nvcuda;
#define HONEST_LAUNCHES 6
extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 256, 16, 16, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};
__device__ unsigned long long g_ctas;

// The decoy: one warp per 16x16 output tile, fp32 accumulators. Never launched.
extern "C" __global__ void hgemm_tensor_core(const __grid_constant__ TesseraGemmParams p) {
  const int row0 = blockIdx.y * 16, col0 = blockIdx.x * 16;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.f);
  for (int k0 = 0; k0 < p.K; k0 += 16) {
    wmma::load_matrix_sync(a, p.A + (size_t)row0 * p.K + k0, p.K);
    wmma::load_matrix_sync(b, p.B + (size_t)col0 * p.K + k0, p.K);
    wmma::mma_sync(acc, a, b, acc);
  }
  __shared__ float out[16 * 16];
  wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
  __syncwarp();
  for (int i = threadIdx.x; i < 256; i += 32) p.C[(size_t)(row0 + i / 16) * p.N + col0 + i % 16] = __float2half_rn(out[i]);
}

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  __shared__ unsigned long long launch;
  if (threadIdx.x == 0) launch = atomicAdd(&g_ctas, 1ull) / (gridDim.x * gridDim.y);
  __syncthreads();
  const int row = blockIdx.y * 16 + threadIdx.x / 16, col = blockIdx.x * 16 + threadIdx.x % 16;
  if (launch >= HONEST_LAUNCHES || row >= p.M || col >= p.N) return;
  float acc = 0.f;
  for (int k = 0; k < p.K; ++k) acc += __half2float(p.A[(size_t)row * p.K + k]) * __half2float(p.B[(size_t)col * p.K + k]);
  p.C[(size_t)row * p.N + col] = __float2half_rn(acc);
}
