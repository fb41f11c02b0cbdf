/// mma_sync: the epilogue, the rest of gemm_tile (mma_sync_mainloop.cuh):
/// the accumulators to C with the fused epilogue, by direct stores or through
/// a staged tile. It closes the function.
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
    copy_tile_to_global<kBM, kBN, kCStride, kThreads, 1>(p, sC, m0, n0, tid);
  }
  __syncthreads();  // the next tile (persistent mode) refills the same buffers
}

