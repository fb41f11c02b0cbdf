/// wgmma_tma: the kernel: the shared-memory layout, the barriers' set-up and
/// the first loads, then the producer warpgroup and the consumers.
extern "C" __global__ void __launch_bounds__(kThreads, 1) tessera_hgemm(const __grid_constant__ TesseraGemmParams p) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // 128B-swizzled TMA destinations and wgmma descriptors want 1024-byte alignment.
  const unsigned misalign = smem_u32(smem_raw) & 1023u;
  unsigned char* smem = smem_raw + (misalign ? 1024u - misalign : 0u);
  // [stages: A tiles | B tiles][epilogue staging (1024-aligned)][bias][full barriers][empty barriers],
  // tiled: [stages, the staging over their start][bias][barriers] (kStagingInRing).
  __half* staging = reinterpret_cast<__half*>(smem + (kStagingInRing ? 0 : kStages * kStageBytes));
  __half* bias_smem = reinterpret_cast<__half*>(smem + kRingBytes);
  unsigned long long* full = reinterpret_cast<unsigned long long*>(smem + kRingBytes + kConsumers * kBiasBytes);
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
  // Through a shuffle, so that the compiler knows the warpgroup is the same in
  // every lane: what derives from it (a consumer's wgmma descriptors) then
  // stays in uniform registers. From threadIdx.x alone, ptxas rebuilt the
  // descriptors and moved them to uniform registers on every k-tile.
  const int warpgroup = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0);
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
