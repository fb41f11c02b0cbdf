// The cost model's shortlist and ranking (cost_model.hpp): structured
// candidates for a task, the seeds, predicted and ordered.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <cmath>

#include "tile/cost_model.hpp"
#include "tile/features.hpp"
#include "tile/space.hpp"

namespace tessera::tile {

namespace {

constexpr int kFitPieces = 4;             // M fits into the fewest 8-wide tiles and up to 3 more
constexpr int kMinKTilesPerSplit = 4;     // a split shorter than this is all prologue and fix-up
constexpr int kSplitWaveTargets = 3;      // split-K that fills 1, 2 or 3 waves of SMs
constexpr int kWaveFits = 3;              // tile columns that fill 1, 2 or 3 waves of SMs
// Wave fits only from this M up. Below it the grid is one wave of memory- or
// latency-bound tiles and the M fits already serve swap-AB; measured on the
// H200, wave-fitted tiles on M = 2-128 pushed swap-AB's decode tiles out of the
// first eight and lost 2-14% (2x5120x1536: 64 x 40, 9.7 us against 7.8).
constexpr int kWaveFitMinRows = 256;
// Tile rows per raster group. A group wider than the grid groups all of its
// rows (schedule.inc), which still reads each column tile once; only a single
// tile row has nothing to group.
constexpr int kRasterGroup = 8;
constexpr int kPerFamilyFirst = 1;        // configs per structural family before any family's second
// The model is least sure about the schedules' relative costs (waves against
// split-K's atomics against a persistent grid), so the best of each schedule
// comes first when it is predicted within this factor of the best of all.
// Not stream-K: it measured slower than predicted on every shape tried
// (cost_model.cpp, kStreamKSlowdown), so it competes on its prediction alone;
// nor ping-pong, which beat the cooperative 128 x 256 only on large shapes of
// small K (2-4% at K = 512-1024) and lost 4% at 4096^3 (docs/tile.md).
// Over the H200's kept measurements (7,815 rows), each family's fold
// predicted by a model trained on the other folds, the hedges predicted
// 1.15-1.5x the best were the shape's fastest config 1 time in 185 and more
// than 10% slower 98 times; those within 1.15x were fastest 28 times in 198.
// At 1.5 they took a tune's third place at 100x5120x32768 (0.47x cuBLAS) and
// 256x4096x12288 (0.59x).
constexpr double kScheduleHedge = 1.15;

// The raster of a shortlisted config: grouped as soon as there are two tile rows.
int raster_group(const Config& c, const Task& t) { return tiles_m(c, t) >= 2 ? kRasterGroup : 0; }

// A tiled grid that the SMs hold at once (one CTA an SM) with three tile rows
// or more runs row-major: its CTAs all start together, so grouping their order
// buys no L2 reuse. Over the H200's kept sweeps, the r8/r0 pairs such grids
// measured in one process (474, on 132 shapes) ran 1.1% faster ungrouped in
// geometric mean, 145 faster by more than 1% and 6 slower (at worst 4.7%), in
// the training sweeps and the held-out ones alike; at 256x2048x2048 the tune's
// winner was the ungrouped variant of the model's pick, which the search's
// model-ranked moves never timed. Only where the columns' operand stays in L2
// (the model reads it once either way; all but 3 of the pairs): a larger one it
// reads once per band of rows ungrouped. With two tile rows grouping still paid
// (22 pairs, 3.6%; 29% at 128x4096x14336, whose weight outgrows L2), and a
// persistent grid walks its tiles in the group's order (4.4% over 189 pairs).
Config ungrouped_one_wave(const Config& c, const Task& t, const Limits& l) {
  const long long ctas = (long long)tiles_m(c, t) * tiles_n(c, t) * std::max(1, c.split_k);
  if (c.persistent || c.stream_k || c.raster == 0 || tiles_m(c, t) < 3 || ctas > l.sm_count) return c;
  Config rows = c;
  rows.raster = 0;
  return predict(rows, t, l).bytes_per_flop <= predict(c, t, l).bytes_per_flop ? rows : c;
}

// A large shape's wgmma tile runs with one wgmma group in flight, not two. Over
// every kept H200 sweep, the configs measured both ways in one process (the
// register double buffer on and off, nothing else different; 493 pairs on 64
// shapes of 64 GFLOP or more, ping-pong apart) ran 0.4% faster single-buffered in
// geometric mean, 154 faster by more than 0.5% and 18 slower, faster on 52 of
// the 64 shapes and slower by more than 0.1% on 5 (at worst 0.5%), in every
// sweep file alike. A long k-loop keeps the tensor pipe fed either way, and the
// group in flight holds each stage one k-tile longer. Smaller shapes keep the
// group in flight: from 32 to 64 GFLOP the pairs are even (0.9996, 81 pairs),
// under 32 GFLOP it pays 0.6-1.7%; and ping-pong, whose two consumers take
// turns, ran 12% slower without it (16 pairs).
constexpr double kSingleBufferFlops = 64e9;

bool single_buffered_large(const Config& c, const Task& t) {
  return c.backend == Backend::wgmma_tma && !c.pingpong && t.flops() >= kSingleBufferFlops;
}

Config single_buffered(Config c, const Task& t) {
  if (single_buffered_large(c, t)) c.reg_double_buffer = false;
  return c;
}

// What a learned model is asked about an ungrouped one-wave config: its grouped
// sibling, which the analytical model times the same. The learned models'
// raster knob is biased by what gets measured (docs/tile.md: every model pick
// was raster 8, other rasters only near-best neighbours, so "not raster 8" reads
// as "near the best"). Asked about raster 0, the H200 model moved its first pick
// to another tile family on 37 of 73 held-out LLM shapes, 14 faster and 11
// slower by more than 0.5% (7x12288x28672 and 100x24576x8192 6.5% slower); where
// it only ungrouped its former pick, 14 of 36 were faster and none slower
// (one-process A/Bs, H200, 2026-12-03).
// Likewise a large shape's single-buffered config is asked about as its
// double-buffered sibling: the analytical model times the group in flight as
// never slower, and the learned models saw single buffering only in
// refinements of configs already fast (the raster's bias again), so either
// would move the order for a knob the pairs above say is worth 0.4%.
Config as_the_model_saw(const Config& c, const Task& t, const Limits& l) {
  Config asked = c;
  if (!c.reg_double_buffer && single_buffered_large(c, t)) asked.reg_double_buffer = true;
  if (asked.raster != 0) return asked;
  Config grouped = asked;
  grouped.raster = kRasterGroup;
  return ungrouped_one_wave(grouped, t, l).raster == 0 ? grouped : asked;
}

struct TileShape {
  int bm, bn, warps_m, warps_n;
  bool pingpong = false;  // two consumers, each bm x bn, in turn (persistent schedules only)
};

// Columns that make whole waves: with `tile_rows` rows of tiles, the widest
// 8-column tile whose grid fills at most 1, 2 or 3 waves of SMs. 1024x2112x5120
// on 128-row tiles: 8 rows of 16 tiles of 136 columns, 128 CTAs in one wave
// (measured 32.8 us on the H200, where the best of the fixed list, 256 x 64,
// took 35.7 and 128 x 160's 112 CTAs 37).
std::vector<int> wave_fitted_cols(long long cols, long long tile_rows, int sms) {
  std::vector<int> out;
  for (int w = 1; w <= kWaveFits; ++w) {
    const long long tiles_n = w * sms / std::max(1LL, tile_rows);
    if (tiles_n < 1) continue;
    const long long bn = (cols + tiles_n - 1) / tiles_n;
    const int rounded = int((bn + 7) / 8 * 8);
    if (rounded <= 256) out.push_back(rounded);
  }
  return out;
}

// wgmma tiles: rows 64..256 (a warpgroup's 64-row granules), columns from the
// space's list plus the task's M fits (which matter with swap-AB) and the
// columns that make whole waves (either way round), one or two consumer
// warpgroups. Legality drops what does not fit.
std::vector<TileShape> wgmma_tiles(const Task& t, const Limits& l) {
  std::set<int> base(wgmma_widths().begin(), wgmma_widths().end());
  for (int f : fitted_tile_cols(t.m, kFitPieces)) base.insert(f);
  std::vector<TileShape> out;
  for (int bm : {64, 128, 192, 256}) {
    std::set<int> cols = base;
    if (t.m >= kWaveFitMinRows) {
      for (int f : wave_fitted_cols(t.n, (t.m + bm - 1) / bm, l.sm_count)) cols.insert(f);  // C's M on the rows
      for (int f : wave_fitted_cols(t.m, (t.n + bm - 1) / bm, l.sm_count)) cols.insert(f);  // swap-AB: N on them
    }
    for (int bn : cols)
      for (auto [wm, wn] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}}) out.push_back({bm, bn, wm, wn});
  }
  // Ping-pong tiles: two m64 rows per consumer. With one (64 x 256, within
  // the accumulator budget too) the consumer issuing alone has one dependent
  // chain of wgmmas, and measured 0.65-0.85x of the cooperative 128 x 256 on
  // the H200 (4096^3, 2048x4096x4096); 128 x 128 measured 0.965x. 128 x 176
  // (176 accumulators) is the tile of cuBLASLt's fastest kernel at
  // 8192x12288x512, and ours measured 0.96x at 8192x8192x1024, ahead of
  // 128 x 128 (0.94x) and the cooperative 128 x 256 (0.92x).
  for (auto [bm, bn] : {std::pair{128, 128}, std::pair{128, 96}, std::pair{128, 176}})
    out.push_back({bm, bn, 2, 1, true});
  return out;
}

