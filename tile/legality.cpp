#include "tile/legality.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace tessera::tile {

namespace {

constexpr int kHalfBytes = 2;
constexpr int kFloatBytes = 4;
constexpr int kChunkHalves = 8;        // one 16-byte vector of fp16
constexpr int kPadHalves = 8;          // padding per smem row (mma_sync, pad layout)
constexpr int kSmemAlignSlack = 1024;  // wgmma: the stage buffers are aligned to 1024 B by hand
constexpr int kBarrierBytes = 8;
constexpr int kWarpgroupRows = 64;     // wgmma m64
constexpr int kWarpgroupWarps = 4;
constexpr int kMaxWgmmaN = 256;
constexpr int kMaxTmaBox = 256;
constexpr int kMaxWgmmaCluster = 4;
constexpr int kThreadsPerSm = 2048;
constexpr int kMaxPersistentMmaSyncCtas = 2;

bool pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

Legality no(std::string reason) { return {false, std::move(reason)}; }

// XOR swizzle of 16-byte chunks needs a power-of-two chunk count below 8, or a
// multiple of 8 (the low 3 bits are permuted within each group of 8).
bool swizzle_ok(int cols) {
  const int chunks = cols / kChunkHalves;
  return chunks >= 8 ? chunks % 8 == 0 : pow2(chunks) && chunks >= 2;
}

int consumers(const Config& c) { return c.warps_m * c.warps_n; }

Legality check_common(const Config& c, const Task& t) {
  if (c.epilogue != t.epilogue)
    return no(fmt::format("config epilogue {} does not match the task's {}", to_string(c.epilogue), to_string(t.epilogue)));
  // bn may be a multiple of 8 (wgmma has n = 8, 16, 24, ...); mma_sync asks for 16 below.
  if (c.bm <= 0 || c.bn <= 0 || c.bk <= 0 || c.bm % 16 || c.bn % 8 || c.bk % 16)
    return no(fmt::format("block tile {}x{}x{}: bm and bk must be positive multiples of 16, bn of 8", c.bm, c.bn, c.bk));
  if (c.warps_m < 1 || c.warps_n < 1) return no("warps_m and warps_n must be >= 1");
  if (c.stages < kMinStages || c.stages > kMaxStages)
    return no(fmt::format("stages {} out of range [{}, {}]", c.stages, kMinStages, kMaxStages));
  if (c.split_k < 1 || c.split_k > kMaxSplitK) return no(fmt::format("split_k {} out of range [1, {}]", c.split_k, kMaxSplitK));
  if (c.split_k > k_tiles(c, t))
    return no(fmt::format("split_k {} exceeds the {} k-tiles of K={}", c.split_k, k_tiles(c, t), t.k));
  if (c.split_k == 1 && c.split_k_mode != SplitKMode::serial)
    return no("split_k_mode parallel needs split_k > 1");
  if (c.split_k > 1 && c.persistent)
    return no("split_k > 1 and persistent are exclusive (serial split-K waits on other CTAs' tiles)");
  if (c.stream_k && !c.persistent) return no("stream_k needs persistent (stream-K is a persistent schedule)");
  if (c.raster < 0 || c.raster > kMaxRaster) return no(fmt::format("raster {} out of range [0, {}]", c.raster, kMaxRaster));
  return {};
}

Legality check_mma_sync(const Config& c, const Task& t, const Limits& lim) {
  if (arch_number(lim.arch) < 80) return no(fmt::format("mma_sync needs sm_80 or later, target is {}", lim.arch));
  if (c.cluster_m != 1 || c.cluster_n != 1) return no("clusters are a wgmma_tma feature (mma_sync needs cluster 1x1)");
  if (c.inline_producer) return no("inline_producer is a wgmma_tma feature (mma_sync has no producer warps)");
  if (c.swap_ab) return no("swap_ab is a wgmma_tma feature");
  if (c.pingpong) return no("pingpong is a wgmma_tma feature");
  if (c.bk != 16 && c.bk != 32 && c.bk != 64) return no(fmt::format("mma_sync bk {} not in {{16, 32, 64}}", c.bk));
  if (c.epilogue_store == EpilogueStore::tma) return no("the TMA store epilogue is a wgmma_tma feature");
  if (c.bn % 16) return no(fmt::format("mma_sync bn {} must be a multiple of 16", c.bn));
  if (c.bm % c.warps_m || c.bn % c.warps_n) return no("block tile not divisible by the warp layout");
  const int wm = c.bm / c.warps_m, wn = c.bn / c.warps_n;
  if (wm % 16 || wn % 16) return no(fmt::format("warp tile {}x{} must be multiples of 16x16", wm, wn));
  if (c.threads() > lim.max_threads_per_block || c.threads() > 512)
    return no(fmt::format("{} threads per block (max 512 for mma_sync)", c.threads()));
  const int acc = (wm / 16) * (wn / 8) * 4;
  if (acc > kMaxAccumulatorFloats)
    return no(fmt::format("warp tile {}x{} needs {} accumulators per thread (max {})", wm, wn, acc, kMaxAccumulatorFloats));
  // Accumulators plus the ldmatrix fragments (twice with the register double
  // buffer); past kMaxMmaSyncRegisters ptxas spills (seen in NVRTC sweeps).
  const int fragments = (wm / 16) * 4 + (wn / 8) * 2;
  const int regs = acc + (c.reg_double_buffer ? 2 : 1) * fragments;
  if (regs > kMaxMmaSyncRegisters)
    return no(fmt::format("warp tile {}x{} needs ~{} registers per thread for accumulators and fragments (max {})", wm,
                          wn, regs, kMaxMmaSyncRegisters));
  if (c.prefetch < 1 || c.prefetch > c.stages - 1)
    return no(fmt::format("prefetch {} must be in [1, stages-1={}]", c.prefetch, c.stages - 1));
  if (c.smem_layout == SmemLayout::swizzle) {
    if (!swizzle_ok(c.bk)) return no(fmt::format("XOR swizzle needs bk/8 a power of two or a multiple of 8 (bk={})", c.bk));
    if (t.layout == Layout::NN && !swizzle_ok(c.bn))
      return no(fmt::format("XOR swizzle of the NN B tile needs bn/8 a power of two or a multiple of 8 (bn={})", c.bn));
  }
  return {};
}

Legality check_wgmma(const Config& c, const Task& t, const Limits& lim) {
  if (lim.arch != "sm_90a") return no(fmt::format("wgmma_tma needs sm_90a, target is {}", lim.arch));
  if (c.bk != 32 && c.bk != 64) return no(fmt::format("wgmma_tma bk {} not in {{32, 64}} (one 64B/128B swizzle row)", c.bk));
  if (c.smem_layout != SmemLayout::swizzle) return no("wgmma_tma uses the TMA swizzle (smem_layout must be swizzle)");
  if (c.load_order != LoadOrder::paired) return no("wgmma_tma loads A and B on one barrier (load_order must be paired)");
  if (c.prefetch != c.stages) return no("wgmma_tma: the producer runs `stages` ahead (prefetch must equal stages)");
  if (consumers(c) > 2) return no(fmt::format("{} consumer warpgroups (max 2)", consumers(c)));
  if (c.bm > kMaxTmaBox || c.bn > kMaxTmaBox) return no("wgmma_tma tile dims must be <= 256 (TMA box limit)");
  if (c.bm % c.warps_m || c.bn % c.warps_n) return no("block tile not divisible by the warpgroup layout");
  const int wm = consumer_rows(c), wn = consumer_cols(c);
  // A warpgroup runs wm / 64 m64 wgmmas per k16 step (192 and 256 rows within
  // the accumulator budget below, e.g. 192 x 64 or 256 x 32).
  if (wm % kWarpgroupRows) return no(fmt::format("warpgroup tile rows {} must be a multiple of 64", wm));
  if (wn % 8 || wn > kMaxWgmmaN) return no(fmt::format("warpgroup tile cols {} must be a multiple of 8 and <= 256", wn));
  // Every stage's B tile starts where the previous one ends: it must keep the
  // 1024-byte alignment of the swizzled TMA destinations and wgmma descriptors.
  if ((c.bn * c.bk * 2) % kSmemAlignSlack)
    return no(fmt::format("B tile {}x{} is {} bytes, not a multiple of 1024 (swizzle alignment)", c.bn, c.bk, c.bn * c.bk * 2));
  const int chunk_cols = c.bk;  // NN: B is loaded in column chunks of one swizzle row (bk*2 bytes = bk halves)
  if (t.layout == Layout::NN && (wn % chunk_cols || c.bn % chunk_cols))
    return no(fmt::format("NN wgmma: warpgroup cols {} must be a multiple of the {}-column swizzle chunk", wn, chunk_cols));
  const int acc = (wm / kWarpgroupRows) * wn / 2;
  const bool plain = c.epilogue == Epilogue::none && c.split_k == 1 && !c.stream_k;
  const int max_acc = consumers(c) > 1 && plain ? kMaxAccumulatorFloatsTwoConsumers : kMaxAccumulatorFloats;
  if (acc > max_acc)
    return no(fmt::format("warpgroup tile {}x{} needs {} accumulators per thread (max {})", wm, wn, acc, max_acc));
  // One-dimensional clusters only: every CTA of the cluster receives every
  // multicast slice, which is right when they all share that one operand.
  const int cluster = c.cluster_m * c.cluster_n;
  if (c.cluster_m < 1 || c.cluster_n < 1 || (c.cluster_m > 1 && c.cluster_n > 1) || cluster > kMaxWgmmaCluster ||
      !pow2(cluster))
    return no(fmt::format("cluster {}x{} not supported (1x1, or 2 or 4 CTAs along one dimension)", c.cluster_m, c.cluster_n));
  if (cluster > 1) {
    // Persistent clusters walk whole cluster tiles in lockstep. With stream-K
    // the cluster is one walker: its members take the same k-range of their
    // own tiles, so the operand they share is still loaded once, by multicast.
    // Along N the tile's bm rows are shared (A, or B with swap-AB), along M its bn rows.
    if ((c.bm / c.cluster_n) % 8)
      return no(fmt::format("the multicast slice of the tile's {} rows ({} per CTA) must be a multiple of 8 rows", c.bm,
                            c.bm / c.cluster_n));
    if (t.layout == Layout::TN && (c.bn / c.cluster_m) % 8)
      return no(fmt::format("the multicast slice of the tile's {} columns ({} per CTA) must be a multiple of 8 rows",
                            c.bn, c.bn / c.cluster_m));
    if (t.layout == Layout::NN && (c.bn / c.bk) % c.cluster_m)
      return no("NN: the B column chunks must split evenly across the cluster");
    // A grid that does not divide into clusters is rounded up (the launch rule,
    // docs/abi.md): the extra CTAs load their share of the shared operand and
    // store nothing. One that is narrower than a cluster would be mostly those.
    if (tiles_m(c, t) < c.cluster_m || tiles_n(c, t) < c.cluster_n)
      return no(fmt::format("grid {}x{} tiles is smaller than cluster {}x{}", tiles_n(c, t), tiles_m(c, t),
                            c.cluster_n, c.cluster_m));
  }
  if (c.swap_ab) {
    // C^T = B A^T needs both operands K-major (TN), and the transposed
    // epilogue goes through registers or a staging tile, not the TMA store.
    if (t.layout != Layout::TN) return no("swap_ab needs layout TN (both operands K-major)");
    if (c.epilogue_store == EpilogueStore::tma) return no("swap_ab stores C^T tiles directly or staged, not by TMA");
  }
  if (c.pingpong) {
    // Two consumers that take whole tiles in turn, on the persistent walk.
    if (!c.persistent || c.stream_k) return no("pingpong needs persistent and not stream_k");
    if (c.warps_m != 2 || c.warps_n != 1) return no("pingpong needs two consumer warpgroups (warps 2x1)");
  }
  if (c.inline_producer) {
    // Thread 0 refills a stage once all four warps of the one consumer released it.
    if (consumers(c) != 1) return no("inline_producer needs one consumer warpgroup (warps 1x1)");
    if (c.persistent) return no("inline_producer and persistent are exclusive");
    if (cluster > 1) return no("inline_producer needs cluster 1x1");
  }
  if (c.epilogue_store == EpilogueStore::tma) {
    if (t.n % 8) return no(fmt::format("TMA store needs N % 8 == 0 (16-byte row stride of C), N={}", t.n));
    // Strips: a last box that would pass the tile starts bk columns before its
    // edge, on a 16-column boundary (stmatrix writes 16 columns at a time).
    if (tma_strips(c) && (wn % 16 || wn < c.bk))
      return no(fmt::format("TMA store in strips: warpgroup cols {} must be a multiple of 16 and at least {}", wn, c.bk));
    if (!tma_strips(c) && wn % c.bk)
      return no(fmt::format("TMA store: warpgroup cols {} must be a multiple of the {}-column box", wn, c.bk));
  }
  // TMA: global row strides must be multiples of 16 bytes.
  if (t.k % 8) return no(fmt::format("TMA needs K % 8 == 0 (16-byte row stride of A), K={}: use mma_sync", t.k));
  if (t.layout == Layout::NN && t.n % 8)
    return no(fmt::format("TMA needs N % 8 == 0 for NN B (16-byte row stride), N={}: use mma_sync", t.n));
  return {};
}

}  // namespace

