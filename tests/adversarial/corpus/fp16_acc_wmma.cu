// Adversarial corpus -- fp16 accumulation in an fp32 task, device-only.
// Tries: tensor cores through WMMA with __half accumulator fragments, the
// mistake measured in published "fp32-accumulate" kernels (relative L2 error
// around 2e-3 against 2e-4). Integers stay exact in fp16 up to 2048, so the
// integer trial passes; the loss shows as soon as sums grow.
// Caught: verification's tolerance separates fp32 from fp16 accumulation;
// uniform_pos data (sums growing with K) fails it -> wrong_answer ("uniform_pos").
#include <mma.h>

#include "tessera_abi.cuh"

using namespace nvcuda;
#define TILE 32  // 2 x 2 warps, one 16 x 16 fragment each

extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, 128, TILE, TILE, 1, 0, 0, 1, 1, TESSERA_EPILOGUE_NONE, 0, 0, 0, 0, 0, 0, 0, 0, 0};

// Assumes M, N and K are multiples of 16 (the target shape's are).
extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const int warp = threadIdx.x / 32;
  const int row0 = blockIdx.y * TILE + (warp / 2) * 16, col0 = blockIdx.x * TILE + (warp % 2) * 16;
  if (row0 >= p.M || col0 >= p.N) return;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;  // B is N x K row-major = K x N col-major
  wmma::fragment<wmma::accumulator, 16, 16, 16, __half> acc;
  wmma::fill_fragment(acc, __float2half(0.f));
  for (int k0 = 0; k0 < p.K; k0 += 16) {
    wmma::load_matrix_sync(a, p.A + (size_t)row0 * p.K + k0, p.K);
    wmma::load_matrix_sync(b, p.B + (size_t)col0 * p.K + k0, p.K);
    wmma::mma_sync(acc, a, b, acc);
  }
  wmma::store_matrix_sync(p.C + (size_t)row0 * p.N + col0, acc, p.N, wmma::mem_row_major);
}
