// The mma_sync backend: cp.async multi-stage pipeline -> ldmatrix -> mma.sync.m16n8k16.
#include <algorithm>

#include <fmt/format.h>

#include "tile/detail/emit.hpp"
#include "tile/legality.hpp"

namespace tessera::tile::detail {

namespace {

std::string constants(const Config& c, const Task& t) {
  return fmt::format(R"(// ---- mma_sync backend --------------------------------------------------------
constexpr int kWarpsM = {};           // warps along M
constexpr int kWarpsN = {};           // warps along N
constexpr int kPrefetch = {};         // k-tiles in flight ahead of the math (<= kStages - 1)
constexpr bool kStaggeredLoads = {};  // B loads issued after the first k16 step, not with A
constexpr bool kRegDoubleBuffer = {}; // ldmatrix of k-step i+1 overlaps the mma of k-step i
constexpr bool kSwizzle = {};         // XOR-swizzled smem (else rows padded by 16 B)
constexpr bool kVecA = {};            // K % 8 == 0: A rows allow 16-byte cp.async
constexpr bool kVecB = {};            // B rows allow 16-byte cp.async (TN: K % 8, NN: N % 8)

constexpr int kWM = kBM / kWarpsM;    // warp tile rows
constexpr int kWN = kBN / kWarpsN;    // warp tile cols
constexpr int kMI = kWM / 16;         // m16 fragments per warp
constexpr int kNI = kWN / 8;          // n8 fragments per warp
constexpr int kKSteps = kBK / 16;     // k16 steps per k-tile
constexpr int kPad = kSwizzle ? 0 : 8;
constexpr int kAStride = kBK + kPad;                    // halves per smem row of A (kBM rows)
constexpr int kBRows = kLayoutNN ? kBK : kBN;           // B tile as stored: NN k-rows, TN n-rows
constexpr int kBCols = kLayoutNN ? kBN : kBK;
constexpr int kBStride = kBCols + kPad;
constexpr int kATileHalves = kBM * kAStride;
constexpr int kBTileHalves = kBRows * kBStride;
constexpr int kCStride = kBN + 8;                       // staged epilogue tile row stride
constexpr int kAccRegs = kMI * kNI * 4;

)",
                     c.warps_m, c.warps_n, c.prefetch, c.load_order == LoadOrder::staggered, c.reg_double_buffer,
                     c.smem_layout == SmemLayout::swizzle, t.k % 8 == 0,
                     t.layout == Layout::TN ? t.k % 8 == 0 : t.n % 8 == 0);
}

const char* kBody = R"CUDA(// Offset (halves) of element (row, col) of a smem tile with kCols columns. With
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

// One unit: k-tiles [kb_begin, kb_end) of tile (tm, tn).
// `w` is the walk the unit came from (stream-K's fix-up needs it).
__device__ __forceinline__ void gemm_tile(const TesseraGemmParams& p, __half* smem, const Walk& w, int tiles) {
  const Work& u = w.u;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
  const int m0 = u.tm * kBM, n0 = u.tn * kBN;
  const int kt_begin = u.kb_begin, kt_end = u.kb_end;
  __half* sA = smem;
  __half* sB = smem + kStages * kATileHalves;

  float acc[kAccRegs];
#pragma unroll
  for (int i = 0; i < kAccRegs; ++i) acc[i] = 0.0f;

  // Prologue: kPrefetch k-tiles in flight, one commit group each.
#pragma unroll
  for (int s = 0; s < kPrefetch; ++s) {
    if (kt_begin + s < kt_end) {
      load_a(p, sA + s * kATileHalves, m0, (kt_begin + s) * kBK, tid);
      load_b(p, sB + s * kBTileHalves, n0, (kt_begin + s) * kBK, tid);
    }
    cp_async_commit();
  }

  for (int kt = kt_begin; kt < kt_end; ++kt) {
    const int i = kt - kt_begin;
    const int stage = i % kStages;
    // Tile kt has landed once at most kPrefetch-1 younger groups are pending;
    // the barrier also tells every warp that the stage refilled below
    // (last read kStages - kPrefetch >= 1 iterations ago) is free.
    cp_async_wait<kPrefetch - 1>();
    __syncthreads();
    const int next = kt + kPrefetch;
    const int next_stage = (i + kPrefetch) % kStages;
    const bool has_next = next < kt_end;
    if (has_next) load_a(p, sA + next_stage * kATileHalves, m0, next * kBK, tid);
    if constexpr (!kStaggeredLoads) {
      if (has_next) load_b(p, sB + next_stage * kBTileHalves, n0, next * kBK, tid);
      cp_async_commit();
    }

    const __half* a_tile = sA + stage * kATileHalves;
    const __half* b_tile = sB + stage * kBTileHalves;
    if constexpr (kRegDoubleBuffer) {
      Fragments f[2];
      load_fragments(f[0], a_tile, b_tile, warp_m, warp_n, lane, 0);
#pragma unroll
      for (int ks = 0; ks < kKSteps; ++ks) {
        if (ks + 1 < kKSteps) load_fragments(f[(ks + 1) % 2], a_tile, b_tile, warp_m, warp_n, lane, ks + 1);
        if (kStaggeredLoads && ks == 0) {
          if (has_next) load_b(p, sB + next_stage * kBTileHalves, n0, next * kBK, tid);
          cp_async_commit();
        }
        mma_all(acc, f[ks % 2]);
      }
    } else {
      Fragments f;
#pragma unroll
      for (int ks = 0; ks < kKSteps; ++ks) {
        load_fragments(f, a_tile, b_tile, warp_m, warp_n, lane, ks);
        if (kStaggeredLoads && ks == 0) {
          if (has_next) load_b(p, sB + next_stage * kBTileHalves, n0, next * kBK, tid);
          cp_async_commit();
        }
        mma_all(acc, f);
      }
    }
  }
  cp_async_wait<0>();

  // Split-K and stream-K: one fp32 slot per tile, the semaphores after all
  // the slots; the CTA that completes the sum writes C. The barriers inside
  // also tell every warp that the pipeline buffers are free again.
  if constexpr (kSplitK > 1 || kStreamK) {
    const auto bar = [] { __syncthreads(); };
    const auto bar_or = [](int v) { return __syncthreads_or(v); };
    float* ws = static_cast<float*>(p.workspace);
    const auto slot_of = [ws](int slot) { return ws + static_cast<size_t>(slot) * kBM * kBN; };
    int* sems = reinterpret_cast<int*>(ws + static_cast<size_t>(kStreamK ? kStreamKPartials : tiles) * kBM * kBN);
    if constexpr (kStreamK) {
      if (u.peers > 1 && !streamk_fixup<kAccRegs, kThreads>(acc, w, slot_of, sems + u.sk_tile, tid, bar, bar_or)) return;
    } else {
      if (!splitk_reduce<kAccRegs, kThreads>(acc, slot_of(u.tile_id), sems + u.tile_id, u.split, tid, bar, bar_or)) return;
    }
  }

  const int row_base = m0 + warp_m * kWM + lane / 4;
  const int col_base = n0 + warp_n * kWN + (lane % 4) * 2;
  if constexpr (!kStagedEpilogue) {
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi) {
#pragma unroll
      for (int ni = 0; ni < kNI; ++ni) {
        const float* c = &acc[(mi * kNI + ni) * 4];
        const int row = row_base + mi * 16, col = col_base + ni * 8;
        store_pair(p, row, col, c[0], c[1], bias_at(p, col));
        store_pair(p, row + 8, col, c[2], c[3], bias_at(p, col));
      }
    }
  } else {
    __syncthreads();  // every warp is done reading the pipeline buffers
    __half* sC = smem;
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi) {
#pragma unroll
      for (int ni = 0; ni < kNI; ++ni) {
        const float* c = &acc[(mi * kNI + ni) * 4];
        const int r = warp_m * kWM + mi * 16 + lane / 4, col = warp_n * kWN + ni * 8 + (lane % 4) * 2;
        *reinterpret_cast<__half2*>(sC + r * kCStride + col) = staged_pair(p, n0 + col, c[0], c[1], bias_at(p, n0 + col));
        *reinterpret_cast<__half2*>(sC + (r + 8) * kCStride + col) = staged_pair(p, n0 + col, c[2], c[3], bias_at(p, n0 + col));
      }
    }
    __syncthreads();
    copy_tile_to_global<kBM, kBN, kCStride, kThreads>(p, sC, m0, n0, tid);
  }
  __syncthreads();  // the next tile (persistent mode) refills the same buffers
}

