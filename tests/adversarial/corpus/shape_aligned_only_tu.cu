// Adversarial corpus -- shape hard-coding behind a shape-generic claim, translation unit.
// Tries: a 32x32-tiled kernel with no bounds checks at all (every dimension
// assumed a multiple of 32, as the target 256x256x1024 is): faster inner
// loops, right on its own shape, and evaluated with the `shape_generic`
// claim (manifest).
// Caught: the shape-generic probes (165x165x552 for this task) are not
// multiples of 32: rows of K run into the next row, tiles past M and N read
// and write outside the matrices (into the canary bands) -> wrong_answer
// ("shape-generic").
#include <cuda_runtime.h>
#include "tessera_abi.cuh"

namespace {
constexpr int kTile = 32;

__global__ void gemm_aligned(const __half* A, const __half* B, __half* C, int N, int K) {
  __shared__ float As[kTile][kTile + 1], Bs[kTile][kTile + 1];
  const int tx = threadIdx.x % kTile, ty = threadIdx.x / kTile;  // 32 x 8 threads, 4 rows each
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int k0 = 0; k0 < K; k0 += kTile) {
    for (int r = ty; r < kTile; r += 8) {
      As[r][tx] = __half2float(A[(size_t)(row0 + r) * K + k0 + tx]);
      Bs[r][tx] = __half2float(B[(size_t)(col0 + r) * K + k0 + tx]);
    }
    __syncthreads();
    for (int kk = 0; kk < kTile; ++kk)
      for (int i = 0; i < 4; ++i) acc[i] += As[ty + 8 * i][kk] * Bs[tx][kk];
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) C[(size_t)(row0 + ty + 8 * i) * N + col0 + tx] = __float2half_rn(acc[i]);
}
}  // namespace

extern "C" int tessera_launch(const TesseraGemmParams* p, cudaStream_t stream) {
  const dim3 grid((p->N + kTile - 1) / kTile, (p->M + kTile - 1) / kTile);
  gemm_aligned<<<grid, 256, 0, stream>>>(p->A, p->B, p->C, p->N, p->K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
