/// wgmma_tma: the epilogue, the rest of consumer() (wgmma_consumer.cuh),
/// inside its loop over units: the accumulators through the fused epilogue
/// (epilogue_tile, in registers), then to C by direct stores, a staged tile
/// (written with stmatrix; persistent swap-AB where the tile does not fit:
/// chunks of it in turn) or the TMA store, transposed with swap-AB.
/// It closes the loop and the function.
    if constexpr (kHasBias) named_barrier(1 + c, 128);  // the bias copy is complete
    __half2 h[kAccRegs / 2];
    epilogue_tile(acc, tile_bias, warp, lane, row0, p.N, h);
    // This consumer's staging (a staged ping-pong's: the one both share).
    __half* const own = staging + (kSharedStaging ? 0 : c) * (kStagingBytes / 2);
    if constexpr (kSwapAB) {
      // C^T: MMA row r is column row0 + r of C, MMA column cc is row col0 + cc.
      if constexpr (kChunkedStaging) {
        // kStagingChunkRows rows of C (n8 groups of MMA columns) at a time, the
        // slots in turn by a count that runs across units: a thread writes a
        // slot only past the barrier of the chunk after the one that last used
        // it, which every thread reaches once its copy of that chunk is done.
        // Rows past M end the tile (col0 is the consumer's: its threads agree).
        constexpr int kGroups = kWN / 8, kPerChunk = kStagingChunkRows / 8;
#pragma unroll
        for (int j0 = 0; j0 < kGroups; j0 += kPerChunk) {
          if (col0 + j0 * 8 >= p.M) break;
          __half* const sT = own + (chunks++ % kStagingChunkSlots) * kStagingChunkHalves;
          stmatrix_staged(sT, warp, lane, j0, j0 + kPerChunk < kGroups ? j0 + kPerChunk : kGroups, h);
          named_barrier(1 + c, 128);
          // A last chunk of fewer groups (only where they do not divide evenly)
          // copies only its rows: the rest of the slot is stale, and C's rows
          // there are the next tile's.
          if (j0 + kPerChunk <= kGroups)
            copy_tile_to_global<kStagingChunkRows, kWM, kStagingStride, 128, kPerChunk>(p, sT, col0 + j0 * 8, row0, t);
          else if constexpr (kGroups % kPerChunk != 0)
            copy_tile_to_global<(kGroups % kPerChunk) * 8, kWM, kStagingStride, 128, 1>(p, sT, col0 + j0 * 8, row0, t);
        }
      } else if constexpr (kStagedEpilogue) {
        __half* const sT = own;  // kWN rows of C x kWM columns, padded
        stmatrix_staged(sT, warp, lane, 0, kWN / 8, h);
        named_barrier(1 + c, 128);
        copy_tile_to_global<kWN, kWM, kStagingStride, 128, 4>(p, sT, col0, row0, t);
        named_barrier(1 + c, 128);  // the staging tile is reused by the next work unit
      } else {
        for_each_quad(warp, lane, [&](int q, int r, int cc) {
          store_half(p, col0 + cc, row0 + r, __low2half(h[2 * q]));
          store_half(p, col0 + cc + 1, row0 + r, __high2half(h[2 * q]));
          store_half(p, col0 + cc, row0 + r + 8, __low2half(h[2 * q + 1]));
          store_half(p, col0 + cc + 1, row0 + r + 8, __high2half(h[2 * q + 1]));
        });
      }
    } else if constexpr (kTmaStrips) {
      // Each warp stores its own 16 rows of each m64 tile, one swizzle row of
      // columns at a time, through its ring of strips: no barrier across the
      // warpgroup, and the ring is a few KB where the tile took kWM x kWN.
      // A box that would pass the tile's edge starts kCChunkCols before it
      // instead, and writes a few columns twice, with the same values.
      __half* const ring = staging + (c * 4 + warp) * (kTmaStripSlots * kTmaStripHalves);
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
        for (int j = 0; j < kTmaStripsPerRow; ++j) {
          const int s0 = j * kCChunkCols + kCChunkCols <= kWN ? j * kCChunkCols : kWN - kCChunkCols;
          __half* const strip = ring + (strips % kTmaStripSlots) * kTmaStripHalves;
          if (strips >= kTmaStripSlots) {  // the strip that last used this slot has been read
            if (lane == 0) bulk_wait_read_all_but<kTmaStripSlots - 1>();
            __syncwarp();
          }
          stmatrix_swizzled(strip, 0, lane, mt, s0, h);
          fence_proxy_async();
          __syncwarp();
          if (lane == 0) {
            tma_store_2d(&p.tma_c, strip, col0 + s0, row0 + mt * 64 + warp * kTmaStripRows);
            bulk_commit();
          }
          ++strips;
        }
      }
    } else if constexpr (kTmaStore) {
      __half* const sC = own;
      if (t == 0) bulk_wait_read();  // the previous unit's store is done reading the staging tile
      named_barrier(1 + c, 128);
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
        for (int j = 0; j < kWN / kCChunkCols; ++j)
          stmatrix_swizzled(sC + j * kWM * kCChunkCols, mt * 64 + warp * 16, lane, mt, j * kCChunkCols, h);
      }
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
      for_each_quad(warp, lane, [&](int q, int r, int cc) {
        store_half2(p, row0 + r, col0 + cc, h[2 * q]);
        store_half2(p, row0 + r + 8, col0 + cc, h[2 * q + 1]);
      });
    } else {
      __half* const sC = own;  // kWM rows x kWN columns, padded
      stmatrix_staged(sC, warp, lane, 0, kWN / 8, h);
      named_barrier(1 + c, 128);
      copy_tile_to_global<kWM, kWN, kStagingStride, 128, 4>(p, sC, row0, col0, t);
      named_barrier(1 + c, 128);  // the staging tile is reused by the next work unit
    }
  }
  if constexpr (kTmaStore) {
    if (kTmaStrips ? lane == 0 : t == 0) bulk_wait_all();  // C is written before the CTA retires
  }
}

