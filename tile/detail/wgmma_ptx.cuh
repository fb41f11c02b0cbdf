/// wgmma_tma (sm_90a): the PTX wrappers. Comes after the backend's constants
/// and the wgmma_m64n<N>k16 wrapper the emitter writes for the config's N
/// (emit_wgmma.cpp); the producer and the consumers below call these.
// ---- PTX wrappers: mbarriers, TMA, wgmma --------------------------------------
__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
// Spins until the barrier phase with the given parity has completed. (A
// suspend-time hint on try_wait, as in CUTLASS, measured no faster on the
// H200 and 5% slower with a cluster: 1024x2112x5120, 256x64 tiles.)
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, int parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
  } while (!done);
}

// 2-D TMA load of one box at (col, row) of the tensor map into smem; the
// transaction bytes complete on `bar`. Out-of-range elements arrive as zeros.
__device__ __forceinline__ void tma_load_2d(void* dst, const TesseraTensorMap* map, int col, int row,
                                            unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          smem_u32(dst)),
      "l"(map), "r"(col), "r"(row), "r"(smem_u32(bar))
      : "memory");
}

// The same box, written to this smem offset in every CTA of `mask`, and
// completing on the barrier at the same offset in each of them.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const TesseraTensorMap* map, int col, int row,
                                                      unsigned long long* bar, unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_u32(dst)),
      "l"(map), "r"(col), "r"(row), "r"(smem_u32(bar)), "h"(mask)
      : "memory");
}

// Arrive on the barrier at the same smem offset in cluster CTA `cta`. The
// default .release.cta is enough: the arrive only says that this CTA's wgmma
// reads of the stage are done (wgmma.wait_group), and a cluster-scope release
// measured 3.3 -> 10.5 us on 64x256x512 (64x8 tile, cluster 1x2) on the H100.
__device__ __forceinline__ void mbar_arrive_cluster(unsigned long long* bar, unsigned cta) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(smem_u32(bar)), "r"(cta));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
}

__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

// Every thread of every CTA in the cluster. Relaxed: what must be visible
// across the cluster (the barriers' initialisation) is published by
// fence.mbarrier_init.release.cluster; a releasing arrive costs more.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.relaxed;\nbarrier.cluster.wait;\n" ::: "memory");
}

// TMA store of one box from smem at (col, row) of the tensor map; rows/cols
// outside the tensor are clipped by the hardware.
__device__ __forceinline__ void tma_store_2d(const TesseraTensorMap* map, const void* src, int col, int row) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(map), "r"(col),
               "r"(row), "r"(smem_u32(src))
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// The previous bulk stores have finished reading shared memory.
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
// All but the last kPending bulk store groups have finished reading shared memory.
template <int kPending>
__device__ __forceinline__ void bulk_wait_read_all_but() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}
// The previous bulk stores are complete (written to global memory).
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// Generic-proxy writes to shared memory become visible to the TMA (async proxy).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// Four 8x8 fp16 matrices to shared memory: matrix i takes register i of every
// lane (the mma accumulator layout: row lane / 4, columns 2 (lane % 4) and one
// more), and lanes 8i..8i+7 give the addresses of its eight rows (16 bytes each).
__device__ __forceinline__ void stmatrix_x4(const void* row, __half2 m0, __half2 m1, __half2 m2, __half2 m3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(smem_u32(row)),
               "r"(*reinterpret_cast<unsigned*>(&m0)), "r"(*reinterpret_cast<unsigned*>(&m1)),
               "r"(*reinterpret_cast<unsigned*>(&m2)), "r"(*reinterpret_cast<unsigned*>(&m3))
               : "memory");
}

// Two matrices: lanes 0..15 give the addresses (the others' are not read).
__device__ __forceinline__ void stmatrix_x2(const void* row, __half2 m0, __half2 m1) {
  asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};\n" ::"r"(smem_u32(row)),
               "r"(*reinterpret_cast<unsigned*>(&m0)), "r"(*reinterpret_cast<unsigned*>(&m1))
               : "memory");
}
// The same, transposed: matrix i is stored column by column, lanes 8i..8i+7
// giving the addresses of its eight columns (16 bytes each: the column's eight
// rows). A swap-AB epilogue writes C^T's tile so, one instruction for four
// matrices where st.shared took one per half.
__device__ __forceinline__ void stmatrix_x4_trans(const void* col, __half2 m0, __half2 m1, __half2 m2, __half2 m3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(smem_u32(col)),
               "r"(*reinterpret_cast<unsigned*>(&m0)), "r"(*reinterpret_cast<unsigned*>(&m1)),
               "r"(*reinterpret_cast<unsigned*>(&m2)), "r"(*reinterpret_cast<unsigned*>(&m3))
               : "memory");
}
__device__ __forceinline__ void stmatrix_x2_trans(const void* col, __half2 m0, __half2 m1) {
  asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};\n" ::"r"(smem_u32(col)),
               "r"(*reinterpret_cast<unsigned*>(&m0)), "r"(*reinterpret_cast<unsigned*>(&m1))
               : "memory");
}

