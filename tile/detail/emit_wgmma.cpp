// The wgmma_tma backend (sm_90a): one producer warpgroup issues TMA bulk
// tensor copies into a ring of shared-memory stages guarded by full/empty
// mbarriers; one or two consumer warpgroups run wgmma.mma_async on the stages
// straight from shared memory (128B/64B-swizzled, K-major A; B K-major for TN,
// N-major for NN) and keep the accumulators in registers.
// With inline_producer there is no producer warpgroup: thread 0 of the single
// consumer issues the first `stages` loads before the block barrier and each
// later one as the consumer releases a stage. With swap_ab the MMA computes
// C^T: its rows walk B (the weight, N) and its columns A (M), and the epilogue
// stores the transpose. Producer and consumers walk the same (tile, k-range)
// units: one per tiled CTA, or the persistent / stream-K schedule.
#include <fmt/format.h>

#include "tile/detail/emit.hpp"
#include "tile/legality.hpp"

namespace tessera::tile::detail {

namespace {

constexpr int kProducerRegs = 40;   // the producer only computes coordinates
constexpr int kConsumerRegs = 232;  // 2 consumers: 128*40 + 256*232 <= 64K registers

std::string constants(const Config& c, const Task& t) {
  return fmt::format(R"(// ---- wgmma_tma backend -------------------------------------------------------
constexpr int kConsumersM = {};       // consumer warpgroups along M
constexpr int kConsumersN = {};       // consumer warpgroups along N
constexpr bool kInflight = {};        // keep one wgmma group in flight while the next stage is issued
constexpr int kConsumers = kConsumersM * kConsumersN;
// Ping-pong: each consumer takes whole tiles, the two in turn (units 0, 2, 4,
// ... of the walk and 1, 3, 5, ...), and their main loops alternate.
constexpr bool kPingPong = {};
constexpr int kWM = kPingPong ? kBM : kBM / kConsumersM;   // rows per consumer warpgroup
constexpr int kWN = kPingPong ? kBN : kBN / kConsumersN;   // cols per consumer warpgroup (the wgmma N)
// Consumer warps that release each stage: with ping-pong only its tile's consumer reads it.
constexpr int kStageReaders = (kPingPong ? 1 : kConsumers) * 4;
constexpr int kMT = kWM / 64;            // m64 wgmma tiles per consumer
constexpr int kAccum = kWN / 2;          // fp32 accumulators per thread per m64 tile
constexpr int kAccRegs = kMT * kAccum;
constexpr int kSwizzleBytes = kBK * 2;   // a k-tile row is exactly one swizzle span
constexpr unsigned long long kDescLayout = kSwizzleBytes == 128 ? 1 : 2;  // 1 = 128B, 2 = 64B swizzle
constexpr int kATileBytes = kBM * kBK * 2;
constexpr int kBTileBytes = kBN * kBK * 2;
constexpr int kStageBytes = kATileBytes + kBTileBytes;   // TMA bytes per stage (OOB zeros count too)
constexpr int kBChunkCols = kSwizzleBytes / 2;           // NN: B columns per TMA box
constexpr int kBBoxes = kLayoutNN ? kBN / kBChunkCols : 1;
// Staged epilogue: a consumer's tile in padded rows; with swap-AB transposed
// (kWN rows of C, each kWM columns long).
constexpr int kStagingRows = kSwapAB ? kWN : kWM;
constexpr int kStagingStride = (kSwapAB ? kWM : kWN) + 8;  // row stride (halves)
constexpr bool kTmaStore = {};                           // epilogue: swizzled smem tile -> TMA bulk store
constexpr int kCChunkCols = kBChunkCols;                 // TMA store box: kWM rows x one swizzle row
// Per-consumer staging tile (bytes): padded rows (staged) or swizzled column chunks (TMA store).
constexpr int kStagingBytes = kStagedEpilogue ? kStagingRows * kStagingStride * 2 : kTmaStore ? kWM * kWN * 2 : 0;
// Bias epilogues: each consumer copies its tile's bias (C's columns: MMA
// columns, or MMA rows with swap-AB) into shared memory as its main loop starts.
constexpr bool kHasBias = kEpilogue != TESSERA_EPILOGUE_NONE;
constexpr int kBiasLen = kSwapAB ? kWM : kWN;
constexpr int kBiasBytes = kHasBias ? kBiasLen * 2 : 0;  // per consumer
constexpr bool kSetMaxNReg = kConsumers > 1;             // rebalance registers producer -> consumers
constexpr int kProducerRegs = {};
constexpr int kConsumerRegs = {};
// Thread-block cluster (cluster_x = N direction, cluster_y = M direction). CTAs
// of a cluster along N share their A tile, along M their B tile: each CTA
// loads a slice of the shared operand and multicasts it to the whole cluster.
constexpr int kClusterM = {};
constexpr int kClusterN = {};
constexpr int kClusterSize = kClusterM * kClusterN;
constexpr unsigned short kClusterMask = (1u << kClusterSize) - 1;
constexpr int kASliceRows = kBM / kClusterN;             // rows of A this CTA loads (and multicasts)
constexpr int kBSliceRows = kBN / kClusterM;             // TN: rows of B this CTA loads
constexpr int kBSliceBoxes = kBBoxes / kClusterM;        // NN: column chunks of B this CTA loads
// No producer warpgroup: thread 0 of the one consumer issues the loads.
constexpr bool kInlineProducer = {};

)",
                     c.warps_m, c.warps_n, c.reg_double_buffer, c.pingpong, c.epilogue_store == EpilogueStore::tma, kProducerRegs,
                     kConsumerRegs, c.cluster_m,
                     c.cluster_n, c.inline_producer);
  (void)t;
}

// The wgmma wrapper for this config's N: kAccum "+f" operands, then the two
// descriptors and the scale-d predicate.
std::string wgmma_wrapper(const Config& c, const Task& t) {
  const int n = consumer_cols(c);
  const int regs = n / 2;
  std::string list, operands;
  for (int i = 0; i < regs; ++i) {
    list += fmt::format("{}%{}", i ? ", " : "", i);
    operands += fmt::format("{}\"+f\"(d[{}])", i ? ", " : "", i);
    if (i % 8 == 7 && i + 1 < regs) operands += "\n        ";
  }
  const int trans_b = t.layout == Layout::NN ? 1 : 0;
  return fmt::format(R"CUDA(// D(64x{0}, fp32 registers) += A(64x16, smem) * B(16x{0}, smem). imm-trans-b = {1}
// ({2}-major B).
__device__ __forceinline__ void wgmma_m64n{0}k16(float* d, unsigned long long desc_a, unsigned long long desc_b) {{
  asm volatile(
      "{{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %{6}, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n{0}k16.f32.f16.f16 "
      "{{{3}}}, %{4}, %{5}, p, 1, 1, 0, {1};\n"
      "}}\n"
      : {7}
      : "l"(desc_a), "l"(desc_b), "r"(1));  // scale-d = 1: D += A*B
}}

)CUDA",
                     n, trans_b, trans_b ? "N" : "K", list, regs, regs + 1, regs + 2, operands);
}

