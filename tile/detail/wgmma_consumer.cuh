/// wgmma_tma: a consumer warpgroup's main loop (wait for a stage, wgmma on
/// it, release it) and each unit's split-K or stream-K reduction. consumer()
/// goes on in wgmma_epilogue.cuh, which stores the tile and closes the
/// function. wgmma_m64nNk16 stands for the wrapper of the config's N: the
/// emitter writes wgmma_m64n<kWN>k16 there (emit_wgmma.cpp, consumer).
// Accumulator layout of m64nNk16: warp w owns rows 16w..16w+15 of each m64
// tile; register 4j+{0,1} is (row lane/4, cols 8j + 2(lane%4) + {0,1}),
// 4j+{2,3} is 8 rows below. Calls f(q, r, c) for each of this thread's
// quads q: acc[4q..4q+1] at (r, c..c+1) and acc[4q+2..4q+3] at (r + 8, c..c+1)
// of the consumer's kWM x kWN tile.
template <typename F>
__device__ __forceinline__ void for_each_quad(int warp, int lane, F f) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int j = 0; j < kWN / 8; ++j) f(mt * (kWN / 8) + j, mt * 64 + warp * 16 + lane / 4, j * 8 + (lane % 4) * 2);
  }
}

// This thread's whole accumulator tile through the fused epilogue, into fp16
// pairs: h[2q] is quad q's (r, c..c+1), h[2q + 1] its (r + 8, c..c+1). All of
// it before any store: interleaved with the stores, each pair waited for the
// one before, since the compiler cannot move a bias load (shared memory) above
// a store to the staging tile (shared memory too), and each pair's load latency
// and GELU chain ran alone, two warps per scheduler (an ncu count at 4096^3:
// the bias alone cost 8k cycles per SM, 2.7 instructions per element).
// `bias` is this tile's shared-memory copy, readable (0) past N, so the math
// needs no guard (a guard per element made each one a branch of its own): the
// results past M x N are never stored, as every store path clips. row0: with
// swap-AB, C's column of MMA row 0, for the select below.
__device__ __forceinline__ void epilogue_tile(const float (&acc)[kAccRegs], const __half* bias, int warp, int lane,
                                              int row0, int n, __half2 (&h)[kAccRegs / 2]) {
  for_each_quad(warp, lane, [&](int q, int r, int cc) {
    float v0 = acc[4 * q], v1 = acc[4 * q + 1], v2 = acc[4 * q + 2], v3 = acc[4 * q + 3];
    if constexpr (kSwapAB) {
      // C^T: MMA row r is C's column row0 + r, and takes its bias. The select
      // on N is not needed for the result (the stores clip) but for ptxas:
      // without it, it serialises this kernel's wgmmas (C7514, "non wgmma
      // instructions reading accumulator registers").
      if (row0 + r >= n) v0 = v1 = 0.0f;
      if (row0 + r + 8 >= n) v2 = v3 = 0.0f;
      if constexpr (kHasBias) {
        const float b0 = __half2float(bias[r]), b8 = __half2float(bias[r + 8]);
        v0 += b0, v1 += b0, v2 += b8, v3 += b8;
      }
    } else if constexpr (kHasBias) {
      const float2 b = __half22float2(*reinterpret_cast<const __half2*>(bias + cc));
      v0 += b.x, v1 += b.y, v2 += b.x, v3 += b.y;
    }
    h[2 * q] = __floats2half2_rn(epilogue_act(v0), epilogue_act(v1));
    h[2 * q + 1] = __floats2half2_rn(epilogue_act(v2), epilogue_act(v3));
  });
}

// This warp's 16 rows of m64 tile mt, columns s0 .. s0 + kCChunkCols - 1 of
// its pairs h, into a swizzled block (tma_strip_offset's layout: a TMA-store
// strip, or one chunk of a staging tile) at block row `row`: four stmatrix.x4
// per 64 columns, where st.shared takes one instruction per pair of halves.
__device__ __forceinline__ void stmatrix_swizzled(__half* block, int row, int lane, int mt, int s0,
                                                  const __half2 (&h)[kAccRegs / 2]) {
  const int m = lane / 8, r = row + lane % 8 + 8 * (m & 1);  // the row this lane addresses in matrix m
#pragma unroll
  for (int u = 0; u < kCChunkCols / 16; ++u) {
    const int q = mt * (kWN / 8) + s0 / 8 + 2 * u;  // the quads of columns s0 + 16u .. + 15
    stmatrix_x4(block + tma_strip_offset(r, 16 * u + 8 * (m >> 1)), h[2 * q], h[2 * q + 1], h[2 * q + 2],
                h[2 * q + 3]);
  }
}