// mma_sync: the fallback when TMA's alignment fails (K % 8) and a second opinion.
const std::vector<TileShape> kMmaSyncTiles = {
    {128, 256, 2, 4}, {128, 128, 2, 2}, {64, 128, 2, 2}, {64, 64, 2, 2}, {32, 128, 1, 4}, {32, 64, 1, 2}};

// Split factors whose CTAs fill about 1, 2 or 3 waves of SMs, and the largest
// whose grid the SMs hold at once at `per_sm` CTAs an SM; each split keeping
// kMinKTilesPerSplit k-tiles. Rounding a wave target up runs the last few CTAs
// as one more wave: on the H200 the 64x104 swap-AB tile of 100x5120x32768
// measured 0.98-0.99x cuBLAS at four stages and split 3 (240 CTAs in the 264
// places of two an SM), and 0.65x and 0.89x at split 4 (320 CTAs, the target's
// rounding) with three and ten stages.
std::vector<int> split_factors(int tiles, int k_tiles, int sms, int per_sm) {
  std::set<int> out;
  const auto add = [&](int s) {
    if (s >= 2 && s <= kMaxSplitK && k_tiles >= s * kMinKTilesPerSplit) out.insert(s);
  };
  for (int w = 1; w <= kSplitWaveTargets; ++w) add((w * sms + tiles - 1) / tiles);
  add(std::max(1, per_sm) * sms / std::max(1, tiles));
  return {out.begin(), out.end()};
}