const char* kBody = R"CUDA(// The MMA's problem: M x N, or N x M (C^T) with swap-AB, and its operands as
// tensor maps: the one whose rows the tile's kBM rows walk, and the other.
__device__ __forceinline__ int mma_rows(const TesseraGemmParams& p) { return kSwapAB ? p.N : p.M; }
__device__ __forceinline__ int mma_cols(const TesseraGemmParams& p) { return kSwapAB ? p.M : p.N; }
__device__ __forceinline__ const TesseraTensorMap* map_rows(const TesseraGemmParams& p) {
  return kSwapAB ? &p.tma_b : &p.tma_a;
}
__device__ __forceinline__ const TesseraTensorMap* map_cols(const TesseraGemmParams& p) {
  return kSwapAB ? &p.tma_a : &p.tma_b;
}

// Persistent cluster: w.u names a cluster tile of the walk's grid; this CTA's
// tile is its rank's within it (1-D clusters: the rank runs along one axis).
// The cluster grid is rounded up, so the tile may lie outside C (tile_in_c).
__device__ __forceinline__ void place_in_cluster(const TesseraGemmParams& p, Walk& w) {
  if (!w.valid) return;
  const int rank = static_cast<int>(blockIdx.x % kClusterSize);
  w.u = cluster_member(w.u, (mma_cols(p) + kBN - 1) / kBN, kClusterM, kClusterN, kClusterM > 1 ? rank : 0,
                       kClusterN > 1 ? rank : 0);
}

