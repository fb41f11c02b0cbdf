// A device-only candidate on the tensor cores through WMMA (docs/abi.md).
// TN layout: A is MxK row-major, B is NxK row-major (so both are K-major),
// C is MxN row-major. Block tile 128x128x32, 8 warps in a 2x4 grid, each warp
// 64x32 = 4x2 fragments of 16x16, fp32 accumulators, double-buffered shared
// memory filled with cp.async where a 16-byte chunk is in bounds and aligned.
// Correct for any M, N, K; a starting point, not a tuned kernel.
#include <mma.h>

#include "tessera_abi.cuh"

using namespace nvcuda;

#define BM 128
#define BN 128
#define BK 32
#define PAD 8                       // halves of padding per smem row: breaks bank conflicts
#define LDS (BK + PAD)
#define STAGE_HALVES ((BM + BN) * LDS)
#define SMEM_BYTES (2 * STAGE_HALVES * 2)

extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION, /*block_threads=*/256, /*tile_m=*/BM, /*tile_n=*/BN,
    /*split_k=*/1, /*persistent=*/0, /*dynamic_smem_bytes=*/SMEM_BYTES,
    /*cluster=*/1, 1, TESSERA_EPILOGUE_NONE, /*layout TN=*/0, /*workspace=*/0,
    0, 0, 0, 0, 0, 0, 0};

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}

// Loads rows [row0, row0+rows) x cols [k0, k0+BK) of a K-major matrix into smem.
__device__ __forceinline__ void load_tile(__half* dst, const __half* src, int rows_total, int K, int row0, int k0,
                                          int rows) {
  const bool vec_ok = (K % 8) == 0;  // 16-byte chunks stay aligned only then
  for (int c = threadIdx.x; c < rows * (BK / 8); c += blockDim.x) {
    const int r = c / (BK / 8), kc = (c % (BK / 8)) * 8;
    const int gr = row0 + r, gk = k0 + kc;
    __half* d = dst + r * LDS + kc;
    if (vec_ok && gr < rows_total && gk + 8 <= K) {
      cp_async16(d, src + (size_t)gr * K + gk);
    } else {
      for (int i = 0; i < 8; ++i)
        d[i] = (gr < rows_total && gk + i < K) ? src[(size_t)gr * K + gk + i] : __float2half(0.0f);
    }
  }
}

extern "C" __global__ void __launch_bounds__(256) tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __half* smem = reinterpret_cast<__half*>(smem_raw);
  const int warp = threadIdx.x / 32, wm = warp / 4, wn = warp % 4;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][2];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  const int ktiles = (p.K + BK - 1) / BK;
  auto stage = [&](int s) { return smem + s * STAGE_HALVES; };
  load_tile(stage(0), p.A, p.M, p.K, row0, 0, BM);
  load_tile(stage(0) + BM * LDS, p.B, p.N, p.K, col0, 0, BN);
  asm volatile("cp.async.commit_group;\n" ::);

  for (int kt = 0; kt < ktiles; ++kt) {
    if (kt + 1 < ktiles) {
      __half* next = stage((kt + 1) & 1);
      load_tile(next, p.A, p.M, p.K, row0, (kt + 1) * BK, BM);
      load_tile(next + BM * LDS, p.B, p.N, p.K, col0, (kt + 1) * BK, BN);
    }
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 1;\n" ::);
    __syncthreads();
    const __half* As = stage(kt & 1);
    const __half* Bs = As + BM * LDS;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[4];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b[2];
      for (int i = 0; i < 4; ++i) wmma::load_matrix_sync(a[i], As + (wm * 64 + i * 16) * LDS + kk, LDS);
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(b[j], Bs + (wn * 32 + j * 16) * LDS + kk, LDS);
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

  // Epilogue through shared memory (reusing the pipeline buffers): each warp
  // stages one 16x16 fp32 fragment at a time and writes it out with bounds checks.
  float* stagef = reinterpret_cast<float*>(smem_raw) + warp * 16 * 16;
  const int lane = threadIdx.x % 32;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 2; ++j) {
      wmma::store_matrix_sync(stagef, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      for (int e = lane; e < 256; e += 32) {
        const int r = row0 + wm * 64 + i * 16 + e / 16, c = col0 + wn * 32 + j * 16 + e % 16;
        if (r < p.M && c < p.N) p.C[(size_t)r * p.ldc + c] = __float2half_rn(stagef[e]);
      }
      __syncwarp();
    }
  }
}
