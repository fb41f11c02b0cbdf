#pragma once
// Legality: can a config run a task on a device? Decided before compiling,
// with a one-line reason, so the search never wastes a compile on it.
#include <cstdint>
#include <string>

#include "core/result.hpp"
#include "core/task.hpp"
#include "tile/config.hpp"

namespace tessera::tile {

inline constexpr int kH100SmemOptinBytes = 227 * 1024;  // opt-in dynamic smem per block on H100
inline constexpr int kMaxThreadsPerBlock = 1024;
inline constexpr int kH100SmCount = 132;
inline constexpr int kH100SmemPerSmBytes = 228 * 1024;  // shared memory per SM (all resident CTAs together)
inline constexpr int kMaxAccumulatorFloats = 128;  // fp32 accumulators per thread (beyond: spills)
// Two wgmma consumers take 232 registers each (setmaxnreg): ptxas fits 176
// accumulators with a plain epilogue without spilling (swap-AB or not, every
// store, tiled, persistent or ping-pong: ping-pong 128x176 is the tile of
// cuBLASLt's fastest kernel at 8192x12288x512; 184 spill); a fused epilogue
// spills past 128 on swap-AB's direct stores, and so does a serial split-K's
// fix-up.
inline constexpr int kMaxAccumulatorFloatsTwoConsumers = 176;
inline constexpr int kMaxMmaSyncRegisters = 192;   // accumulators + fragments per thread (mma_sync)
inline constexpr int kMaxSplitK = 64;             // enough to spread a 64x64 output over every SM when K is long
inline constexpr int kMaxRaster = 64;              // tile rows per rasterisation group
inline constexpr int kMinStages = 2;
// 16, not 8: a 64x32 CTA of 4096x64x1024 holds all 16 of its k-tiles in flight
// (192 KiB) and ran 6.75 us against 7.01 us with 8 stages (H100, scripts/tile_ab.sh).
inline constexpr int kMaxStages = 16;
// Stream-K works with at most this many CTAs (two per SM of a 132-SM Hopper);
// the CTAs of a larger grid beyond it exit at once. It bounds the workspace.
inline constexpr int kStreamKMaxCtas = 264;

// What the cost model assumes of a device that does not report it: the H200
// the project measures on (132 SMs as the H100; cuBLAS's best dense fp16
// rate and a device-to-device copy, both measured there).
inline constexpr double kH200PeakTflops = 770.0;        // dense fp16 x fp16 -> fp32 (TFLOP/s), cuBLAS at its best
inline constexpr double kH200DramGBps = 4300.0;         // copy bandwidth (GB/s)
inline constexpr long long kH200L2Bytes = 60LL << 20;   // L2 capacity (bytes)
// The SM clock the per-clock rates are taken at (MHz): what an H100 SXM and an
// H200 report (cudaDevAttrClockRate), so a ranking made without a GPU is the
// one with_device gives on them (at 1830 MHz, with the measured peak on the
// GPU, the two orders' first picks among the measured configs differed on 108
// of the 284 shapes with kept H200 rows).
inline constexpr int kHopperSmClockMhz = 1980;

struct Limits {
  std::string arch = "sm_90a";  // sm_80, sm_86, sm_89, sm_90, sm_90a ...
  int smem_optin_bytes = kH100SmemOptinBytes;
  int max_threads_per_block = kMaxThreadsPerBlock;
  // The rest only sizes seeds and feeds the cost model; never a legality rule.
  int sm_count = kH100SmCount;
  int smem_per_sm_bytes = kH100SmemPerSmBytes;
  double peak_tflops = kH200PeakTflops;
  double dram_gbps = kH200DramGBps;
  long long l2_bytes = kH200L2Bytes;
  int sm_clock_mhz = kHopperSmClockMhz;
};

struct Legality {
  bool ok = true;
  std::string reason;  // empty when ok
  explicit operator bool() const { return ok; }
};

Legality legality(const Config& c, const Task& task, const Limits& limits = {});

// `base` with what a device reports (an evaluator's DeviceSummary: arch, opt-in
// shared memory, SMs, L2, clock); what it leaves unknown (empty, 0:
// compile-only mode) keeps base's value. Bandwidth is not reported: it stays
// base's. The peak: a Hopper's is its kind's (kH200PeakTflops at 132 SMs and
// kHopperSmClockMhz, scaled by its SMs and clock), not this process's measured
// ceiling, which moved from 665 to 806 TFLOP/s between processes on one H200
// kind and with it the model's first pick on 27 of 67 held-out shapes, at the
// same accuracy (docs/tile.md); other architectures take the measured peak
// (no constant of theirs is known here).
Limits with_device(Limits base, const DeviceSummary& dev);
// `l` with a Hopper's peak set to its kind's (scaled by its SMs and clock), as
// with_device sets it; other architectures keep theirs. Rows recorded before
// the kind's peak (tessera tile model rows) hold the process's measured one.
Limits at_kind_peak(Limits l);

// Derived sizes, shared by legality and the emitter.
int dynamic_smem_bytes(const Config& c, const Task& task);
// CTAs per SM a persistent launch asks for (the contract's
// persistent_ctas_per_sm): 0 when tiled, 1 for wgmma_tma, what fits by shared
// memory and threads (at most 2) for mma_sync.
int persistent_ctas_per_sm(const Config& c, const Task& task);
unsigned long long workspace_bytes(const Config& c, const Task& task);
// What one consumer (wgmma: warpgroup; mma_sync: warp) computes of a tile:
// bm / warps_m x bn / warps_n, or the whole tile with ping-pong (each
// consumer takes whole tiles in turn).
int consumer_rows(const Config& c);
int consumer_cols(const Config& c);
// wgmma_tma, tiled (not persistent), where the stage ring and the epilogue's
// staging do not fit side by side in H100/H200's 227 KB: the staging lies
// over the start of the ring, since a CTA's one unit has consumed every stage
// before its epilogue (and no load follows), so the ring can take a stage
// more. Elsewhere the layout is as it was (the two side by side). Persistent
// kernels load the next tile's stages while the epilogue runs.
bool staging_in_ring(const Config& c);
// wgmma TMA store in strips: each consumer warp stores its own 16 rows of each
// m64 tile, bk columns at a time, through a small ring of its own
// (wgmma_epilogue.cuh), instead of the consumer's whole tile at once. Ping-pong
// only, whose epilogue must hide behind the other consumer's main loop and
// whose stages want the shared memory: there it measured 5-9% faster. The
// kernel stores any width of whole 16 columns so; cooperative 128x176 in
// strips measured slower than 128x256 with its tile store on the two shapes
// tried, and was never measured against 176-wide direct or staged stores.
bool tma_strips(const Config& c);
inline constexpr int kTmaStripRows = 16;  // a warp's rows of an m64 wgmma tile
inline constexpr int kTmaStripSlots = 2;  // strips in flight per warp
// wgmma_tma, persistent, swap-AB, staged store, where the whole transposed
// tile and the ring do not fit side by side in 227 KB: the tile goes to C
// kStagingChunkRows rows at a time (two n8 column groups of the MMA, one
// barrier each) through kStagingChunkSlots small slots per consumer. The
// whole tile cannot lie over the ring there (the producer fills the next
// tile's stages under the epilogue). 256x136 fits four stages so, cuBLAS's
// tile and depth at 257x32768x4096 (7% faster than three with the whole tile,
// H200). Where the whole tile fits, it stays: chunks of 64-column consumers
// measured 0.6-0.8% slower at the same depth (128x136, 128x200). Each
// consumer has its own slots, ping-pong too; only where the slots are smaller
// than the tile (more than 32 rows of C).
bool chunked_staging(const Config& c);
inline constexpr int kStagingChunkRows = 16;  // two n8 groups of the MMA's columns
inline constexpr int kStagingChunkSlots = 2;
// The MMA's problem: rows x cols = M x N, or N x M with swap_ab (C^T).
std::int64_t mma_rows(const Config& c, const Task& task);
std::int64_t mma_cols(const Config& c, const Task& task);
// Tiles along the MMA's rows (bm) and cols (bn): with swap_ab, tiles_m walks N.
int tiles_m(const Config& c, const Task& task);
int tiles_n(const Config& c, const Task& task);
// CTAs in a thread-block cluster (1 without one).
int cluster_size(const Config& c);
// Stream-K's walkers share out the k-iterations: CTAs, or with a cluster
// whole clusters (at most kStreamKMaxCtas CTAs in all).
int stream_k_walkers(const Config& c);
// Stream-K workspace: partial-sum slots (one per walker that can have work,
// times the cluster's members) and semaphores (one per tile of the walk's grid,
// times the members); 0 when not stream-K.
int stream_k_partial_slots(const Config& c, const Task& task);
int stream_k_semaphores(const Config& c, const Task& task);
int k_tiles(const Config& c, const Task& task);
// sm_80 -> 80, sm_90a -> 90; 0 when malformed.
int arch_number(const std::string& arch);

}  // namespace tessera::tile