// A cluster's grid is rounded up to whole clusters: its extra CTAs take part
// in the multicasts (their peers need their slices) but store nothing.
__device__ __forceinline__ bool tile_in_c(const TesseraGemmParams& p, const Work& u) {
  return kClusterSize == 1 || (u.tm * kBM < mma_rows(p) && u.tn * kBN < mma_cols(p));
}

// This CTA's sequence of (tile, k-range) units; producer and consumers walk
// the same sequence, so the pipeline never needs a reset. Persistent and
// stream-K: the schedule above. Tiled: one unit from blockIdx (with a
// cluster, whole clusters are rasterised and the CTA placed inside its own),
// with its split's k-range.
__device__ __forceinline__ Walk walk_start(const TesseraGemmParams& p) {
  const int tiles_m = (mma_rows(p) + kBM - 1) / kBM, tiles_n = (mma_cols(p) + kBN - 1) / kBN;
  const int k_tiles = (p.K + kBK - 1) / kBK;
  if constexpr (kPersistent && kClusterSize > 1) {
    // The grid is whole 1-D clusters; each walks cluster tiles, its CTA (by
    // rank) taking its own tile of each.
    Walk w = walk_begin((tiles_m + kClusterM - 1) / kClusterM, (tiles_n + kClusterN - 1) / kClusterN, k_tiles,
                        blockIdx.x / kClusterSize, gridDim.x / kClusterSize);
    place_in_cluster(p, w);
    return w;
  } else if constexpr (kPersistent) {
    return walk_begin(tiles_m, tiles_n, k_tiles, blockIdx.x, gridDim.x);
  } else {
    Walk w{};
    w.tiles_m = tiles_m, w.tiles_n = tiles_n, w.k_tiles = k_tiles;
    int tm, tn;
    if constexpr (kClusterSize == 1) {
      // The grid holds tiles_m x tiles_n CTAs (with swap-AB as N-tiles x M-tiles).
      const TileCoord t = tile_coord(blockIdx.y * gridDim.x + blockIdx.x, tiles_m, tiles_n);
      tm = t.m, tn = t.n;
    } else {
      // The grid (x along C's N) is the tile grid rounded up to whole clusters;
      // with swap-AB, x walks the MMA's rows (N) and y its columns (M).
      const int x = static_cast<int>(blockIdx.x), y = static_cast<int>(blockIdx.y);
      const int row = kSwapAB ? x : y, col = kSwapAB ? y : x;
      const int cluster_rows = static_cast<int>(kSwapAB ? gridDim.x : gridDim.y) / kClusterM;
      const int cluster_cols = static_cast<int>(kSwapAB ? gridDim.y : gridDim.x) / kClusterN;
      const TileCoord t = tile_coord((row / kClusterM) * cluster_cols + col / kClusterN, cluster_rows, cluster_cols);
      tm = t.m * kClusterM + row % kClusterM, tn = t.n * kClusterN + col % kClusterN;
    }
    const int split = static_cast<int>(blockIdx.z);
    const int per_split = (k_tiles + kSplitK - 1) / kSplitK;
    const int kb = min(k_tiles, split * per_split);
    w.u = {tm, tn, tm * tiles_n + tn, kb, min(k_tiles, kb + per_split), split, 1, 0};
    w.valid = true;
    return w;
  }
}
__device__ __forceinline__ void walk_advance(const TesseraGemmParams& p, Walk& w) {
  if constexpr (kPersistent) {
    walk_next(w);
    if constexpr (kClusterSize > 1) place_in_cluster(p, w);
  } else {
    w.valid = false;
  }
}

