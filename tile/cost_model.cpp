// The cost model's prediction for one config (cost_model.hpp). Times in µs,
// bytes in bytes, rates per µs. Each figure below says where it comes from:
// measured on the H100/H200 (docs/tile.md), a Hopper datasheet figure, or
// assumed (a guess the tuner's measurements can refute; docs/tile.md lists
// them as unmeasured).
#include "tile/cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "tile/legality.hpp"

namespace tessera::tile {

namespace {

// The kernels' work schedule (compiled on the host, as the tile tests do), for
// stream-K's cut of the grid into lines.
namespace sched {
#define TESSERA_SCHED inline
constexpr int kRaster = 0;
constexpr bool kStreamK = true;
#include "tile/detail/schedule.inc"
#undef TESSERA_SCHED
}  // namespace sched

constexpr double kLaunchUs = 0.85;         // measured: an empty kernel's cold time, 0.83-0.86 µs (bench floor, H100)
constexpr double kFirstLoadUs = 0.35;      // measured: one DRAM line adds 0.35 µs to it (1.18 µs)
constexpr double kLoadedLatencyUs = 1.0;   // assumed: DRAM round trip under load (Little's law for bytes in flight)
constexpr double kSmIngestBytesPerClock = 64;   // assumed: L2 -> one SM
// assumed: one SM draws at most 1.5x its even share of DRAM bandwidth, so
// about two thirds of the SMs must stream to reach all of it (why a skinny
// GEMM on few CTAs stays below the bandwidth however deep its pipeline).
constexpr double kSmDramShare = 1.5;
// assumed: the consumer's fixed work per k-tile (barrier wait, fences, issue,
// commit, wait, release), in SM clocks. With a wgmma group kept in flight it
// overlaps the previous k-tile's math, so it only shows when that is shorter
// (small tiles); otherwise it adds to it. This is why a decode GEMM wants many
// weight bytes per k-tile (swap-AB's 64-128 N rows) rather than 8-32 N columns.
constexpr double kKTileOverheadClocks = 200;
// L2 bandwidth as a multiple of DRAM's (the model's 4300 GB/s): about 10.5
// TB/s. Measured on the H200 at 1024x2112x5120, where one wave's k-tiles all
// come from L2: 64x256 swap-AB pairs moved 389-432 MB in 41.6 us (10.4 TB/s,
// predicted 34 us with 3x), 128x136 tiles 346 MB in 32.8 us. A lower bound
// from the H100: 128x256 tiles at 4096^3 drew 8.6 TB/s.
constexpr double kL2OverDram = 2.45;
constexpr double kSmemBytesPerClock = 128; // datasheet: shared memory bandwidth per SM
constexpr double kTwoConsumerEff = 0.95;   // measured: 753 of 771.8 TFLOP/s at 4096^3 (128x256, two consumers)
constexpr double kOneConsumerEff = 0.80;   // assumed: one warpgroup also waits on its own barriers and stores
constexpr double kMmaSyncEff = 0.60;       // assumed: mma.sync on Hopper, as a share of wgmma's rate
// Fitted on the H200 (persistent, TMA stores, cold): per tile, 128x128
// (one m64n128 per k16 per consumer) ran at 0.975 of 128x256 (one m64n256),
// and 256x128 (two m64n128 on one B per consumer) at 0.92 of it, at
// 2048x8192x8192, 4096^3 and 1024x10240x8192 net of waves. The efficiencies
// above are for N = 256: a fixed cost per wgmma of 3.4 SM clocks on top of
// its math (an m64nNk16 is N/2 clocks of it; narrower N is extrapolated), and
// a consumer with two or more m64 rows of wgmmas at 0.945.
constexpr double kWgmmaIssueClocks = 3.4;
constexpr int kWgmmaWidestN = 256;
constexpr double kMultiRowConsumerEff = 0.945;
// Assumed: a cluster's CTAs wait for each other's loads (a stage is free only
// when every peer released it), costing this share of each k-tile; measured
// net of multicast's gain: -0.4% and -1% at 2048x8192x8192 and 4096^3
// (128x256, pairs along M), +20% at 1024x2112x5120 (256x64, one wave, tiled).
constexpr double kClusterLockstep = 0.02;
// Measured: stream-K runs behind what this model predicts for it, where its
// ranges cut tiles. History (docs/tile.md): session 11 found it 1.5-2x the
// same tile unsplit (factor 1.39, the smallest ratio); per-CTA timelines put
// the loss in CTAs that started at their own k and so stopped sharing
// k-slabs, and in the fix-ups. After the owner-waits fix-up, partials kept in
// L2, lines cut alike (schedule.inc) and the owner's batched reads, the same
// tile unsplit and stream-K measured, cold on the H200 in one process: 48.5
// against 62.6 us at 600x6144x4096 (128x256), 30.9 / 35.9 at 257x6144x4096,
// 65.7 / 80.3 at 257x3584x18944 (both 128x136 swap-AB), 44.1 / 47.7 at
// 128x4096x14336 (128x64, split-K 2) and 70.1 / 85.9 at 150x6144x16384
// (64x152 swap-AB; the 600 row with a TMA-store epilogue: 66.0). With the
// factor at 1.39 this model over-predicted stream-K against the unsplit tile
// of each pair by 1.01-1.29x, median 1.16: 1.39 / 1.16 = 1.20 now. Four
// compute-bound pairs (128x256, persistent against stream-K: 92.1 / 93.3 us
// at 1537x4096x4096, 134.1 / 125.9 at 2304x4096x4096, 47.1 / 58.7 at
// 1000x3584x4096, 92.4 / 107.1 at 2048x3584x4096) then fit it too: over the
// ten, stream-K's prediction over its measurement against the unsplit
// tile's is 0.87-1.11, median 1.01. Where every range is whole tiles the
// kernel is a persistent one in line order (45.0 against 44.4 us at
// 1000x5120x3072) and takes no factor.
constexpr double kStreamKSlowdown = 1.20;
// Measured: where swap-AB could put the weight on the MMA's rows but a plain
// tile leaves most of its 64-256 A rows empty (M under half the tile: the
// LLM set's M = 1-25, H200, two sweeps), the plain tiles the model ranked
// first ran 1.46-3.81x their prediction and the swap-AB winners of the same
// shapes 1.10-1.45x; all 46 winners at M <= 25 were swap-AB. Why is not
// established (the valid bytes are the same). Until it is, plain tiles there
// are scaled by the smallest excess seen, 1.17 (7x6144x4096: 1.63 against
// 1.39), so that swap-AB tiles predicted within 17% come first.
constexpr double kSparseRowsSlowdown = 1.17;
constexpr double kOverlapLoss = 0.1;       // assumed: the share of the shorter of compute and DRAM time not hidden
constexpr double kCpAsyncIngestEff = 0.8;  // assumed: cp.async (every thread issues 16 B) against TMA bulk copies
constexpr double kLanesPerSm = 128;        // datasheet: fp32 lanes per SM
// fp32-lane operations per output element of the epilogue: none, bias,
// bias+ReLU, bias+GELU. None is assumed. The rest were measured at 4096^3 on
// the H200 (128x256 cooperative, TMA store): with the tile's math before its
// stores, the bias costs no time over none (180.6-181.2 against 180.2-181.7
// us), and GELU, an ex2 and a reciprocal on the 16-lane MUFU pipe, added 17.3k
// cycles per SM (ncu) over its 3.9 tiles of 32k elements: 17 operations at 128
// lanes. ReLU's max is assumed one more.
constexpr double kEpilogueOps[] = {3, 3, 4, 20};
// Ping-pong hides a tile's stores under the other consumer's main loop but not
// most of a fused epilogue's math: at 4096^3 GELU added 13.9k cycles per SM to
// ping-pong (128x128) and 17.3k to the cooperative kernel (ncu, H200).
constexpr double kPingPongFusedExposed = 0.8;
constexpr double kDirectStoreEff = 0.5;    // assumed: 4-byte stores straight from fragments, vs coalesced 16-byte ones
constexpr double kScatterStoreEff = 0.25;  // assumed: swap-AB's 2-byte transposed stores
constexpr double kAtomicBytesPerClock = 1024;  // assumed: fp32 reductions the L2 absorbs, whole GPU
constexpr double kFixupUs = 1.0;           // assumed: fence, arrival counter and read-back round trips of a fix-up
constexpr double kSerialStepUs = 0.5;      // assumed: one link of serial split-K's chain
constexpr double kL2KeepShare = 0.5;       // assumed: an operand up to this share of L2 is read from DRAM once
constexpr int kRegisterFile = 65536;       // datasheet: 32-bit registers per SM
constexpr int kThreadsPerSm = 2048;
constexpr int kCtaSmemReserve = 1024;      // datasheet: shared memory the system keeps per CTA
constexpr int kWgmmaSmemA = 2048;          // bytes of A one m64 x k16 wgmma reads
constexpr int kHalf = 2, kFloat = 4;

double ceil_div(double a, double b) { return std::ceil(a / b); }

struct Shape {  // the MMA's problem and its tiling
  double rows, cols, k;
  int tiles_m, tiles_n, tiles, k_tiles;
  int walk_m, walk_n;  // the grid in whole clusters (tiles with a cluster of 1)
  int grid_tiles;      // tiles with the grid rounded up to whole clusters (the extra ones store nothing)
  double rows_per_tile, cols_per_tile;  // valid rows (of each operand) per tile, on average
};

Shape shape_of(const Config& c, const Task& t) {
  Shape s;
  s.rows = double(mma_rows(c, t)), s.cols = double(mma_cols(c, t)), s.k = double(t.k);
  s.tiles_m = std::max(1, tiles_m(c, t)), s.tiles_n = std::max(1, tiles_n(c, t));
  s.tiles = s.tiles_m * s.tiles_n;
  const int cm = std::max(1, c.cluster_m), cn = std::max(1, c.cluster_n);
  s.walk_m = (s.tiles_m + cm - 1) / cm, s.walk_n = (s.tiles_n + cn - 1) / cn;
  s.grid_tiles = s.walk_m * cm * s.walk_n * cn;
  s.k_tiles = std::max(1, k_tiles(c, t));
  s.rows_per_tile = s.rows / s.tiles_m, s.cols_per_tile = s.cols / s.tiles_n;
  return s;
}

int consumers(const Config& c) { return std::max(1, c.warps_m * c.warps_n); }

// CTAs one SM holds at once: shared memory, threads, registers.
int resident_ctas(const Config& c, const Task& t, const Limits& l) {
  const int by_smem = l.smem_per_sm_bytes / std::max(1, dynamic_smem_bytes(c, t) + kCtaSmemReserve);
  const int by_threads = kThreadsPerSm / std::max(1, c.threads());
  const int wm = consumer_rows(c), wn = consumer_cols(c);
  int regs;  // per thread, roughly: accumulators plus addressing
  if (c.backend == Backend::wgmma_tma) {
    // Two consumers take the register file by setmaxnreg; one asks for what it uses.
    regs = consumers(c) > 1 ? kRegisterFile / c.threads() : std::min(255, (wm / 64) * wn / 2 + 64);
  } else {
    regs = std::min(255, (wm / 16) * (wn / 8) * 4 + (wm / 16) * 4 + (wn / 8) * 2 + 40);
  }
  const int by_regs = kRegisterFile / std::max(1, c.threads() * regs);
  const int fit = std::max(1, std::min({by_smem, by_threads, by_regs}));
  return c.persistent ? std::min(fit, std::max(1, persistent_ctas_per_sm(c, t))) : fit;
}

// Time of one k-tile of one CTA on its SM, by each limit.
struct KTile {
  double tensor, smem, ingest, bytes;
};

KTile k_tile_cost(const Config& c, const Shape& s, const Limits& l) {
  const double clock = std::max(1, l.sm_clock_mhz);  // cycles per µs
  const double peak_sm = l.peak_tflops * 1e6 / std::max(1, l.sm_count);
  const int wm = consumer_rows(c), wn = consumer_cols(c);
  // Ping-pong: one consumer's wgmmas at a time, the other's epilogue or wait beside them.
  const int mma_consumers = c.pingpong ? 1 : consumers(c);
  KTile k;
  double eff, smem_bytes;
  if (c.backend == Backend::wgmma_tma) {
    const double n_clocks = wn / 2.0, widest = kWgmmaWidestN / 2.0;
    eff = (consumers(c) > 1 ? kTwoConsumerEff : kOneConsumerEff) *
          (n_clocks / (n_clocks + kWgmmaIssueClocks)) / (widest / (widest + kWgmmaIssueClocks)) *
          (wm > 64 ? kMultiRowConsumerEff : 1.0);
    // Each m64 x k16 wgmma reads its A slice and the whole B slice from shared memory.
    smem_bytes = double(mma_consumers) * (wm / 64) * (c.bk / 16) * (kWgmmaSmemA + 16.0 * wn * kHalf);
  } else {
    eff = kMmaSyncEff;
    smem_bytes = double(c.warps_m) * c.warps_n * (wm + wn) * c.bk * kHalf;  // ldmatrix
  }
  // Padding included: the tensor cores compute it. Then the fixed per-k-tile work.
  const double math = 2.0 * c.bm * c.bn * c.bk / (peak_sm * eff), fixed = kKTileOverheadClocks / clock;
  const bool in_flight = c.backend == Backend::wgmma_tma && c.reg_double_buffer;
  k.tensor = (in_flight ? std::max(math, fixed) : math + fixed) * (cluster_size(c) > 1 ? 1 + kClusterLockstep : 1);
  k.smem = smem_bytes / (kSmemBytesPerClock * clock);
  // What TMA / cp.async moves: the valid rows only (out-of-range rows are zero-filled, not read).
  k.bytes = (std::min<double>(c.bm, s.rows_per_tile) + std::min<double>(c.bn, s.cols_per_tile)) * c.bk * kHalf;
  k.ingest = k.bytes / (kSmIngestBytesPerClock * clock * (c.backend == Backend::mma_sync ? kCpAsyncIngestEff : 1.0));
  return k;
}

// The distribution of k-tiles over CTAs and SMs.
struct Spread {
  double ctas, per_cta_k, ctas_on_busiest_sm, busiest_k, mean_k, waves, finishing_tiles;
  double walking = 0;  // the CTAs that compute (schedule.inc: persistent_walkers)
  // The last round of CTAs (tiled) or tiles (persistent) when it fills only
  // part of the GPU: the share of the work in it and the SMs that run it.
  double tail_share = 0, tail_sms = 0;
};

Spread spread_of(const Config& c, const Shape& s, const Limits& l, int resident) {
  const double sms = std::max(1, l.sm_count), total = double(s.tiles) * s.k_tiles;
  Spread p;
  if (c.stream_k) {
    // With a cluster the walkers are whole clusters, each member with a tile
    // of every unit. schedule.inc cuts the walk's grid into lines, each with
    // its share of the walkers; with more lines than walkers they walk whole
    // tiles.
    const int cs = cluster_size(c);
    const double launched = std::min(double(s.grid_tiles) * s.k_tiles, std::floor(sms * resident / cs) * cs);
    const int walkers = std::max(1, int(std::min<double>(launched / cs, stream_k_walkers(c))));
    const sched::StreamKLines lines = sched::streamk_lines(s.walk_m, s.walk_n, s.k_tiles, walkers);
    if (lines.ctas_per_line > 0) {
      p.ctas = double(lines.count) * lines.ctas_per_line * cs;
      p.per_cta_k = lines.per;
    } else {
      p.ctas = double(walkers) * cs;
      p.per_cta_k = ceil_div(double(s.walk_m) * s.walk_n, walkers) * s.k_tiles;
    }
  } else if (c.persistent) {
    // With a cluster, whole clusters (a GPC with an odd SM count leaves one idle: not modelled).
    const double cs = cluster_size(c);
    p.ctas = std::min(double(s.grid_tiles), std::floor(sms * resident / cs) * cs);
    p.per_cta_k = ceil_div(s.grid_tiles, p.ctas) * s.k_tiles;
    // The same rounds on fewer walkers change neither term here: the busiest
    // walker's tiles are the same, and DRAM's time on 128 SMs matches 3 rounds
    // on 132 and one on 116 to 0.01%. What they gain is L2 reuse, not priced.
    p.walking = double(sched::persistent_walkers(s.walk_m * s.walk_n, int(p.ctas / cs))) * cs;
  } else {
    p.ctas = double(s.grid_tiles) * c.split_k;
    p.per_cta_k = ceil_div(s.k_tiles, c.split_k);
  }
  // Stream-K has no last round: every CTA ends with the others.
  if (!c.stream_k) {
    const double units = c.persistent ? double(s.grid_tiles) : p.ctas;      // what the rounds hand out
    const double per_round = c.persistent ? p.ctas : sms * resident;        // how many at once
    const double rounds = ceil_div(units, per_round), last = units - (rounds - 1) * per_round;
    if (rounds > 1 && last < per_round) p.tail_share = last / units, p.tail_sms = std::min(sms, last);
  }
  p.ctas_on_busiest_sm = ceil_div(p.ctas, sms);
  p.busiest_k = p.per_cta_k * p.ctas_on_busiest_sm;
  p.mean_k = total / sms;
  p.waves = c.persistent ? 1 : ceil_div(p.ctas, sms * resident);
  p.finishing_tiles = ceil_div(s.tiles, std::min(sms, p.ctas));  // tiles whose C one SM writes
  return p;
}

// Stream-K whose ranges cut tiles: the only case with a fix-up and with the
// measured slowdown (whole-tile ranges are a persistent kernel in line order).
bool streamk_cuts_tiles(const Config& c, const Shape& s, const Spread& p) {
  return c.stream_k && std::fmod(p.per_cta_k, s.k_tiles) != 0;
}

// The epilogue of one tile on its SM: its math, and its stores unless a TMA
// store overlaps them with the next tile. `fused` is the part of it that a
// fused bias or activation adds (the math beyond none's).
struct EpilogueCost {
  double us, fused;
};
EpilogueCost epilogue_us(const Config& c, const Task& t, const Shape& s, const Limits& l) {
  const double clock = std::max(1, l.sm_clock_mhz);
  const double elements = std::min<double>(c.bm, s.rows_per_tile) * std::min<double>(c.bn, s.cols_per_tile);
  const double per_op = elements / (kLanesPerSm * clock);
  const double math = per_op * kEpilogueOps[int(t.epilogue)];
  const double store_rate = kSmIngestBytesPerClock * clock;
  double store = elements * kHalf / store_rate;
  if (c.epilogue_store == EpilogueStore::direct) store /= c.swap_ab ? kScatterStoreEff : kDirectStoreEff;
  if (c.epilogue_store == EpilogueStore::tma && c.persistent) store = 0;
  return {math + store, math - per_op * kEpilogueOps[int(Epilogue::none)]};
}

// Split-K's or stream-K's fix-up: the partial-sum traffic through L2 (GPU-wide)
// and what the finishing SM reads back, plus the round trips of the protocol.
double fixup_us(const Config& c, const Shape& s, const Spread& p, const Limits& l) {
  const double clock = std::max(1, l.sm_clock_mhz);
  const double tile_bytes = double(c.bm) * c.bn * kFloat;
  const double l2_rate = kL2OverDram * l.dram_gbps * 1e3;
  const double sm_rate = kSmIngestBytesPerClock * clock;
  if (c.stream_k) {
    // schedule.inc: each line's CTAs cut its k-iterations evenly. Every cut
    // inside a tile leaves one partial, stored by the CTA after it and read
    // and zeroed by the tile's owner; the owner of a tile cut most often
    // reads one per other peer.
    if (!streamk_cuts_tiles(c, s, p)) return 0;  // every range is whole tiles: nothing to fix up
    const double per = p.per_cta_k, partials = p.ctas;  // about one per CTA (and cluster member)
    const double owner_reads = per < s.k_tiles ? std::ceil(s.k_tiles / per) : 1;
    return kFixupUs + 3 * partials * tile_bytes / l2_rate + 2 * owner_reads * tile_bytes / sm_rate;
  }
  if (c.split_k <= 1) return 0;
  const double partials = double(s.tiles) * c.split_k * tile_bytes;
  double t = kFixupUs + p.finishing_tiles * 2 * tile_bytes / sm_rate;
  if (c.split_k_mode == SplitKMode::parallel) return t + partials / (kAtomicBytesPerClock * clock);
  return t + (c.split_k - 1) * kSerialStepUs + 2 * partials / l2_rate;
}

// DRAM bytes: each operand once if it stays in L2 while it is reused, the
// wide one again per band of tile rows otherwise; C and the bias once.
double dram_bytes(const Config& c, const Task& t, const Shape& s, const Limits& l) {
  const double keep = kL2KeepShare * double(l.l2_bytes);
  const double rows_op = s.rows * s.k * kHalf, cols_op = s.cols * s.k * kHalf;
  const double out = double(t.m) * t.n * kHalf + (t.epilogue == Epilogue::none ? 0 : double(t.n) * kHalf);
  if (c.stream_k) {
    // Lines (schedule.inc): the longer side's operand is read once, by the
    // lines' CTAs together; the other, once where it fits in L2 (each line's
    // panel is read by its CTAs at their own times: 33.5 MB of B at
    // 2304x4096x4096 with 128x256 tiles drew 27% of DRAM's bandwidth, about
    // the operands once), else once per tile of a line.
    const bool along_m = s.tiles_m >= s.tiles_n;
    const double aligned = along_m ? rows_op : cols_op, other = along_m ? cols_op : rows_op;
    return aligned + other * (other <= double(l.l2_bytes) ? 1 : (along_m ? s.tiles_m : s.tiles_n)) + out;
  }
  const double bands = ceil_div(s.tiles_m, std::max(1, c.raster));
  const double cols_reads = cols_op <= keep ? 1 : bands;
  return rows_op + cols_op * cols_reads + out;
}

}  // namespace

Prediction predict(const Config& c, const Task& t, const Limits& l) {
  Prediction r;
  const Shape s = shape_of(c, t);
  const int resident = resident_ctas(c, t, l);
  const Spread p = spread_of(c, s, l, resident);
  const KTile k = k_tile_cost(c, s, l);

  // The busiest SM: its k-tiles at the slowest of its rates. Little's law caps
  // the rate at the k-tiles it keeps in flight per loaded round trip.
  const double in_flight = std::max(1.0, std::min<double>(c.backend == Backend::wgmma_tma ? c.stages : c.prefetch,
                                                          p.per_cta_k) *
                                             std::min<double>(resident, p.ctas_on_busiest_sm));
  const double per_k = std::max({k.tensor, k.smem, k.ingest, kLoadedLatencyUs / in_flight});
  r.compute_us = p.busiest_k * per_k;

  // The GPU: DRAM at the bandwidth the active SMs' bytes in flight can draw, and L2.
  // A last round on few SMs streams its share of the bytes at what those SMs
  // draw alone: measured on the H200 at 1x32768x4096 (swap-AB, tiled, one CTA
  // per SM), 128 tiles of 256 weight rows took 74.0 us and 171 tiles of 192
  // rows, 39 of them in a second round, 80.7 us.
  const double bandwidth = l.dram_gbps * 1e3;
  const auto dram_rate = [&](double active) {
    return std::min({bandwidth, active * in_flight * k.bytes / kLoadedLatencyUs,
                     active * kSmDramShare * bandwidth / std::max(1, l.sm_count)});
  };
  const double active = std::min<double>(l.sm_count, p.ctas);
  const double bytes = dram_bytes(c, t, s, l);
  const double dram_us = bytes * (1 - p.tail_share) / dram_rate(active) +
                         (p.tail_share > 0 ? bytes * p.tail_share / dram_rate(p.tail_sms) : 0.0);
  // Multicast: a cluster reads its shared operand's tile from L2 once (along
  // N the tile's bm rows are shared, along M its bn rows; with swap-AB the
  // bm rows are B's). The extra CTAs of a rounded-up grid read only their
  // slice of the shared operand (the rest is outside the tensor, zero-filled).
  const double rows_bytes = std::min<double>(c.bm, s.rows_per_tile) * c.bk * kHalf / std::max(1, c.cluster_n);
  const double cols_bytes = std::min<double>(c.bn, s.cols_per_tile) * c.bk * kHalf / std::max(1, c.cluster_m);
  const double l2_bytes_moved = double(s.tiles) * s.k_tiles * (rows_bytes + cols_bytes);
  r.memory_us = std::max(dram_us, l2_bytes_moved / (kL2OverDram * l.dram_gbps * 1e3));

  // Tiled CTAs of a later wave fill their pipelines again; with more than
  // one resident, another CTA's math hides part of that and of the epilogue.
  const double hidden = c.persistent ? 1.0 : 1.0 / std::max(1, std::min<int>(resident, int(p.ctas_on_busiest_sm)));
  // Ping-pong: a tile's epilogue runs under the other consumer's next main
  // loop, so only what outlasts that, and the last tile's, is exposed, and
  // most of a fused epilogue's math (kPingPongFusedExposed).
  const EpilogueCost epilogue = epilogue_us(c, t, s, l);
  const double tile_main = s.k_tiles * per_k;
  const double later_tiles = std::max(0.0, p.finishing_tiles - 1);
  const double exposed_epilogue =
      c.pingpong ? epilogue.us + later_tiles * std::max(kPingPongFusedExposed * epilogue.fused, epilogue.us - tile_main)
                 : p.finishing_tiles * epilogue.us * hidden;
  r.overhead_us = kLaunchUs + kFirstLoadUs + (p.waves - 1) * kFirstLoadUs * hidden + exposed_epilogue +
                  fixup_us(c, s, p, l);

  const double main = std::max(r.compute_us, r.memory_us) + kOverlapLoss * std::min(r.compute_us, dram_us);
  // The measured slowdowns the terms above do not explain yet: stream-K, and a
  // plain wgmma tile of a TN task whose A rows are mostly outside M.
  const bool sparse_rows = c.backend == Backend::wgmma_tma && !c.swap_ab && t.layout == Layout::TN &&
                           s.rows_per_tile < 0.5 * c.bm;
  double slowdown = streamk_cuts_tiles(c, s, p) ? kStreamKSlowdown : 1.0;
  if (sparse_rows) slowdown *= kSparseRowsSlowdown;
  r.time_us = (main + r.overhead_us) * slowdown;
  r.analytical_us = r.time_us;
  r.tiles = s.tiles;
  r.ctas = int(p.ctas);
  r.walking_ctas = p.walking > 0 ? int(p.walking) : r.ctas;
  r.ctas_per_sm = resident;
  r.waves = int(p.waves);
  r.tail_efficiency = p.busiest_k > 0 ? std::min(1.0, p.mean_k / p.busiest_k) : 0;
  r.pad_efficiency = (s.rows * s.cols) / (double(s.tiles_m) * c.bm * double(s.tiles_n) * c.bn);
  r.bytes_per_flop = bytes / std::max(1.0, t.flops());
  r.bound = r.overhead_us >= std::max(r.compute_us, r.memory_us) ? "latency"
            : r.memory_us >= r.compute_us                          ? "memory"
                                                                   : "compute";
  return r;
}

}  // namespace tessera::tile