// `c` with a ring of `stages` (canonicalize trims what a tiled CTA cannot fill).
Config at_depth(Config c, int stages, const Task& t) {
  c.stages = stages;
  c.prefetch = c.backend == Backend::wgmma_tma ? stages : std::max(1, stages - 1);
  canonicalize(c, t);
  return c;
}

// The deepest legal pipeline under `smem_cap` bytes; with `apart`, the deepest
// whose epilogue staging lies beside the ring, not in it (staging_in_ring).
std::optional<Config> deepest(const Config& c, const Task& t, const Limits& l, int smem_cap, bool apart = false) {
  for (int stages = kMaxStages; stages >= kMinStages; --stages) {
    const Config d = at_depth(c, stages, t);
    if (apart && staging_in_ring(d)) continue;
    if (dynamic_smem_bytes(d, t) <= smem_cap && legality(d, t, l).ok) return d;
  }
  return std::nullopt;
}

// `c` if legal, else its deepest legal shallower ring (`c` when none is).
Config fitted_depth(const Config& c, const Task& t, const Limits& l) {
  if (legality(c, t, l).ok) return c;
  for (int stages = c.stages - 1; stages >= kMinStages; --stages)
    if (const Config d = at_depth(c, stages, t); legality(d, t, l).ok) return d;
  return c;
}

// Pairs sharing one operand by multicast, along M (B shared) and along N (A
// shared); legality drops the ones whose slices are not whole 8-row groups.
void add_pairs(const Config& c, std::vector<Config>& out) {
  if (c.backend != Backend::wgmma_tma) return;
  for (auto [cm, cn] : {std::pair{2, 1}, std::pair{1, 2}}) {
    Config pair = c;
    pair.cluster_m = cm, pair.cluster_n = cn;
    out.push_back(pair);
  }
}