// The producer's walk over (work unit, k-tile) loads, resumable: thread 0
// issues the first kStages loads right after initialising the barriers, before
// the block-wide barrier (a small GEMM is a few DRAM round trips long, so the
// first one should not wait for every warp to arrive), then goes on from there.
struct Producer {
  Walk w;
  unsigned rank;
  int kb, stage, phase;
};

__device__ __forceinline__ Producer producer_begin(const TesseraGemmParams& p) {
  Producer s;
  s.w = walk_start(p);
  s.rank = kClusterSize > 1 ? cluster_rank() : 0u;
  s.kb = s.w.valid ? s.w.u.kb_begin : 0;
  s.stage = 0, s.phase = 0;
  return s;
}

// Issues the next k-tile load; false once every unit of this CTA is loaded.
__device__ __forceinline__ bool producer_step(const TesseraGemmParams& p, Producer& s, unsigned char* smem,
                                              unsigned long long* full, unsigned long long* empty) {
  if (!s.w.valid) return false;
  while (s.kb >= s.w.u.kb_end) {  // this unit is done (or has no k-tiles): the next one
    walk_advance(p, s.w);
    if (!s.w.valid) return false;
    s.kb = s.w.u.kb_begin;
  }
  const Work& u = s.w.u;
  const int kb = s.kb, stage = s.stage;
  // Wait until the consumers released this stage (passes at once on the first lap).
  mbar_wait(&empty[stage], s.phase ^ 1);
  mbar_expect_tx(&full[stage], kStageBytes);
  unsigned char* sA = smem + stage * kATileBytes;
  unsigned char* sB = smem + kStages * kATileBytes + stage * kBTileBytes;
  if constexpr (kClusterN > 1) {  // A shared along the cluster row: load my slice for everyone
    const int r0 = static_cast<int>(s.rank) * kASliceRows;
    tma_load_2d_multicast(sA + r0 * kSwizzleBytes, map_rows(p), kb * kBK, u.tm * kBM + r0, &full[stage], kClusterMask);
  } else {
    tma_load_2d(sA, map_rows(p), kb * kBK, u.tm * kBM, &full[stage]);
  }
  if constexpr (kLayoutNN) {
    const int c0 = kClusterM > 1 ? static_cast<int>(s.rank) * kBSliceBoxes : 0;
#pragma unroll
    for (int c = c0; c < c0 + kBSliceBoxes; ++c) {
      void* dst = sB + c * kBK * kSwizzleBytes;
      if constexpr (kClusterM > 1) {
        tma_load_2d_multicast(dst, &p.tma_b, u.tn * kBN + c * kBChunkCols, kb * kBK, &full[stage], kClusterMask);
      } else {
        tma_load_2d(dst, &p.tma_b, u.tn * kBN + c * kBChunkCols, kb * kBK, &full[stage]);
      }
    }
  } else if constexpr (kClusterM > 1) {  // B shared along the cluster column
    const int r0 = static_cast<int>(s.rank) * kBSliceRows;
    tma_load_2d_multicast(sB + r0 * kSwizzleBytes, map_cols(p), kb * kBK, u.tn * kBN + r0, &full[stage], kClusterMask);
  } else {
    tma_load_2d(sB, map_cols(p), kb * kBK, u.tn * kBN, &full[stage]);
  }
  ++s.kb;
  if (++s.stage == kStages) {
    s.stage = 0;
    s.phase ^= 1;
  }
  return true;
}