extern "C" __global__ void __launch_bounds__(kThreads) tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __half* smem = reinterpret_cast<__half*>(smem_raw);
  const int tiles_m = (p.M + kBM - 1) / kBM, tiles_n = (p.N + kBN - 1) / kBN;
  const int k_tiles = (p.K + kBK - 1) / kBK;
  if constexpr (kPersistent) {  // and stream-K: the schedule's walk
    for (Walk w = walk_begin(tiles_m, tiles_n, k_tiles, blockIdx.x, gridDim.x); w.valid; walk_next(w))
      gemm_tile(p, smem, w, tiles_m * tiles_n);
  } else {  // one unit: a tile and its split's k-range
    const TileCoord t = tile_coord(blockIdx.y * gridDim.x + blockIdx.x, tiles_m, tiles_n);
    const int split = static_cast<int>(blockIdx.z);
    const int per_split = (k_tiles + kSplitK - 1) / kSplitK;
    const int kb = min(k_tiles, split * per_split);
    Walk w{};
    w.u = {t.m, t.n, t.m * tiles_n + t.n, kb, min(k_tiles, kb + per_split), split, 1, 0};
    gemm_tile(p, smem, w, tiles_m * tiles_n);
  }
}
)CUDA";

}  // namespace

std::string emit_mma_sync(const Config& c, const Task& t) {
  return header_comment(c, t) + common_constants(c, t) + constants(c, t) + common_device_code() + kBody +
         contract(c, t, persistent_ctas_per_sm(c, t), 0, 0, 0, 0, 0);
}

}  // namespace tessera::tile::detail