// Every schedule of one tile: tiled (with the split-K factors that fill the
// SMs, and multicast pairs), persistent (and its pairs) and stream-K.
void add_schedules(const Config& base, const Task& t, const Limits& l, std::vector<Config>& out) {
  const int tiles = tiles_m(base, t) * tiles_n(base, t), kt = k_tiles(base, t);
  if (base.pingpong) {  // persistent only; worth it once the SMs have a tile for each consumer
    if (tiles > l.sm_count) {
      out.push_back(base);
      add_pairs(base, out);
    }
    return;
  }
  const Config tiled = ungrouped_one_wave(base, t, l);
  out.push_back(tiled);
  // A one-wave grid draws its k-tiles from L2 on every SM at once; multicast
  // halves the shared operand's share of that.
  add_pairs(tiled, out);
  for (int s : split_factors(tiles, kt, l.sm_count, predict(base, t, l).ctas_per_sm)) {
    Config sk = base;
    sk.split_k = s;
    sk.split_k_mode = SplitKMode::parallel;  // no serial chain
    out.push_back(ungrouped_one_wave(sk, t, l));
  }
  // A tiled base may be deeper than a persistent kernel fits: tiled, the
  // staging can share the ring (legality.hpp, staging_in_ring).
  Config persistent = base;
  persistent.persistent = true;
  persistent = fitted_depth(persistent, t, l);
  if (tiles > l.sm_count) {
    out.push_back(persistent);
    add_pairs(persistent, out);
  }
  Config stream = persistent;
  stream.stream_k = true;
  if (kt > 1) out.push_back(stream);
}

std::vector<Config> candidates(const Task& t, const Limits& l) {
  std::vector<Config> bases;
  const auto add_depths = [&](Config c) {
    // The deepest ring, and the deepest that leaves room for two CTAs per SM.
    // Where the deepest lays the epilogue's staging over the ring, also the
    // deepest beside it: the stage more measured 7-8% faster at M = 257
    // (257x6144x4096, 257x32768x4096) and 3.5% slower at 33x10240x8192.
    const auto deep = deepest(c, t, l, l.smem_optin_bytes);
    if (deep) bases.push_back(*deep);
    if (deep && staging_in_ring(*deep))
      if (auto d = deepest(c, t, l, l.smem_optin_bytes, /*apart=*/true)) bases.push_back(*d);
    if (auto d = deepest(c, t, l, l.smem_per_sm_bytes / 2 - 1024)) bases.push_back(*d);
  };
  if (l.arch == "sm_90a") {
    for (const TileShape& s : wgmma_tiles(t, l)) {
      for (bool swap : {false, true}) {
        if (swap && t.layout != Layout::TN) continue;
        for (EpilogueStore store : {EpilogueStore::direct, EpilogueStore::staged, EpilogueStore::tma}) {
          Config c;
          c.backend = Backend::wgmma_tma;
          c.bm = s.bm, c.bn = s.bn, c.bk = 64, c.warps_m = s.warps_m, c.warps_n = s.warps_n;
          c.swap_ab = swap;
          c.pingpong = c.persistent = s.pingpong;
          c.epilogue_store = store;
          c.epilogue = t.epilogue;
          c.raster = raster_group(c, t);
          add_depths(c);
        }
      }
    }
  }
  if (arch_number(l.arch) >= 80) {
    for (const TileShape& s : kMmaSyncTiles) {
      for (EpilogueStore store : {EpilogueStore::direct, EpilogueStore::staged}) {
        Config c;
        c.backend = Backend::mma_sync;
        c.bm = s.bm, c.bn = s.bn, c.bk = 32, c.warps_m = s.warps_m, c.warps_n = s.warps_n;
        c.epilogue_store = store;
        c.epilogue = t.epilogue;
        c.raster = raster_group(c, t);
        add_depths(c);
      }
    }
  }
  std::vector<Config> out;
  for (const Config& b : bases) add_schedules(b, t, l, out);
  for (const Config& s : seeds(t, l)) out.push_back(s);
  for (Config& c : out) c = single_buffered(c, t);
  return out;
}

// The staging in the ring, or in chunks (persistent swap-AB), is a family of
// its own: the model hardly tells a stage more from one less (the learned
// model put 257x6144x4096's ring of six behind its ring of five, which
// measured 8% slower, and 257x32768x4096's persistent 256x136 of four stages,
// in chunks, outside a tune's 24 on an H200, behind its three with the whole
// tile, 7% slower), so both get measured.
using Family = std::tuple<int, int, int, int, int, bool, char, int, int, int, bool>;

// Tiled, tiled with split-K, persistent, ping-pong, stream-K.
char schedule_of(const Config& c) {
  if (c.stream_k) return 's';
  if (c.pingpong) return 'o';
  if (c.persistent) return 'p';
  return c.split_k > 1 ? 'k' : 't';
}