// Cluster only: the CTA may not leave while a peer can still multicast into it
// or arrive on its barriers. Every peer consumer releases each of our loads
// after it has consumed it (so our multicasts have landed there too), and
// our consumers wait for every peer's multicast into us: once the last
// kStages loads are released, nothing more can reach this CTA. This replaces
// a cluster barrier at the end, which waited for the epilogue's stores as well.
__device__ __forceinline__ void producer_drain(Producer& s, unsigned long long* empty) {
  for (int i = 0; i < kStages; ++i) {
    mbar_wait(&empty[s.stage], s.phase ^ 1);
    if (++s.stage == kStages) {
      s.stage = 0;
      s.phase ^= 1;
    }
  }
}

// Inline producer: one stage was just released, so thread 0 issues the next
// load into it (mbar_wait holds it until the other three warps released too).
// Called only after a release: the first lap's stages are all filled already.
__device__ __forceinline__ void refill(const TesseraGemmParams& p, Producer& prod, unsigned char* smem,
                                       unsigned long long* full, unsigned long long* empty, int t) {
  if constexpr (kInlineProducer) {
    if (t == 0) producer_step(p, prod, smem, full, empty);
  }
}

// Accumulator layout of m64nNk16: warp w owns rows 16w..16w+15 of each m64
// tile; register 4j+{0,1} is (row lane/4, cols 8j + 2(lane%4) + {0,1}),
// 4j+{2,3} is 8 rows below. Calls f(r, c, d) for each of this thread's
// quads: d[0..1] at (r, c..c+1) and d[2..3] at (r + 8, c..c+1) of the
// consumer's kWM x kWN tile.
template <typename F>
__device__ __forceinline__ void for_each_quad(const float (&acc)[kAccRegs], int warp, int lane, F f) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int j = 0; j < kWN / 8; ++j) f(mt * 64 + warp * 16 + lane / 4, j * 8 + (lane % 4) * 2, &acc[mt * kAccum + j * 4]);
  }
}