int arch_number(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0 || arch.size() < 5) return 0;
  int v = 0;
  for (std::size_t i = 3; i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i])); ++i) v = v * 10 + (arch[i] - '0');
  return v;
}

std::int64_t mma_rows(const Config& c, const Task& t) { return c.swap_ab ? t.n : t.m; }
std::int64_t mma_cols(const Config& c, const Task& t) { return c.swap_ab ? t.m : t.n; }
int consumer_rows(const Config& c) { return c.pingpong ? c.bm : c.bm / std::max(1, c.warps_m); }
int consumer_cols(const Config& c) { return c.pingpong ? c.bn : c.bn / std::max(1, c.warps_n); }
bool tma_strips(const Config& c) {
  return c.backend == Backend::wgmma_tma && c.epilogue_store == EpilogueStore::tma && c.pingpong;
}
int tiles_m(const Config& c, const Task& t) { return c.bm > 0 ? int((mma_rows(c, t) + c.bm - 1) / c.bm) : 0; }
int tiles_n(const Config& c, const Task& t) { return c.bn > 0 ? int((mma_cols(c, t) + c.bn - 1) / c.bn) : 0; }

namespace {
// What the stream-K walk shares out: tiles, or with a cluster cluster tiles
// (the grid rounded up to whole clusters), each a tile per member.
int walk_tiles(const Config& c, const Task& t) {
  const int cm = std::max(1, c.cluster_m), cn = std::max(1, c.cluster_n);
  return ((tiles_m(c, t) + cm - 1) / cm) * ((tiles_n(c, t) + cn - 1) / cn);
}
}  // namespace