// A staged epilogue's tile, or one chunk of it, in rows kStagingStride halves
// apart: this thread's pairs h of n8 column groups [j0, j1) of each m64 tile,
// two groups (four 8x8 matrices) per stmatrix. With swap-AB transposed, a row
// of C per MMA column, group j0's first column in the block's row 0; else MMA
// row r in block row r. st.shared took one instruction per half (transposed)
// or per pair. Transposed, the stride's 8 halves of padding put a matrix's
// eight 16-byte rows in different banks (kWM is a multiple of 64); row-major
// only where kWN / 8 is even (two-way conflicts otherwise, as before).
__device__ __forceinline__ void stmatrix_staged(__half* block, int warp, int lane, int j0, int j1,
                                                const __half2 (&h)[kAccRegs / 2]) {
  const int m = lane / 8, i = lane % 8;  // this lane addresses row (column, transposed) i of matrix m
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int j = j0; j < j1; j += 2) {
      const int q = mt * (kWN / 8) + j;
      const int g = j - j0 + (m >> 1), r = mt * 64 + warp * 16 + 8 * (m & 1);  // matrix m: its group, first MMA row
      if constexpr (kSwapAB) {
        __half* const at = block + (8 * g + i) * kStagingStride + r;
        if (j + 1 < j1)
          stmatrix_x4_trans(at, h[2 * q], h[2 * q + 1], h[2 * q + 2], h[2 * q + 3]);
        else
          stmatrix_x2_trans(at, h[2 * q], h[2 * q + 1]);
      } else {
        __half* const at = block + (r + i) * kStagingStride + 8 * g;
        if (j + 1 < j1)
          stmatrix_x4(at, h[2 * q], h[2 * q + 1], h[2 * q + 2], h[2 * q + 3]);
        else
          stmatrix_x2(at, h[2 * q], h[2 * q + 1]);
      }
    }
  }
}

