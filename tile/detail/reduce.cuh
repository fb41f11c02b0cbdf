/// Split-K and stream-K: a tile's partial sums meet in the fp32 workspace,
/// both backends. Comes after the work schedule (schedule.inc: Walk, the
/// stream-K slots). Needs kSplitK and kSplitKParallel.
__device__ __forceinline__ int load_acquire(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void store_release(int* p, int v) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;\n" : : "l"(p), "r"(v) : "memory");
}

// A CTA's arrival on a fix-up counter, by one thread after a block barrier:
// the release publishes every participant's workspace writes (they precede
// the barrier, and release is cumulative), the acquire lets the last arrival
// read the others' (its block reads after the next barrier). One fence on one
// thread, where a __threadfence() on every thread made each warp drain its
// own stores (ERRBAR) and invalidate L1 (CCTL.IVALL): 405 of a stream-K
// kernel's 5326 stall samples under ncu (docs/tile.md, session 11).
__device__ __forceinline__ int arrive_acq_rel(int* p) {
  int old;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;\n" : "=r"(old) : "l"(p) : "memory");
  return old;
}

// fp32 workspace traffic in 16-byte vectors. The slot keeps accumulator i of
// thread t at float4 (i / 4) * kParticipants + t, lane i % 4: a thread's four
// consecutive accumulators are one vector, and a warp's vectors are contiguous.
template <int kParticipants>
__device__ __forceinline__ float* slot_vec(float* slot, int i, int t) {
  return slot + ((i / 4) * kParticipants + t) * 4;
}
__device__ __forceinline__ float4 ld_cg4(const float* p) { return __ldcg(reinterpret_cast<const float4*>(p)); }
__device__ __forceinline__ void st_cg4(float* p, float4 v) { __stcg(reinterpret_cast<float4*>(p), v); }
// The same loads and stores with an L2 eviction priority. A stream-K
// partial is stored evict_last: it is read back only at the end of the
// kernel, and in between the operands streaming through the L2 (cold: full
// of lines the timer dirtied) evicted it. Its reader demotes it again
// (evict_first on the read and on the zeroing store), so that no line of
// the workspace outlives the kernel with a high priority and takes L2 room
// from whatever runs next (a baseline timed after us included).
__device__ __forceinline__ unsigned long long l2_evict_last_policy() {
  unsigned long long p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ unsigned long long l2_evict_first_policy() {
  unsigned long long p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ void st_cg4_hint(float* p, float4 v, unsigned long long policy) {
  asm volatile("st.global.cg.L2::cache_hint.v4.f32 [%0], {%1, %2, %3, %4}, %5;\n" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z),
               "f"(v.w), "l"(policy)
               : "memory");
}
__device__ __forceinline__ float4 ld_cg4_hint(const float* p, unsigned long long policy) {
  float4 v;
  asm volatile("ld.global.cg.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "l"(p), "l"(policy)
               : "memory");
  return v;
}
// Four fp32 atomic adds as one vector reduction where the hardware has one
// (sm_90: red.global.add.v4.f32, a quarter of the L2 atomic requests).
__device__ __forceinline__ void red_add4(float* p, float a, float b, float c, float d) {
#if __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
#else
  atomicAdd(p, a), atomicAdd(p + 1, b), atomicAdd(p + 2, c), atomicAdd(p + 3, d);
#endif
}

// Reads a thread's vectors of a workspace slot kReadBatch at a time, then
// hands each to f(i, vector address, value) in order (f adds and stores).
// A loop that loads, adds and stores one vector at a time compiles to one
// load and one store per vector in program order, and each add waits a full
// L2 round trip (SASS, split-K and stream-K alike): a 128x256 stream-K
// tile's owner took 17-31 us to read one peer's partial at 600x6144x4096
// (H200 traces). Eight loads go out together here. (kReadBatch is local: at
// namespace scope NVRTC warned in every kernel without split-K or stream-K.)
template <int kRegs, int kParticipants, typename Load, typename F>
__device__ __forceinline__ void for_each_vec_batched(float* slot, int t, Load load, F f) {
  constexpr int kReadBatch = 8;
#pragma unroll
  for (int i0 = 0; i0 < kRegs; i0 += 4 * kReadBatch) {
    float4 x[kReadBatch];
#pragma unroll
    for (int j = 0; j < kReadBatch; ++j)
      if (i0 + 4 * j < kRegs) x[j] = load(slot_vec<kParticipants>(slot, i0 + 4 * j, t));
#pragma unroll
    for (int j = 0; j < kReadBatch; ++j)
      if (i0 + 4 * j < kRegs) f(i0 + 4 * j, slot_vec<kParticipants>(slot, i0 + 4 * j, t), x[j]);
  }
}

// Split-K reduction of one tile's accumulators through its fp32 workspace slot.
// Serial: split z waits until the tile's semaphore reads z, then folds its
// partial sums into the slot. The last split reads the total back, zeroes the
// slot and resets the semaphore: the ABI wants the workspace all-zero after
// the kernel. Workspace traffic bypasses L1 (ld/st.cg): other SMs wrote it.
// Returns true for the split that must write C.
// Parallel split-K: every one of `arrivals` CTAs adds its partial sums to the
// slot with fp32 atomics at once; the last to bump the arrival counter reads
// the total back, zeroes the slot and resets the counter (the ABI wants the
// workspace all-zero after the kernel). Summation order varies from run to
// run. Returns true for the CTA that must write C.
template <int kRegs, int kParticipants, typename Barrier, typename BarrierOr>
__device__ __forceinline__ bool reduce_arrive(float (&acc)[kRegs], float* slot, int* sem, int arrivals, int t,
                                              Barrier bar, BarrierOr bar_or) {
  static_assert(kRegs % 4 == 0, "the workspace is read and written in float4 vectors");
  const float4 kZero4 = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
  for (int i = 0; i < kRegs; i += 4)
    red_add4(slot_vec<kParticipants>(slot, i, t), acc[i], acc[i + 1], acc[i + 2], acc[i + 3]);
  // Every participant's adds must be visible before thread 0 reports the
  // arrival: barrier, then thread 0's release. Without the barrier, thread 0
  // can bump the counter while other threads' adds are still in flight, and
  // the last CTA reads a partial sum (seen under racecheck's scheduling on the
  // H100: 1023 wrong elements with split-K 2).
  bar();
  int last = 0;
  if (t == 0) last = arrive_acq_rel(sem) == arrivals - 1;
  if (!bar_or(last)) return false;
  for_each_vec_batched<kRegs, kParticipants>(slot, t, ld_cg4, [&](int i, float* v, float4 s) {
    acc[i] = s.x, acc[i + 1] = s.y, acc[i + 2] = s.z, acc[i + 3] = s.w;
    st_cg4(v, kZero4);
  });
  if (t == 0) atomicExch(sem, 0);
  return true;
}

// A non-owner's arrival: one thread, after a block barrier, publishes every
// participant's stores (release is cumulative) without waiting for a reply.
__device__ __forceinline__ void arrive_release(int* p) {
  asm volatile("red.release.gpu.global.add.s32 [%0], 1;\n" : : "l"(p) : "memory");
}

// Stream-K fix-up of a tile that u.peers CTAs share. The tile's first peer
// owns it: its range holds the tile's k = 0 part, which it walks last
// unless its range starts there, so its peers have mostly counted in by
// then. Each other peer stores its partial sums in its own slot (16-byte
// stores the L2 is asked to keep, above) and counts itself in on the tile's
// semaphore without waiting for an answer; the owner waits until all have, adds their
// partials, zeroes the slots it read and the semaphore (the ABI wants the
// workspace all-zero after the kernel). It used to be the last to arrive
// that took the tile: every peer then waited on an acq_rel atomic, and at
// the end of the kernel, where every CTA reaches a fix-up at once, those
// completed one after another, about 0.25 us apart (per-CTA traces at
// 1000x5120x3072 on the H200, docs/tile.md).
// The wait always ends: a peer's part of a tile it does not own is the
// first unit of its range, so it counts in before it waits on anything,
// and of the CTAs that are resident, the ones whose peers are resident too
// go on and leave room for the rest.
// `slot_of(s)` is partial slot s (this block's share of it). Returns true
// for the CTA that must write C.
template <int kRegs, int kParticipants, typename SlotOf, typename Barrier>
__device__ __forceinline__ bool streamk_fixup(float (&acc)[kRegs], const Walk& w, SlotOf slot_of, int* sem, int t,
                                              Barrier bar) {
  static_assert(kRegs % 4 == 0, "the workspace is read and written in float4 vectors");
  const float4 kZero4 = {0.0f, 0.0f, 0.0f, 0.0f};
  const int first = streamk_first_peer(w);
  if (w.cta != first) {
    float* mine = slot_of(streamk_partial_slot(w, w.cta));
    const unsigned long long keep = l2_evict_last_policy();
#pragma unroll
    for (int i = 0; i < kRegs; i += 4)
      st_cg4_hint(slot_vec<kParticipants>(mine, i, t), make_float4(acc[i], acc[i + 1], acc[i + 2], acc[i + 3]), keep);
    // As in reduce_arrive: every thread's stores are joined before thread 0
    // reports the arrival.
    bar();
    if (t == 0) arrive_release(sem);
    return false;
  }
  if (t == 0) {
    while (load_acquire(sem) != w.u.peers - 1) __nanosleep(32);
  }
  bar();  // the other threads read what thread 0's acquire made visible
  // The reads go out in batches (for_each_vec_batched); the owner of a
  // 128x256 tile used to read one peer's partial for 17-31 us.
  const unsigned long long drop = l2_evict_first_policy();
  const auto load = [drop](const float* v) { return ld_cg4_hint(v, drop); };
  for (int q = first + 1; q < first + w.u.peers; ++q) {
    for_each_vec_batched<kRegs, kParticipants>(slot_of(streamk_partial_slot(w, q)), t, load,
                                               [&](int i, float* v, float4 x) {
                                                 acc[i] += x.x, acc[i + 1] += x.y, acc[i + 2] += x.z, acc[i + 3] += x.w;
                                                 st_cg4_hint(v, kZero4, drop);
                                               });
  }
  if (t == 0) atomicExch(sem, 0);
  return true;
}

template <int kRegs, int kParticipants, typename Barrier, typename BarrierOr>
__device__ __forceinline__ bool splitk_reduce(float (&acc)[kRegs], float* slot, int* sem, int z, int t, Barrier bar,
                                              BarrierOr bar_or) {
  static_assert(kRegs % 4 == 0, "the workspace is read and written in float4 vectors");
  const float4 kZero4 = {0.0f, 0.0f, 0.0f, 0.0f};
  if constexpr (kSplitKParallel) return reduce_arrive<kRegs, kParticipants>(acc, slot, sem, kSplitK, t, bar, bar_or);
  if (t == 0) {
    while (load_acquire(sem) != z) __nanosleep(64);
  }
  bar();
  if (z == kSplitK - 1) {
    for_each_vec_batched<kRegs, kParticipants>(slot, t, ld_cg4, [&](int i, float* v, float4 s) {
      acc[i] += s.x, acc[i + 1] += s.y, acc[i + 2] += s.z, acc[i + 3] += s.w;
      st_cg4(v, kZero4);
    });
    bar();
    if (t == 0) store_release(sem, 0);
    return true;
  }
  const auto load = [z, kZero4](const float* v) { return z == 0 ? kZero4 : ld_cg4(v); };
  for_each_vec_batched<kRegs, kParticipants>(slot, t, load, [&](int i, float* v, float4 s) {
    s.x += acc[i], s.y += acc[i + 1], s.z += acc[i + 2], s.w += acc[i + 3];
    st_cg4(v, s);
  });
  bar();  // thread 0's release publishes the block's stores (release is cumulative)
  if (t == 0) store_release(sem, z + 1);
  return false;
}

