/// wgmma_tma: the epilogue, the rest of consumer() (wgmma_consumer.cuh),
/// inside its loop over units: the accumulators to C with the fused epilogue,
/// by direct stores, a staged tile or the TMA store, transposed with swap-AB.
/// It closes the loop and the function.
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

