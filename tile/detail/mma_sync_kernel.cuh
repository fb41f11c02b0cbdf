/// mma_sync: the kernel: the persistent or stream-K walk, or one tiled unit.
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