// `prod` is the load walk when kInlineProducer (thread 0 only), else unused.
__device__ __forceinline__ void consumer(const TesseraGemmParams& p, unsigned char* smem, unsigned long long* full,
                                         unsigned long long* empty, __half* staging, __half* bias_smem, int c, int t,
                                         Producer& prod) {
  const int cm = kPingPong ? 0 : c / kConsumersN, cn = kPingPong ? 0 : c % kConsumersN;
  const int warp = t / 32, lane = t % 32;
  int stage = 0, phase = 0;
  // Stage 0's descriptors for this consumer; the loop only advances them.
  const unsigned char* sB0 = smem + kStages * kATileBytes;
  const unsigned long long dA0 = desc_k_major(smem, cm * kWM);
  const unsigned long long dB0 = kLayoutNN ? desc_n_major(sB0, cn * kWN) : desc_k_major(sB0, cn * kWN);
  int unit = 0;  // ping-pong: this unit's index in the walk
  for (Walk s = walk_start(p); s.valid; walk_advance(p, s), ++unit) {
    const Work u = s.u;
    if constexpr (kPingPong) {
      if (unit % 2 != c) {  // the other consumer's tile: its k-tiles pass through the ring
        const int at = stage + (u.kb_end - u.kb_begin);
        phase ^= (at / kStages) & 1;
        stage = at % kStages;
        continue;
      }
      // Our turn once the other consumer has issued its previous tile's math:
      // the tensor cores go to one consumer at a time, and every load before
      // ours is then waited for (a full barrier is never two phases behind).
      if (unit > 0) named_barrier(kOrderBarrier + c, 256);
    }
    const int row0 = u.tm * kBM + cm * kWM, col0 = u.tn * kBN + cn * kWN;  // of the MMA's problem
    // This tile's bias, copied while the main loop runs: the epilogue then
    // reads shared memory (0 past N) instead of waiting on global loads. The
    // first barrier keeps the copy from overwriting what a slower thread of
    // this consumer still reads for the previous tile.
    __half* const tile_bias = bias_smem + c * kBiasLen;
    if constexpr (kHasBias) {
      named_barrier(1 + c, 128);
      const int base = kSwapAB ? row0 : col0;
      for (int i = t; i < kBiasLen; i += 128) tile_bias[i] = base + i < p.N ? p.bias[base + i] : __float2half(0.0f);
    }

    float acc[kAccRegs];
#pragma unroll
    for (int i = 0; i < kAccRegs; ++i) acc[i] = 0.0f;
    int held = -1;  // kInflight: the stage whose wgmma group is still running
    for (int kb = u.kb_begin; kb < u.kb_end; ++kb) {
      mbar_wait(&full[stage], phase);
      const unsigned long long dA = desc_advance(dA0, stage * kATileBytes);
      const unsigned long long dB = desc_advance(dB0, stage * kBTileBytes);
      fence_accumulators(acc);
      wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < kBK / 16; ++ks) {
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          // k-major: 64 rows further and 32 bytes per k16 step; NN B: 16 k-rows per step.
          const unsigned long long da = desc_advance(dA, mt * 64 * kSwizzleBytes + ks * 32);
          const unsigned long long db = desc_advance(dB, kLayoutNN ? ks * 16 * kSwizzleBytes : ks * 32);
          WGMMA_CALL(&acc[mt * kAccum], da, db);
        }
      }
      wgmma_commit();
      if constexpr (kInflight) {
        wgmma_wait<1>();  // the previous stage's group is done: release that stage
        fence_accumulators(acc);
        if (held >= 0) {
          release(&empty[held], lane);
          refill(p, prod, smem, full, empty, t);
        }
        held = stage;
      } else {
        wgmma_wait<0>();
        fence_accumulators(acc);
        release(&empty[stage], lane);
        refill(p, prod, smem, full, empty, t);
      }
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
    }
    if constexpr (kPingPong) {
      // Every wgmma of this tile is issued: the next tile's consumer may start
      // (only if there is one, so that every arrival has its waiter).
      Walk next = s;
      walk_advance(p, next);
      if (next.valid) named_barrier_arrive(kOrderBarrier + (1 - c), 256);
    }
    if constexpr (kInflight) {
      wgmma_wait<0>();
      fence_accumulators(acc);
      if (held >= 0) {
        release(&empty[held], lane);
        refill(p, prod, smem, full, empty, t);
      }
    }

    if (!tile_in_c(p, u)) continue;

    // Split-K and stream-K: fp32 slots of kBM x kBN (a kWM x kWN share per
    // consumer), then one semaphore per (tile, consumer); the CTA that
    // completes the sum goes on to the epilogue, the others to their next unit.
    if constexpr (kSplitK > 1 || kStreamK) {
      const auto bar = [c] { named_barrier(1 + c, 128); };
      const auto bar_or = [c](int v) { return named_barrier_or(1 + c, 128, v); };
      float* ws = static_cast<float*>(p.workspace);
      const auto slot_of = [ws, c](int slot) { return ws + (static_cast<size_t>(slot) * kConsumers + c) * (kWM * kWN); };
      const int slots = kStreamK ? kStreamKPartials : s.tiles_m * s.tiles_n;
      int* sems = reinterpret_cast<int*>(ws + static_cast<size_t>(slots) * kBM * kBN);
      if constexpr (kStreamK) {
        if (u.peers > 1 &&
            !streamk_fixup<kAccRegs, 128>(acc, s, slot_of, sems + u.sk_tile * kConsumers + c, t, bar, bar_or))
          continue;
      } else {
        if (!splitk_reduce<kAccRegs, 128>(acc, slot_of(u.tile_id), sems + u.tile_id * kConsumers + c, u.split, t, bar,
                                          bar_or))
          continue;
      }
    }

    if constexpr (kHasBias) named_barrier(1 + c, 128);  // the bias copy is complete
    if constexpr (kSwapAB) {
      // C^T: MMA row r is column row0 + r of C, MMA column cc is row col0 + cc.
      if constexpr (kStagedEpilogue) {
        __half* sT = staging + c * (kStagingBytes / 2);  // kWN rows of C x kWM columns, padded
        for_each_quad(acc, warp, lane, [&](int r, int cc, const float* d) {
          // The select on N is not needed for the result (the copy clips) but
          // for ptxas: without it, it serialises this kernel's wgmmas (C7514,
          // "non wgmma instructions reading accumulator registers").
          const bool in0 = row0 + r < p.N, in8 = row0 + r + 8 < p.N;
          sT[cc * kStagingStride + r] = epilogue_one(in0 ? d[0] : 0.0f, tile_bias + r);
          sT[(cc + 1) * kStagingStride + r] = epilogue_one(in0 ? d[1] : 0.0f, tile_bias + r);
          sT[cc * kStagingStride + r + 8] = epilogue_one(in8 ? d[2] : 0.0f, tile_bias + r + 8);
          sT[(cc + 1) * kStagingStride + r + 8] = epilogue_one(in8 ? d[3] : 0.0f, tile_bias + r + 8);
        });
        named_barrier(1 + c, 128);
        copy_tile_to_global<kWN, kWM, kStagingStride, 128>(p, sT, col0, row0, t);
        named_barrier(1 + c, 128);  // the staging tile is reused by the next work unit
      } else {
        for_each_quad(acc, warp, lane, [&](int r, int cc, const float* d) {
          const bool in0 = row0 + r < p.N, in8 = row0 + r + 8 < p.N;  // as above, for ptxas
          store_half(p, col0 + cc, row0 + r, epilogue_one(in0 ? d[0] : 0.0f, tile_bias + r));
          store_half(p, col0 + cc + 1, row0 + r, epilogue_one(in0 ? d[1] : 0.0f, tile_bias + r));
          store_half(p, col0 + cc, row0 + r + 8, epilogue_one(in8 ? d[2] : 0.0f, tile_bias + r + 8));
          store_half(p, col0 + cc + 1, row0 + r + 8, epilogue_one(in8 ? d[3] : 0.0f, tile_bias + r + 8));
        });
      }
    } else if constexpr (kTmaStore) {
      __half* sC = staging + c * (kStagingBytes / 2);
      if (t == 0) bulk_wait_read();  // the previous unit's store is done reading the staging tile
      named_barrier(1 + c, 128);
      for_each_quad(acc, warp, lane, [&](int r, int cc, const float* d) {
        *reinterpret_cast<__half2*>(sC + tma_staging_offset(r, cc)) = epilogue_pair(d[0], d[1], tile_bias + cc);
        *reinterpret_cast<__half2*>(sC + tma_staging_offset(r + 8, cc)) = epilogue_pair(d[2], d[3], tile_bias + cc);
      });
      fence_proxy_async();
      named_barrier(1 + c, 128);
      if (t == 0) {
#pragma unroll
        for (int q = 0; q < kWN / kCChunkCols; ++q) {
          tma_store_2d(&p.tma_c, sC + q * kWM * kCChunkCols, col0 + q * kCChunkCols, row0);
        }
        bulk_commit();
      }
    } else if constexpr (!kStagedEpilogue) {
      for_each_quad(acc, warp, lane, [&](int r, int cc, const float* d) {
        store_half2(p, row0 + r, col0 + cc, epilogue_pair(d[0], d[1], tile_bias + cc));
        store_half2(p, row0 + r + 8, col0 + cc, epilogue_pair(d[2], d[3], tile_bias + cc));
      });
    } else {
      __half* sC = staging + c * (kWM * kStagingStride);
      for_each_quad(acc, warp, lane, [&](int r, int cc, const float* d) {
        *reinterpret_cast<__half2*>(sC + r * kStagingStride + cc) = epilogue_pair(d[0], d[1], tile_bias + cc);
        *reinterpret_cast<__half2*>(sC + (r + 8) * kStagingStride + cc) = epilogue_pair(d[2], d[3], tile_bias + cc);
      });
      named_barrier(1 + c, 128);
      copy_tile_to_global<kWM, kWN, kStagingStride, 128>(p, sC, row0, col0, t);
      named_barrier(1 + c, 128);  // the staging tile is reused by the next work unit
    }
  }
  if constexpr (kTmaStore) {
    if (t == 0) bulk_wait_all();  // C is written before the CTA retires
  }
}

