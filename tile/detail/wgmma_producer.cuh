/// wgmma_tma: the producer, a resumable walk over (unit, k-tile) TMA loads
/// into the ring of stages. The producer warpgroup's thread 0 runs it, or with
/// kInlineProducer the consumer's thread 0 as it releases stages.
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

