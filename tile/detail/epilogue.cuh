/// The epilogue's math and stores, both backends: the fused bias, ReLU or
/// GELU in fp32, and C's guarded stores (pairs, single elements, a staged tile).
/// Each backend's tile store calls these (mma_sync_epilogue.cuh,
/// wgmma_epilogue.cuh). Needs kEpilogue, kStoreHalf2, kStoreVec8, smem_u32 and
/// gelu.inc.
// The fused epilogue's activation, in fp32 on v + bias, before the final
// rounding to fp16 (GELU: gelu.inc).
__device__ __forceinline__ float epilogue_act(float v) {
  if constexpr (kEpilogue == TESSERA_EPILOGUE_BIAS_RELU) v = fmaxf(v, 0.0f);
  if constexpr (kEpilogue == TESSERA_EPILOGUE_BIAS_GELU) {
    // One MUFU op each (exp2f adds a range reduction, and a division a slow path).
    const auto ex2 = [](float a) {
      float r;
      asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
      return r;
    };
    const auto rcp = [](float d) {
      float r;
      asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
      return r;
    };
    v = gelu(v, ex2, rcp);
  }
  return v;
}

// The fused epilogue of one element. `b` points at its bias in global memory
// (p.bias + col; the wgmma consumers read a shared-memory copy instead,
// wgmma_epilogue.cuh).
__device__ __forceinline__ float epilogue_op(float v, const __half* b) {
  if constexpr (kEpilogue == TESSERA_EPILOGUE_NONE) return v;
  else return epilogue_act(v + __half2float(b[0]));
}

// Where the bias of C's column `col` lies in global memory (unused without one).
__device__ __forceinline__ const __half* bias_at(const TesseraGemmParams& p, int col) {
  if constexpr (kEpilogue == TESSERA_EPILOGUE_NONE) return nullptr;
  else return p.bias + col;
}

// Stores C[row][col], C[row][col+1] (col even), skipping what lies outside M x N
// (mma_sync, bias in global memory: read only inside). b: the bias of col and col + 1.
__device__ __forceinline__ void store_pair(const TesseraGemmParams& p, int row, int col, float v0, float v1,
                                           const __half* b) {
  if (row >= p.M || col >= p.N) return;
  __half* dst = p.C + static_cast<size_t>(row) * p.ldc + col;
  const float e0 = epilogue_op(v0, b);
  if (kStoreHalf2 && col + 1 < p.N) {
    *reinterpret_cast<__half2*>(dst) = __floats2half2_rn(e0, epilogue_op(v1, b + 1));
  } else {
    dst[0] = __float2half_rn(e0);
    if (col + 1 < p.N) dst[1] = __float2half_rn(epilogue_op(v1, b + 1));
  }
}

// Stores a computed pair at C[row][col], C[row][col+1] (col even), clipped to M x N.
__device__ __forceinline__ void store_half2(const TesseraGemmParams& p, int row, int col, __half2 h) {
  if (row >= p.M || col >= p.N) return;
  __half* dst = p.C + static_cast<size_t>(row) * p.ldc + col;
  if (kStoreHalf2 && col + 1 < p.N) {
    *reinterpret_cast<__half2*>(dst) = h;
  } else {
    dst[0] = __low2half(h);
    if (col + 1 < p.N) dst[1] = __high2half(h);
  }
}
// One computed element C[row][col] (swap-AB's transposed stores), clipped to M x N.
__device__ __forceinline__ void store_half(const TesseraGemmParams& p, int row, int col, __half h) {
  if (row >= p.M || col >= p.N) return;
  p.C[static_cast<size_t>(row) * p.ldc + col] = h;
}

// Staged epilogue, second half: a rows x cols fp16 tile in shared memory (row
// stride `stride` halves, epilogue already applied) -> C at (row0, col0), in
// 16-byte chunks so that consecutive threads write consecutive addresses. A
// thread's chunks are read kBatch at a time, then written: the wgmma kernels
// take 4 (one chunk per round trip, a rolled loop with each store waiting for
// its load, left the shared-memory latency in every chunk: 0.4-2.5% of their
// time); the mma_sync kernel (232 registers) measured 8% slower with four
// and keeps 1.
template <int kRows, int kCols, int kStride, int kCopyThreads, int kBatch>
__device__ __forceinline__ void copy_tile_to_global(const TesseraGemmParams& p, const __half* s, int row0, int col0,
                                                    int t) {
  constexpr int kChunksPerRow = kCols / 8;
  constexpr int kChunks = kRows * kChunksPerRow;
  constexpr int kPerThread = (kChunks + kCopyThreads - 1) / kCopyThreads;
#pragma unroll(kBatch > 1 ? kPerThread : 1)
  for (int b0 = 0; b0 < kPerThread; b0 += kBatch) {
    uint4 v[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int i = t + (b0 + j) * kCopyThreads;
      if (b0 + j < kPerThread && i < kChunks) {
        v[j] = *reinterpret_cast<const uint4*>(s + (i / kChunksPerRow) * kStride + (i % kChunksPerRow) * 8);
      }
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int i = t + (b0 + j) * kCopyThreads;
      if (b0 + j >= kPerThread || i >= kChunks) continue;
      const int row = row0 + i / kChunksPerRow, col = col0 + (i % kChunksPerRow) * 8;
      if (row >= p.M || col >= p.N) continue;
      __half* dst = p.C + static_cast<size_t>(row) * p.ldc + col;
      if (kStoreVec8 && col + 8 <= p.N) {
        *reinterpret_cast<uint4*>(dst) = v[j];
      } else {
        const __half* h = reinterpret_cast<const __half*>(&v[j]);
        for (int e = 0; e < 8 && col + e < p.N; ++e) dst[e] = h[e];
      }
    }
  }
}

// Value written to the staging tile (mma_sync, bias in global memory): the
// epilogue inside the matrix, 0 outside. b: the bias of col and col + 1.
__device__ __forceinline__ __half2 staged_pair(const TesseraGemmParams& p, int col, float v0, float v1,
                                               const __half* b) {
  const float e0 = col < p.N ? epilogue_op(v0, b) : 0.0f;
  const float e1 = col + 1 < p.N ? epilogue_op(v1, b + 1) : 0.0f;
  return __floats2half2_rn(e0, e1);
}

