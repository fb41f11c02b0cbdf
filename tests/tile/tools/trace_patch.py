#!/usr/bin/env python3
"""Adds a per-CTA timeline to an emitted wgmma_tma kernel (a diagnostic, never shipped):
   trace_patch.py IN.cu OUT.cu
The patched kernel records, for each CTA, its SM, when it started and when its
first consumer finished, and for each of its first kTraceUnits work units: when
the unit began, when its main loop ended, when its epilogue began (the CTA that
writes C only), its k-range, its stream-K peers, and the SM cycles its first
consumer spent waiting for TMA loads. tile_smoke reads the table back
(`tessera_trace`) when a module defines it; trace_report.py summarises it."""
import sys

HOOKS = r'''
// ---- per-CTA trace (tests/tile/tools/trace_patch.py) ----------------------
constexpr int kTraceRow = 64, kTraceCtas = 2048, kTraceUnits = 7;
extern "C" {
__device__ unsigned long long tessera_trace[kTraceCtas * kTraceRow];
}
__device__ __forceinline__ unsigned long long trace_ns() {
  unsigned long long v;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
  return v;
}
__device__ __forceinline__ unsigned long long* trace_row() {
  const unsigned cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  return cta < kTraceCtas ? tessera_trace + cta * kTraceRow : nullptr;
}
__device__ __forceinline__ unsigned long long* trace_unit(int unit) {
  unsigned long long* r = trace_row();
  return r && unit < kTraceUnits ? r + 8 + unit * 8 : nullptr;
}
'''

# A stream-K fix-up's phases, for its first two fix-ups: entered; a peer's
# partial stored (after the barrier) or the owner about to wait; the peer
# counted in or the owner done waiting; the owner's reads of the peers done.
FIXUP_HOOK = r'''__device__ __forceinline__ void trace_fixup(int phase) {
  if (threadIdx.x != (kInlineProducer ? 0 : 128)) return;  // the first consumer's thread 0
  unsigned long long* r = trace_row();
  if (!r) return;
  if (phase == 0) ++r[54];
  const unsigned long long n = r[54] - 1;
  if (n < 2) r[56 + 4 * n + phase] = trace_ns();
}
'''

EDITS = [
    ('#include "tessera_abi.cuh"\n', '#include "tessera_abi.cuh"\n' + HOOKS),
    ('    const Work u = s.u;\n',
     '    const Work u = s.u;\n'
     '    long long tr_wait = 0;\n'
     '    if (c == 0 && t == 0) if (auto* r = trace_unit(unit)) {\n'
     '      trace_row()[3] = unit + 1;\n'
     '      r[0] = trace_ns(), r[3] = u.kb_begin, r[4] = u.kb_end, r[5] = u.peers, r[7] = u.tile_id;\n'
     '    }\n'),
    ('      mbar_wait(&full[stage], phase);\n',
     '      { const long long tw0 = clock64(); mbar_wait(&full[stage], phase); tr_wait += clock64() - tw0; }\n'),
    ('    if (!tile_in_c(p, u)) continue;\n',
     '    if (c == 0 && t == 0) if (auto* r = trace_unit(unit)) r[1] = trace_ns(), r[6] = tr_wait;\n'
     '    if (!tile_in_c(p, u)) continue;\n'),
    ('    if constexpr (kHasBias) named_barrier(1 + c, 128);  // the bias copy is complete\n',
     '    if (c == 0 && t == 0) if (auto* r = trace_unit(unit)) r[2] = trace_ns();\n'
     '    if constexpr (kHasBias) named_barrier(1 + c, 128);  // the bias copy is complete\n'),
    ('  if constexpr (kTmaStore) {\n    if (kTmaStrips ? lane == 0 : t == 0) bulk_wait_all();',
     '  if (c == 0 && t == 0) if (auto* r = trace_row()) r[2] = trace_ns();\n'
     '  if constexpr (kTmaStore) {\n    if (kTmaStrips ? lane == 0 : t == 0) bulk_wait_all();'),
    ('__device__ __forceinline__ int load_acquire(const int* p) {\n',
     FIXUP_HOOK + '__device__ __forceinline__ int load_acquire(const int* p) {\n'),
    ('  const int first = streamk_first_peer(w);\n  if (w.cta != first) {\n',
     '  trace_fixup(0);\n  const int first = streamk_first_peer(w);\n  if (w.cta != first) {\n'),
    ('    bar();\n    if (t == 0) arrive_release(sem);\n    return false;\n',
     '    bar();\n    trace_fixup(1);\n    if (t == 0) arrive_release(sem);\n    trace_fixup(2);\n    return false;\n'),
    ('  if (t == 0) {\n    while (load_acquire(sem) != w.u.peers - 1) __nanosleep(32);\n  }\n  bar();',
     '  trace_fixup(1);\n  if (t == 0) {\n    while (load_acquire(sem) != w.u.peers - 1) __nanosleep(32);\n  }\n  bar();\n  trace_fixup(2);'),
    ('  if (t == 0) atomicExch(sem, 0);\n  return true;\n}\n\ntemplate <int kRegs, int kParticipants, typename Barrier, typename BarrierOr>\n__device__ __forceinline__ bool splitk_reduce(',
     '  trace_fixup(3);\n  if (t == 0) atomicExch(sem, 0);\n  return true;\n}\n\ntemplate <int kRegs, int kParticipants, typename Barrier, typename BarrierOr>\n__device__ __forceinline__ bool splitk_reduce('),
    ('  Producer prod;\n',
     '  Producer prod;\n'
     '  if (threadIdx.x == 0) if (auto* r = trace_row()) {\n'
     '    unsigned sm;\n'
     '    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));\n'
     '    r[0] = sm, r[1] = trace_ns();\n'
     '  }\n'),
]


def main():
    src = open(sys.argv[1]).read()
    for old, new in EDITS:
        n = src.count(old)
        if n != 1:
            sys.exit(f"trace_patch: expected one {old.strip()!r} in {sys.argv[1]}, found {n}")
        src = src.replace(old, new)
    open(sys.argv[2], "w").write(src)


if __name__ == "__main__":
    main()
