/// mma_sync: gemm_tile, one unit: the cp.async ring's main loop and the
/// split-K or stream-K reduction. gemm_tile goes on in mma_sync_epilogue.cuh,
/// which stores the tile and closes the function.
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
      if (u.peers > 1 && !streamk_fixup<kAccRegs, kThreads>(acc, w, slot_of, sems + u.sk_tile, tid, bar)) return;
    } else {
      if (!splitk_reduce<kAccRegs, kThreads>(acc, slot_of(u.tile_id), sems + u.tile_id, u.split, tid, bar, bar_or)) return;
    }
  }