// Halves offset of (r, c) in a block of one swizzle row (kCChunkCols columns)
// per row, with the TMA's XOR swizzle of 16-byte units: a TMA-store strip, or one
// chunk of a staging tile (chunks of kWM rows, kWM x kCChunkCols halves apart).
__device__ __forceinline__ int tma_strip_offset(int r, int c) {
  const int unit = (c * 2 / 16) ^ (((r * kSwizzleBytes) >> 7) & (kSwizzleBytes / 16 - 1));
  return (r * kSwizzleBytes + unit * 16) / 2;
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Keeps the compiler from moving accumulator reads/writes across the async wgmma.
__device__ __forceinline__ void fence_accumulators(float (&acc)[kAccRegs]) {
#pragma unroll
  for (int i = 0; i < kAccRegs; ++i) asm volatile("" : "+f"(acc[i])::"memory");
}

// Shared-memory matrix descriptor: start address, leading/stride byte offsets
// (all >> 4) and the swizzle layout in bits 62-63. Stage buffers are 1024-byte
// aligned, so the base-offset field stays 0.
__device__ __forceinline__ unsigned long long smem_desc(const void* p, unsigned lbo_bytes, unsigned sbo_bytes) {
  unsigned long long d = (smem_u32(p) & 0x3FFFF) >> 4;
  d |= static_cast<unsigned long long>((lbo_bytes >> 4) & 0x3FFF) << 16;
  d |= static_cast<unsigned long long>((sbo_bytes >> 4) & 0x3FFF) << 32;
  d |= kDescLayout << 62;
  return d;
}

// A (and TN B): K-major rows of kSwizzleBytes; 8-row groups are kSwizzleBytes*8
// apart; a k16 step moves 32 bytes along the (swizzled) row (desc_advance).
__device__ __forceinline__ unsigned long long desc_k_major(const unsigned char* tile, int row) {
  return smem_desc(tile + row * kSwizzleBytes, 16, 8 * kSwizzleBytes);
}
// NN B: N-major, stored as kBN/kBChunkCols column chunks of kBK rows x
// kSwizzleBytes. LBO = distance between column chunks, SBO = 8 k-rows; a k16
// step moves 16 rows (desc_advance).
__device__ __forceinline__ unsigned long long desc_n_major(const unsigned char* tile, int col) {
  return smem_desc(tile + (col / kBChunkCols) * (kBK * kSwizzleBytes), kBK * kSwizzleBytes, 8 * kSwizzleBytes);
}
// The same descriptor `bytes` further on: only the start address moves. It is
// in 16-byte units in bits 0-13, and shared memory ends below 2^18 bytes, so
// the sum never carries into the offsets. Rebuilding descriptors for every
// wgmma cost the main loop about 20 instructions each.
__device__ __forceinline__ unsigned long long desc_advance(unsigned long long desc, unsigned bytes) {
  return desc + (bytes >> 4);
}

// A consumer warp hands a stage back to the producer once its wgmma reads of it
// are complete (wgmma.wait_group is warp-synchronous, so lane 0 speaks for the warp).
// With a cluster, the stage is also filled by the peers' multicasts, so every
// CTA's producer must hear that this CTA's consumers are done with it.
__device__ __forceinline__ void release(unsigned long long* empty_bar, int lane) {
  if (lane != 0) return;
  if constexpr (kClusterSize == 1) {
    mbar_arrive(empty_bar);
  } else {
#pragma unroll
    for (int r = 0; r < kClusterSize; ++r) mbar_arrive_cluster(empty_bar, r);
  }
}

__device__ __forceinline__ void named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// Arrives without waiting: the ping-pong order barrier, where one consumer
// signals and the other waits (named_barrier) on the same id.
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// Ping-pong: ids kOrderBarrier + c say that consumer c may start its tile's
// main loop (ids 1 and 2 are the consumers' own 128-thread barriers).
constexpr int kOrderBarrier = 3;
// Ping-pong's shared staging tile: ids kStagingBarrier + c say that consumer c
// may write it (StagingTurn, wgmma_consumer.cuh).
constexpr int kStagingBarrier = 5;
// Tiled with the staging in the ring: every consumer's wgmmas are done (kStagingInRing).
constexpr int kRingBarrier = 7;
// A named barrier that also ORs a flag across its threads.
__device__ __forceinline__ int named_barrier_or(int id, int threads, int flag) {
  int any;
  asm volatile(
      "{\n"
      ".reg .pred p, q;\n"
      "setp.ne.s32 p, %1, 0;\n"
      "barrier.red.or.pred q, %2, %3, p;\n"
      "selp.s32 %0, 1, 0, q;\n"
      "}\n"
      : "=r"(any)
      : "r"(flag), "r"(id), "r"(threads)
      : "memory");
  return any;
}