int cluster_size(const Config& c) { return std::max(1, c.cluster_m) * std::max(1, c.cluster_n); }
int stream_k_walkers(const Config& c) { return kStreamKMaxCtas / cluster_size(c); }

int stream_k_partial_slots(const Config& c, const Task& t) {
  if (!c.stream_k) return 0;
  // One per walker that can have work (schedule.inc: streamk_partial_slot),
  // for each member of a cluster walker.
  const long long iterations = 1LL * walk_tiles(c, t) * k_tiles(c, t);
  return static_cast<int>(std::min<long long>(stream_k_walkers(c), iterations)) * cluster_size(c);
}
int stream_k_semaphores(const Config& c, const Task& t) {
  if (!c.stream_k) return 0;
  // One per tile of the walk's grid (schedule.inc: a shared unit's sk_tile),
  // for each member of a cluster walker.
  return walk_tiles(c, t) * cluster_size(c);
}
int k_tiles(const Config& c, const Task& t) { return c.bk > 0 ? int((t.k + c.bk - 1) / c.bk) : 0; }

namespace {
// wgmma_tma shared memory, in parts (bytes).
struct WgmmaSmem {
  int ring, staging, barriers, bias;
};
// The parts laid side by side would pass H100/H200's 227 KB.
bool over_limit(const WgmmaSmem& m) {
  return kSmemAlignSlack + m.ring + m.staging + m.barriers + m.bias > kH100SmemOptinBytes;
}
// The parts with a staged epilogue's whole tile.
WgmmaSmem whole_tile_smem(const Config& c) {
  const int stage = (c.bm + c.bn) * c.bk * kHalfBytes;
  const int wm = consumer_rows(c), wn = consumer_cols(c);
  // Staged: per consumer (ping-pong: one), its tile with padded rows (swap-AB: transposed, wn rows of wm + pad).
  const int staged_tile = c.swap_ab ? wn * (wm + kPadHalves) : wm * (wn + kPadHalves);
  // Ping-pong's consumers take one staging tile in turn (wgmma_consumer.cuh, StagingTurn).
  const int tiles = c.pingpong ? 1 : consumers(c);
  // TMA store in strips: a ring of strips per consumer warp, and no sharing.
  const int strip_rings = consumers(c) * kWarpgroupWarps * kTmaStripSlots * kTmaStripRows * c.bk * kHalfBytes;
  const int staging = c.epilogue_store == EpilogueStore::staged ? tiles * staged_tile * kHalfBytes
                      : tma_strips(c)                           ? strip_rings
                      : c.epilogue_store == EpilogueStore::tma ? tiles * wm * wn * kHalfBytes
                                                               : 0;
  // Bias epilogues: each consumer's copy of its tile's bias (C's columns).
  const int bias = c.epilogue == Epilogue::none ? 0 : consumers(c) * (c.swap_ab ? wm : wn) * kHalfBytes;
  return {c.stages * stage, staging, 2 * c.stages * kBarrierBytes, bias};
}
// chunked_staging for a config whose whole-tile parts are `whole`.
bool chunked(const Config& c, const WgmmaSmem& whole) {
  return c.backend == Backend::wgmma_tma && c.swap_ab && c.persistent && c.epilogue_store == EpilogueStore::staged &&
         consumer_cols(c) > kStagingChunkSlots * kStagingChunkRows && over_limit(whole);
}

WgmmaSmem wgmma_smem(const Config& c) {
  WgmmaSmem m = whole_tile_smem(c);
  // Chunked: each consumer's slots of padded rows of C (kWM columns + pad).
  if (chunked(c, m))
    m.staging = consumers(c) * kStagingChunkSlots * kStagingChunkRows * (consumer_rows(c) + kPadHalves) * kHalfBytes;
  return m;
}

// staging_in_ring for a wgmma_tma config of these parts.
bool in_ring(const Config& c, const WgmmaSmem& m) { return !c.persistent && m.staging > 0 && over_limit(m); }
}  // namespace

