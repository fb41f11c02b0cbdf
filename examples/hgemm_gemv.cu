// A GEMV-style device-only candidate (docs/abi.md) for the decode layers:
// M of one to a few tokens, TN layout, where the GEMM streams its weight B
// (N x K) once and the time is the DRAM's. No tensor cores and no shared
// memory: each warp owns ROWS_PER_WARP consecutive rows of B (columns of C),
// two at a time, with LOADS 16-byte loads of each row in flight per lane
// (what keeps the DRAM busy is the loads in flight per SM), multiplies them by
// up to TILE_M rows of A (read through L1, where every warp of the CTA finds
// them), accumulates in fp32 and reduces each row across the warp.
// scripts/gemv_probe.cu measured this scheme outside the harness; docs/tile.md
// ("a GEMV for the decode layers") has its figures. In the harness (H200, cold
// CUPTI times) it lost to the tile kernels on every decode layer of the LLM set
// (0.48-0.97x; 0.76x the fastest baseline over the 19): an example of a
// device-only SIMT candidate, not a fast kernel. Correct for every shape:
// operands whose rows are not 16-byte aligned (K not a multiple of 8) take a
// scalar path.
#include "tessera_abi.cuh"

#define WARPS 8
#define ROWS_PER_WARP 4                    // even: rows go two at a time
#define TILE_N (WARPS * ROWS_PER_WARP)     // columns of C per CTA
#define TILE_M 8                           // rows of C per CTA (grid.y covers larger M)
#define LOADS 2                            // 16-byte loads per row and lane in flight

extern "C" __device__ const TesseraLaunchContract tessera_contract = {
    TESSERA_ABI_VERSION,
    /*block_threads=*/WARPS * 32,
    /*tile_m=*/TILE_M, /*tile_n=*/TILE_N,
    /*split_k=*/1, /*persistent_ctas_per_sm=*/0,
    /*dynamic_smem_bytes=*/0,
    /*cluster_x=*/1, /*cluster_y=*/1,
    /*epilogue=*/TESSERA_EPILOGUE_NONE,
    /*layout=*/0,  // TN
    /*workspace_bytes=*/0,
    0, 0, 0, 0, 0, 0, 0};

// The weight is read once: keep it out of L1 and fetch 256-byte L2 sectors.
__device__ __forceinline__ uint4 load_streaming(const uint4* p) {
  uint4 r;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}

__device__ __forceinline__ float dot8(uint4 a, uint4 b, float acc) {
  const __half2* ha = reinterpret_cast<const __half2*>(&a);
  const __half2* hb = reinterpret_cast<const __half2*>(&b);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 x = __half22float2(ha[i]), y = __half22float2(hb[i]);
    acc = fmaf(x.x, y.x, acc);
    acc = fmaf(x.y, y.y, acc);
  }
  return acc;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Row m of C at columns n and (if has1) n + 1, from lane 0 of the warp.
__device__ __forceinline__ void store_pair(const TesseraGemmParams& p, int m, long long n, bool has1, float s0,
                                           float s1, int lane) {
  if (lane != 0) return;
  p.C[(long long)m * p.ldc + n] = __float2half_rn(s0);
  if (has1) p.C[(long long)m * p.ldc + n + 1] = __float2half_rn(s1);
}