extern "C" __global__ void __launch_bounds__(kThreads, 1) tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // 128B-swizzled TMA destinations and wgmma descriptors want 1024-byte alignment.
  const unsigned misalign = smem_u32(smem_raw) & 1023u;
  unsigned char* smem = smem_raw + (misalign ? 1024u - misalign : 0u);
  // [stages: A tiles | B tiles][epilogue staging (1024-aligned)][bias][full barriers][empty barriers]
  __half* staging = reinterpret_cast<__half*>(smem + kStages * kStageBytes);
  __half* bias_smem = reinterpret_cast<__half*>(smem + kStages * kStageBytes + kConsumers * kStagingBytes);
  unsigned long long* full = reinterpret_cast<unsigned long long*>(smem + kStages * kStageBytes + kConsumers * kStagingBytes +
                                                                   kConsumers * kBiasBytes);
  unsigned long long* empty = full + kStages;

  Producer prod;
  if (threadIdx.x == 0) {
    // The descriptors' first fetch overlaps the barrier set-up.
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(&p.tma_a) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(&p.tma_b) : "memory");
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);                 // the producer's arrive.expect_tx
      mbar_init(&empty[s], kStageReaders * kClusterSize);  // every reading consumer warp of the cluster arrives
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    prod = producer_begin(p);
    // Without a cluster nothing but this CTA's own barriers is involved: fill
    // the pipeline now (every stage is free on the first lap).
    if constexpr (kClusterSize == 1) {
      for (int s = 0; s < kStages && producer_step(p, prod, smem, full, empty); ++s) {
      }
    }
  }
  // Peers multicast into our stages and arrive on our barriers: all of them
  // must be initialised first.
  if constexpr (kClusterSize > 1) {
    cluster_sync();
  } else {
    __syncthreads();
  }

  if constexpr (kInlineProducer) {
    consumer(p, smem, full, empty, staging, bias_smem, 0, threadIdx.x, prod);
    return;
  }
  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    if constexpr (kSetMaxNReg) asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kProducerRegs));
    if (threadIdx.x == 0) {
      while (producer_step(p, prod, smem, full, empty)) {
      }
      if constexpr (kClusterSize > 1) producer_drain(prod, empty);
    }
  } else {
    if constexpr (kSetMaxNReg) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kConsumerRegs));
    consumer(p, smem, full, empty, staging, bias_smem, warpgroup - 1, threadIdx.x % 128, prod);
  }
}
)CUDA";

}  // namespace

