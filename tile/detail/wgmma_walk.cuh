/// wgmma_tma: the (tile, k-range) units a CTA computes, which the producer
/// and the consumers walk alike: one unit of the tiled grid, or the persistent
/// and stream-K walks of schedule.inc; with a cluster, this CTA's tile of it.
// The MMA's problem: M x N, or N x M (C^T) with swap-AB, and its operands as
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