bool chunked_staging(const Config& c) { return chunked(c, whole_tile_smem(c)); }

bool staging_in_ring(const Config& c) { return c.backend == Backend::wgmma_tma && in_ring(c, wgmma_smem(c)); }

int dynamic_smem_bytes(const Config& c, const Task& t) {
  if (c.backend == Backend::wgmma_tma) {
    const WgmmaSmem m = wgmma_smem(c);
    const int ring_and_staging = in_ring(c, m) ? std::max(m.ring, m.staging) : m.ring + m.staging;
    return kSmemAlignSlack + ring_and_staging + m.barriers + m.bias;
  }
  const int pad = c.smem_layout == SmemLayout::pad ? kPadHalves : 0;
  const int a_tile = c.bm * (c.bk + pad);
  const int b_tile = t.layout == Layout::TN ? c.bn * (c.bk + pad) : c.bk * (c.bn + pad);
  const int pipeline = c.stages * (a_tile + b_tile) * kHalfBytes;
  const int staging = c.epilogue_store == EpilogueStore::staged ? c.bm * (c.bn + kPadHalves) * kHalfBytes : 0;
  return std::max(pipeline, staging);
}

unsigned long long workspace_bytes(const Config& c, const Task& t) {
  if (c.split_k <= 1 && !c.stream_k) return 0;
  // Split-K: one fp32 partial tile plus one semaphore per tile. Stream-K: the
  // partial slots, then a semaphore per tile. Semaphores are per consumer
  // warpgroup for wgmma.
  const unsigned long long tiles = (unsigned long long)tiles_m(c, t) * tiles_n(c, t);
  const unsigned long long slots = c.stream_k ? stream_k_partial_slots(c, t) : tiles;
  const unsigned long long shared = c.stream_k ? stream_k_semaphores(c, t) : tiles;
  const unsigned long long sems = c.backend == Backend::wgmma_tma ? shared * consumers(c) : shared;
  return slots * c.bm * c.bn * kFloatBytes + sems * kFloatBytes;
}