std::string emit_wgmma(const Config& c, const Task& t) {
  const int wn = consumer_cols(c);
  std::string body = kBody;
  const std::string call = "WGMMA_CALL(";
  body.replace(body.find(call), call.size(), fmt::format("wgmma_m64n{}k16(", wn));
  // Boxes: the tile's kBM rows are loaded (bm / cluster_n) x bk at a time (a
  // multicast slice when shared along N), its kBN rows (bn / cluster_m) x bk
  // (TN); NN B is bk x (one swizzle row = bk columns). The kBM rows walk A, or
  // B with swap-AB.
  const int row_box = c.bm / c.cluster_n, col_box = c.bn / c.cluster_m;
  const int a_rows = c.swap_ab ? col_box : row_box;
  const int b_rows = t.layout == Layout::NN ? c.bk : c.swap_ab ? row_box : col_box;
  const int b_cols = c.bk;
  return header_comment(c, t) + common_constants(c, t) + constants(c, t) + common_device_code() +
         wgmma_wrapper(c, t) + wgmma_ptx_source() + body +
         contract(c, t, persistent_ctas_per_sm(c, t), a_rows, c.bk, b_rows, b_cols, c.bk * 2,
                  c.epilogue_store == EpilogueStore::tma ? consumer_rows(c) : 0,
                  c.epilogue_store == EpilogueStore::tma ? c.bk : 0);
}

}  // namespace tessera::tile::detail
