// The simplest correct device-only candidate (docs/abi.md): one thread per
// output element, fp32 accumulation, TN layout. It is meant to be slow: the
// harness must show it far behind cuBLAS.
#include "tessera_abi.cuh"

#define TILE 16

extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION,
    /*block_threads=*/TILE * TILE,
    /*tile_m=*/TILE, /*tile_n=*/TILE,
    /*split_k=*/1, /*persistent_ctas_per_sm=*/0,
    /*dynamic_smem_bytes=*/0,
    /*cluster_x=*/1, /*cluster_y=*/1,
    /*epilogue=*/TESSERA_EPILOGUE_NONE,
    /*layout=*/0,  // TN
    /*workspace_bytes=*/0,
    0, 0, 0, 0, 0, 0, 0};

extern "C" __global__ void tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const int row = blockIdx.y * TILE + threadIdx.x / TILE;
  const int col = blockIdx.x * TILE + threadIdx.x % TILE;
  if (row >= p.M || col >= p.N) return;
  float acc = 0.0f;
  for (int k = 0; k < p.K; ++k)
    acc += __half2float(p.A[(size_t)row * p.lda + k]) * __half2float(p.B[(size_t)col * p.ldb + k]);
  p.C[(size_t)row * p.ldc + col] = __float2half_rn(acc);
}