Legality legality(const Config& c, const Task& t, const Limits& lim) {
  if (auto r = check_common(c, t); !r) return r;
  auto r = c.backend == Backend::mma_sync ? check_mma_sync(c, t, lim) : check_wgmma(c, t, lim);
  if (!r) return r;
  const int smem = dynamic_smem_bytes(c, t);
  if (smem > lim.smem_optin_bytes)
    return no(fmt::format("needs {} B of shared memory, device limit is {} B per block", smem, lim.smem_optin_bytes));
  if (c.threads() > lim.max_threads_per_block)
    return no(fmt::format("{} threads per block over the limit {}", c.threads(), lim.max_threads_per_block));
  return {};
}

Limits with_device(Limits base, const DeviceSummary& dev) {
  if (!dev.arch.empty()) base.arch = dev.arch;
  if (dev.smem_per_block_optin > 0) base.smem_optin_bytes = dev.smem_per_block_optin;
  if (dev.sm_count > 0) base.sm_count = dev.sm_count;
  if (dev.l2_bytes > 0) base.l2_bytes = dev.l2_bytes;
  if (dev.sm_clock_mhz > 0) base.sm_clock_mhz = dev.sm_clock_mhz;
  if (dev.peak_tflops > 0) base.peak_tflops = dev.peak_tflops;
  return at_kind_peak(base);
}

Limits at_kind_peak(Limits l) {
  if (l.arch.rfind("sm_90", 0) == 0)
    l.peak_tflops = kH200PeakTflops * (double(l.sm_count) / kH100SmCount) * (double(l.sm_clock_mhz) / kHopperSmClockMhz);
  return l;
}

int persistent_ctas_per_sm(const Config& c, const Task& t) {
  if (!c.persistent) return 0;
  if (c.backend == Backend::wgmma_tma) return 1;
  // An estimate is enough: what fits by shared memory and threads. A
  // stream-K tile's owner waits for its peers, but each of them counts in
  // before it waits on anything (reduce.cuh), so CTAs that do not fit at
  // first run once others leave.
  const int by_smem = kH100SmemPerSmBytes / std::max(1, dynamic_smem_bytes(c, t) + kSmemAlignSlack);
  const int by_threads = kThreadsPerSm / std::max(1, c.threads());
  return std::clamp(std::min(by_smem, by_threads), 1, kMaxPersistentMmaSyncCtas);
}

}  // namespace tessera::tile
