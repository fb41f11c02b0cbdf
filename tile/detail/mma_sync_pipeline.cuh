/// mma_sync (sm_80+): the pieces of the main loop: the shared-memory layout
/// (padded or swizzled), cp.async loads of the A and B tiles, ldmatrix
/// fragments and mma.sync. Needs the backend's constants (emit_mma_sync.cpp).
// Offset (halves) of element (row, col) of a smem tile with kCols columns. With
// kSwizzle the 16-byte chunk index is XORed with the row, so that the 8 rows an
// ldmatrix phase reads land in 8 different bank groups.
template <int kCols, int kStride>
__device__ __forceinline__ int smem_offset(int row, int col) {
  if constexpr (kSwizzle) {
    constexpr int kChunks = kCols / 8;
    int chunk = col >> 3;
    if constexpr (kChunks >= 8) {
      chunk ^= row & 7;
    } else {
      chunk ^= (row / (8 / kChunks)) & (kChunks - 1);
    }
    return row * kStride + chunk * 8 + (col & 7);
  } else {
    return row * kStride + col;
  }
}

__device__ __forceinline__ void cp_async_16(unsigned dst, const void* src, bool valid) {
  // src-size 0 zero-fills the 16 bytes: out-of-range rows/cols become zeros.
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending)); }

// One 16-byte chunk (8 halves) of a row-major matrix with `rows` x `cols` valid
// elements into shared memory, zero-filled outside.
template <bool kVec>
__device__ __forceinline__ void copy_chunk(__half* dst, const __half* base, int ld, int r, int c, int rows, int cols) {
  if constexpr (kVec) {
    const bool valid = r < rows && c < cols;  // cols % 8 == 0: a chunk is all in or all out
    const __half* src = valid ? base + static_cast<size_t>(r) * ld + c : base;
    cp_async_16(smem_u32(dst), src, valid);
  } else {
    // Rows not 16-byte aligned: element loads, synchronous, zero-filled.
    __align__(16) __half v[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      v[e] = (r < rows && c + e < cols) ? base[static_cast<size_t>(r) * ld + c + e] : __float2half(0.0f);
    }
    *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(v);
  }
}

__device__ __forceinline__ void load_a(const TesseraGemmParams& p, __half* sA, int m0, int k0, int tid) {
  constexpr int kChunksPerRow = kBK / 8, kChunks = kBM * kChunksPerRow;
#pragma unroll
  for (int it = 0; it < (kChunks + kThreads - 1) / kThreads; ++it) {
    const int i = it * kThreads + tid;
    if (kChunks % kThreads != 0 && i >= kChunks) break;
    const int row = i / kChunksPerRow, col = (i % kChunksPerRow) * 8;
    copy_chunk<kVecA>(sA + smem_offset<kBK, kAStride>(row, col), p.A, p.lda, m0 + row, k0 + col, p.M, p.K);
  }
}

__device__ __forceinline__ void load_b(const TesseraGemmParams& p, __half* sB, int n0, int k0, int tid) {
  constexpr int kChunksPerRow = kBCols / 8, kChunks = kBRows * kChunksPerRow;
#pragma unroll
  for (int it = 0; it < (kChunks + kThreads - 1) / kThreads; ++it) {
    const int i = it * kThreads + tid;
    if (kChunks % kThreads != 0 && i >= kChunks) break;
    const int row = i / kChunksPerRow, col = (i % kChunksPerRow) * 8;
    __half* dst = sB + smem_offset<kBCols, kBStride>(row, col);
    if constexpr (kLayoutNN) {
      copy_chunk<kVecB>(dst, p.B, p.ldb, k0 + row, n0 + col, p.K, p.N);  // rows are k
    } else {
      copy_chunk<kVecB>(dst, p.B, p.ldb, n0 + row, k0 + col, p.N, p.K);  // rows are n
    }
  }
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const __half* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const __half* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}

__device__ __forceinline__ void mma_16816(float* c, const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

struct Fragments {
  unsigned a[kMI][4];
  unsigned b[kNI][2];
};

// ldmatrix the A and B fragments of k16 step `ks` for this warp.
__device__ __forceinline__ void load_fragments(Fragments& f, const __half* sA, const __half* sB, int warp_m, int warp_n,
                                               int lane, int ks) {
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi) {
    const int row = warp_m * kWM + mi * 16 + (lane % 16);
    const int col = ks * 16 + (lane / 16) * 8;
    ldmatrix_x4(f.a[mi], sA + smem_offset<kBK, kAStride>(row, col));
  }
#pragma unroll
  for (int nj = 0; nj < kNI / 2; ++nj) {  // two n8 fragments per ldmatrix.x4
    unsigned r[4];
    if constexpr (kLayoutNN) {
      const int k = ks * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
      const int n = warp_n * kWN + nj * 16 + (lane / 16) * 8;
      ldmatrix_x4_trans(r, sB + smem_offset<kBCols, kBStride>(k, n));
    } else {
      const int n = warp_n * kWN + nj * 16 + (lane % 8) + (lane / 16) * 8;
      const int k = ks * 16 + ((lane / 8) % 2) * 8;
      ldmatrix_x4(r, sB + smem_offset<kBCols, kBStride>(n, k));
    }
    f.b[2 * nj][0] = r[0];
    f.b[2 * nj][1] = r[1];
    f.b[2 * nj + 1][0] = r[2];
    f.b[2 * nj + 1][1] = r[3];
  }
}

__device__ __forceinline__ void mma_all(float (&acc)[kAccRegs], const Fragments& f) {
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi) {
#pragma unroll
    for (int ni = 0; ni < kNI; ++ni) mma_16816(&acc[(mi * kNI + ni) * 4], f.a[mi], f.b[ni]);
  }
}