Family family_of(const Config& c) {
  return {int(c.backend), c.bm, c.bn, c.warps_m, c.warps_n, c.swap_ab, schedule_of(c), c.split_k, c.cluster_m,
          c.cluster_n, staging_in_ring(c) || chunked_staging(c)};
}

}  // namespace

std::vector<Prediction> predict_all(const std::vector<Config>& configs, const Task& t, const Limits& l,
                                    const LearnedModel& learned) {
  std::vector<Prediction> out;
  std::vector<std::vector<float>> rows;
  for (const Config& c : configs) {
    out.push_back(predict(c, t, l));
    out.back().analytical_us = out.back().time_us;
    if (!learned.empty()) rows.push_back(features(c, t, l, out.back()));
  }
  if (!learned.empty()) {
    const auto r = learned.shape_residuals(rows);  // one shape's configs: a pair layer orders their fastest
    for (std::size_t i = 0; i < out.size(); ++i) out[i].time_us *= std::exp2(r[i]);
  }
  return out;
}

std::vector<Prediction> predict_ranked(const std::vector<Config>& configs, const Task& t, const Limits& l,
                                       const LearnedModel& learned) {
  std::vector<Config> asked;
  for (const Config& c : configs) asked.push_back(as_the_model_saw(c, t, l));
  return predict_all(asked, t, l, learned);
}

std::vector<Ranked> rank_configs(const Task& t, const Limits& l, std::size_t max_count, const LearnedModel& learned,
                                 const std::vector<Config>& extra) {
  std::vector<Config> legal;
  std::set<std::string> seen;
  auto all_candidates = candidates(t, l);
  all_candidates.insert(all_candidates.end(), extra.begin(), extra.end());
  for (Config c : all_candidates) {
    canonicalize(c, t);
    if (!legality(c, t, l).ok || !seen.insert(name(c)).second) continue;
    legal.push_back(c);
  }
  const auto predictions = predict_ranked(legal, t, l, learned);
  std::vector<Ranked> all;
  for (std::size_t i = 0; i < legal.size(); ++i) all.push_back({legal[i], predictions[i]});
  std::stable_sort(all.begin(), all.end(), [](const Ranked& a, const Ranked& b) {
    if (a.prediction.time_us != b.prediction.time_us) return a.prediction.time_us < b.prediction.time_us;
    return name(a.config) < name(b.config);
  });
  // Diversify: the best of each schedule but stream-K (when within
  // kScheduleHedge of the best), then the best of each family, then
  // everything else, each in order.
  std::vector<Ranked> out, families, rest;
  std::set<char> schedules;
  std::map<Family, int> taken;
  const double best = all.empty() ? 0 : all.front().prediction.time_us;
  for (auto& r : all) {
    const bool hedge = !r.config.stream_k && !r.config.pingpong && r.prediction.time_us <= kScheduleHedge * best &&
                       schedules.insert(schedule_of(r.config)).second;
    const bool first_of_family = taken[family_of(r.config)]++ < kPerFamilyFirst;
    if (hedge) out.push_back(std::move(r));
    else if (first_of_family) families.push_back(std::move(r));
    else rest.push_back(std::move(r));
  }
  for (auto* part : {&families, &rest})
    out.insert(out.end(), std::make_move_iterator(part->begin()), std::make_move_iterator(part->end()));
  if (out.size() > max_count) out.resize(max_count);
  return out;
}

int model_rank(const std::vector<Ranked>& ranking, const Config& config, const Task& task, const Limits& limits,
               const LearnedModel& learned) {
  const std::string n = name(config);
  std::set<std::string> held;
  for (std::size_t i = 0; i < ranking.size(); ++i) {
    if (name(ranking[i].config) == n) return int(i) + 1;
    held.insert(name(ranking[i].config));
  }
  // Counting the ranked configs predicted faster would skip the order's
  // diversification (schedule hedges, then each family's first, then the
  // rest): 64x104 swap-AB at split 3, 100x5120x32768, a family of its own, is
  // #14 in the H200 model's order and was #21 by that count (#2 against #17
  // with the pooled model).
  int ahead = 0;
  for (const Ranked& r : rank_configs(task, limits, std::size_t(-1), learned, {config})) {
    const std::string rn = name(r.config);
    if (rn == n) return ahead + 1;
    ahead += held.count(rn) > 0;
  }
  // Illegal here (callers rank legal configs): after everything.
  return int(ranking.size()) + 1;
}

}  // namespace tessera::tile