// Rows n and n + 1 of C's columns (the second only if has1) for MC rows of A
// from m0: 16-byte loads, K % 8 == 0.
template <int MC>
__device__ void row_pair_vec(const TesseraGemmParams& p, int m0, long long n, bool has1, int lane) {
  const int kv = p.K / 8;
  const uint4* b0 = reinterpret_cast<const uint4*>(p.B + n * p.ldb);
  const uint4* b1 = reinterpret_cast<const uint4*>(p.B + (has1 ? n + 1 : n) * p.ldb);
  float acc0[MC], acc1[MC];
#pragma unroll
  for (int m = 0; m < MC; ++m) acc0[m] = acc1[m] = 0.0f;
  for (int v0 = lane; v0 < kv; v0 += 32 * LOADS) {
    uint4 x0[LOADS], x1[LOADS];
#pragma unroll
    for (int u = 0; u < LOADS; ++u) {
      const int v = v0 + u * 32;
      if (v < kv) {
        x0[u] = load_streaming(b0 + v);
        x1[u] = has1 ? load_streaming(b1 + v) : make_uint4(0u, 0u, 0u, 0u);
      }
    }
#pragma unroll
    for (int u = 0; u < LOADS; ++u) {
      const int v = v0 + u * 32;
      if (v < kv) {
#pragma unroll
        for (int m = 0; m < MC; ++m) {
          const uint4 a = __ldg(reinterpret_cast<const uint4*>(p.A + (long long)(m0 + m) * p.lda) + v);
          acc0[m] = dot8(a, x0[u], acc0[m]);
          acc1[m] = dot8(a, x1[u], acc1[m]);
        }
      }
    }
  }
#pragma unroll
  for (int m = 0; m < MC; ++m) {
    store_pair(p, m0 + m, n, has1, warp_sum(acc0[m]), warp_sum(acc1[m]), lane);
  }
}

// The same for any K, one element at a time.
__device__ void row_pair_scalar(const TesseraGemmParams& p, int m0, int mc, long long n, bool has1, int lane) {
  for (int m = 0; m < mc; ++m) {
    const __half* a = p.A + (long long)(m0 + m) * p.lda;
    const __half* b0 = p.B + n * p.ldb;
    float s0 = 0.0f, s1 = 0.0f;
    for (int k = lane; k < p.K; k += 32) {
      const float x = __half2float(a[k]);
      s0 = fmaf(x, __half2float(b0[k]), s0);
      if (has1) s1 = fmaf(x, __half2float(b0[p.ldb + k]), s1);
    }
    store_pair(p, m0 + m, n, has1, warp_sum(s0), warp_sum(s1), lane);
  }
}

template <int MC>
__device__ void rows_of_warp(const TesseraGemmParams& p, int m0, long long first, int lane) {
  for (int r = 0; r < ROWS_PER_WARP; r += 2) {
    const long long n = first + r;
    if (n >= p.N) return;
    row_pair_vec<MC>(p, m0, n, n + 1 < p.N, lane);
  }
}

extern "C" __global__ void __launch_bounds__(WARPS * 32) tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int m0 = blockIdx.y * TILE_M;
  const int mc = min(TILE_M, p.M - m0);
  const long long first = (long long)blockIdx.x * TILE_N + (long long)warp * ROWS_PER_WARP;
  const bool vec = p.K % 8 == 0 && p.lda % 8 == 0 && p.ldb % 8 == 0 &&
                   ((reinterpret_cast<unsigned long long>(p.A) | reinterpret_cast<unsigned long long>(p.B)) % 16) == 0;
  if (!vec) {
    for (int r = 0; r < ROWS_PER_WARP && first + r < p.N; r += 2)
      row_pair_scalar(p, m0, mc, first + r, first + r + 1 < p.N, lane);
    return;
  }
  switch (mc) {  // the rows of A this CTA has, as a constant, so that the accumulators stay in registers
    case 1: rows_of_warp<1>(p, m0, first, lane); break;
    case 2: rows_of_warp<2>(p, m0, first, lane); break;
    case 3: rows_of_warp<3>(p, m0, first, lane); break;
    case 4: rows_of_warp<4>(p, m0, first, lane); break;
    case 5: rows_of_warp<5>(p, m0, first, lane); break;
    case 6: rows_of_warp<6>(p, m0, first, lane); break;
    case 7: rows_of_warp<7>(p, m0, first, lane); break;
    default: rows_of_warp<8>(p, m0, first, lane); break;
  }
}