// Ping-pong with a staged epilogue: the two consumers share one staging tile,
// which leaves the second one's shared memory to the stages (128x176 tiles get
// a fourth stage). Their epilogues already alternate with their main loops, so
// the tile passes from one to the other: consumer c waits for it (ids
// kStagingBarrier + c) before its unit's epilogue, and passes it on when the
// unit ends (its copy-out has read it by then). Every unit takes and passes
// the turn, epilogue or not, so that no arrival is counted twice on one
// barrier. A TMA store goes in strips instead, each warp's own (kTmaStrips).
struct StagingTurn {
  int c;
  bool pass;
  __device__ __forceinline__ StagingTurn(int consumer, bool wait, bool pass_on) : c(consumer), pass(pass_on) {
    if constexpr (kSharedStaging)
      if (wait) named_barrier(kStagingBarrier + c, 256);
  }
  __device__ __forceinline__ ~StagingTurn() {
    if constexpr (kSharedStaging)
      if (pass) named_barrier_arrive(kStagingBarrier + (1 - c), 256);
  }
};

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
  int unit = 0;    // ping-pong: this unit's index in the walk
  int strips = 0;  // TMA store in strips: this warp's strips so far (its ring's position)
  int chunks = 0;  // chunked staging: this consumer's chunks so far (its slots' turn)
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
    // Two consumers: the descriptors run from stage to stage and are rebuilt
    // only on the ring's wrap (the 4096^3 winner's k-loop: 53 -> about 30
    // instructions per warp). Two warps per scheduler issue there, and at the
    // power limit fewer instructions are a higher clock: 1.2% at 4096^3. One
    // consumer rebuilds them per stage: running ones measured 0.6% slower on
    // a 64x152 tile.
    unsigned long long dA = desc_advance(dA0, stage * kATileBytes), dB = desc_advance(dB0, stage * kBTileBytes);
    for (int kb = u.kb_begin; kb < u.kb_end; ++kb) {
      mbar_wait(&full[stage], phase);
      if constexpr (!kRunningDescriptors) {
        dA = desc_advance(dA0, stage * kATileBytes);
        dB = desc_advance(dB0, stage * kBTileBytes);
      }
      fence_accumulators(acc);
      wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < kBK / 16; ++ks) {
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          // k-major: 64 rows further and 32 bytes per k16 step; NN B: 16 k-rows per step.
          const unsigned long long da = desc_advance(dA, mt * 64 * kSwizzleBytes + ks * 32);
          const unsigned long long db = desc_advance(dB, kLayoutNN ? ks * 16 * kSwizzleBytes : ks * 32);
          wgmma_m64nNk16(&acc[mt * kAccum], da, db);
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
        if constexpr (kRunningDescriptors) dA = dA0, dB = dB0;
      } else if constexpr (kRunningDescriptors) {
        dA = desc_advance(dA, kATileBytes), dB = desc_advance(dB, kBTileBytes);
      }
    }
    bool has_next = false;  // ping-pong: the other consumer takes the walk's next unit
    if constexpr (kPingPong) {
      // Every wgmma of this tile is issued: the next tile's consumer may start
      // (only if there is one, so that every arrival has its waiter).
      Walk next = s;
      walk_advance(p, next);
      has_next = next.valid;
      if (has_next) named_barrier_arrive(kOrderBarrier + (1 - c), 256);
    }
    if constexpr (kInflight) {
      wgmma_wait<0>();
      fence_accumulators(acc);
      if (held >= 0) {
        release(&empty[held], lane);
        refill(p, prod, smem, full, empty, t);
      }
    }
    // The staging lies in the ring: no consumer writes it before every
    // consumer's wgmmas are done reading the stages. Here, before the split-K
    // reduction, since after it only one consumer may go on to the epilogue.
    if constexpr (kStagingInRing) named_barrier(kRingBarrier, 128 * kConsumers);

    // Ping-pong: this unit's turn at the one staging tile, taken on every
    // unit (the hand-offs alternate strictly) and passed on however it ends.
    const StagingTurn turn(c, unit > 0, has_next);
    if (!tile_in_c(p, u)) continue;

    // Split-K and stream-K: fp32 slots of kBM x kBN (a kWM x kWN share per
    // consumer), then one semaphore per (tile, consumer); the CTA that
    // completes the sum goes on to the epilogue, the others to their next unit.
    // A stream-K walker is a whole cluster whose members hold different
    // tiles: each member has its own slot and semaphore of every shared unit.
    if constexpr (kSplitK > 1 || kStreamK) {
      const auto bar = [c] { named_barrier(1 + c, 128); };
      const auto bar_or = [c](int v) { return named_barrier_or(1 + c, 128, v); };
      float* ws = static_cast<float*>(p.workspace);
      constexpr int kMembers = kStreamK ? kClusterSize : 1;
      const int member = kMembers > 1 ? static_cast<int>(blockIdx.x % kClusterSize) : 0;
      const auto slot_of = [ws, c, member](int slot) {
        return ws + (static_cast<size_t>(streamk_member_entry(slot, member, kMembers)) * kConsumers + c) * (kWM * kWN);
      };
      const int slots = kStreamK ? kStreamKPartials : s.tiles_m * s.tiles_n;
      int* sems = reinterpret_cast<int*>(ws + static_cast<size_t>(slots) * kBM * kBN);
      if constexpr (kStreamK) {
        if (u.peers > 1 &&
            !streamk_fixup<kAccRegs, 128>(acc, s, slot_of,
                                          sems + streamk_member_entry(u.sk_tile, member, kMembers) * kConsumers + c, t,
                                          bar))
          continue;
      } else {
        if (!splitk_reduce<kAccRegs, 128>(acc, slot_of(u.tile_id), sems + u.tile_id * kConsumers + c, u.split, t, bar,
                                          bar_or))
          continue;
      }
    }

