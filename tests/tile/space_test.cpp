#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tile/legality.hpp"
#include "tile/space.hpp"

namespace tessera::tile {
namespace {

constexpr std::size_t kEnumerateCap = 20000;

// Axes on which two configs differ, not counting prefetch, which canonicalize()
// clamps to stages-1 (mma_sync) or sets to stages (wgmma) when stages change.
int differing_axes(const Config& a, const Config& b, const Space& s) {
  int n = 0;
  for (const auto& part : s.parts) {
    if (part.backend != a.backend) continue;
    for (const auto& ax : part.axes) n += ax.knob != "prefetch" && get_knob(a, ax.knob) != get_knob(b, ax.knob);
  }
  return n == 0 && a.prefetch != b.prefetch ? 1 : n;
}

TEST(TileSpace, EnumeratedConfigsAreLegalWithUniqueStableNames) {
  const Task t = task_from_shape("4096x4096x4096");
  const Limits l;
  const Space s = default_space(t, l);
  const auto all = enumerate(s, t, l, kEnumerateCap);
  ASSERT_GT(all.size(), 1000u);
  std::set<std::string> names;
  bool saw_wgmma = false, saw_mma = false;
  for (const auto& c : all) {
    ASSERT_TRUE(legality(c, t, l).ok) << name(c);
    EXPECT_TRUE(names.insert(name(c)).second) << "duplicate " << name(c);
    EXPECT_EQ(parse_name(name(c)), c);
    saw_wgmma |= c.backend == Backend::wgmma_tma;
    saw_mma |= c.backend == Backend::mma_sync;
  }
  EXPECT_TRUE(saw_mma);
  // The enumeration is deterministic: a second pass yields the same order.
  const auto again = enumerate(s, t, l, 100);
  for (std::size_t i = 0; i < again.size(); ++i) EXPECT_EQ(name(again[i]), name(all[i]));
  (void)saw_wgmma;
}

TEST(TileSpace, SmallSpaceEnumeratesExhaustively) {
  const Task t = task_from_shape("4096x4096x4096");
  Space s2;
  s2.parts.push_back({Backend::wgmma_tma,
                      {{"warps_m", {2}}, {"warps_n", {1}}, {"bk", {64}}, {"bn", {128, 256}}, {"stages", {3, 4}},
                       {"raster", {0, 8}}}});
  const auto legal = enumerate(s2, t, Limits{}, 1000);
  EXPECT_EQ(legal.size(), 8u);
  EXPECT_EQ(s2.raw_size(), 8u);
}

TEST(TileSpace, SamplingIsSeededAndLegal) {
  const Task t = task_from_shape("100x5000x3000");
  const Limits l;
  const Space s = default_space(t, l);
  std::mt19937_64 r1(7), r2(7);
  std::set<Backend> backends;
  for (int i = 0; i < 200; ++i) {
    const auto a = sample(s, t, l, r1);
    const auto b = sample(s, t, l, r2);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(name(*a), name(*b));
    EXPECT_TRUE(legality(*a, t, l).ok);
    backends.insert(a->backend);
  }
  EXPECT_EQ(backends.size(), 2u) << "both backends should be drawn";
}

TEST(TileSpace, NeighboursChangeExactlyOneAxis) {
  const Task t = task_from_shape("4096x4096x4096");
  const Limits l;
  const Space s = default_space(t, l);
  for (const auto& c : seeds(t, l)) {
    const auto ns = neighbours(c, s, t, l);
    EXPECT_FALSE(ns.empty()) << name(c);
    for (const auto& n : ns) {
      EXPECT_TRUE(legality(n, t, l).ok);
      // Stages follow a split_k/bk move that leaves fewer k-tiles per CTA
      // than stages (canonicalize drops the never-filled ones).
      const int per_cta = (k_tiles(n, t) + n.split_k - 1) / n.split_k;
      const bool stages_followed = n.stages < c.stages && n.stages == std::max(kMinStages, per_cta);
      EXPECT_EQ(differing_axes(c, n, s) - (stages_followed ? 1 : 0), 1) << name(c) << " -> " << name(n);
      EXPECT_EQ(n.backend, c.backend);
    }
  }
}

TEST(TileSpace, CrossoverTakesEveryAxisFromAParent) {
  const Task t = task_from_shape("2048x2048x2048");
  const Limits l;
  const Space s = default_space(t, l);
  const auto sd = seeds(t, l);
  ASSERT_GE(sd.size(), 2u);
  std::mt19937_64 rng(3);
  int produced = 0;
  for (std::size_t i = 0; i + 1 < sd.size(); ++i) {
    const auto child = crossover(sd[i], sd[i + 1], s, t, l, rng);
    if (!child) continue;
    ++produced;
    EXPECT_TRUE(legality(*child, t, l).ok);
    for (const auto& part : s.parts) {
      if (part.backend != child->backend) continue;
      for (const auto& ax : part.axes) {
        const int v = get_knob(*child, ax.knob);
        if (ax.knob == "prefetch") continue;  // dependent knob (canonicalised)
        EXPECT_TRUE(v == get_knob(sd[i], ax.knob) || v == get_knob(sd[i + 1], ax.knob)) << ax.knob;
      }
    }
  }
  EXPECT_GT(produced, 0);
}

TEST(TileSpace, FittedTileColumnsCoverMWithLittlePadding) {
  EXPECT_EQ(fitted_tile_cols(100, 4), (std::vector<int>{104, 56, 40, 32}));
  EXPECT_EQ(fitted_tile_cols(257, 4), (std::vector<int>{136, 88, 72, 56}));
  EXPECT_EQ(fitted_tile_cols(1, 4), (std::vector<int>{8}));
  for (std::int64_t m : {1, 7, 100, 257, 1537, 3001, 16384}) {
    for (int cols : fitted_tile_cols(m, 4)) {
      EXPECT_EQ(cols % 8, 0);
      EXPECT_LE(cols, 256);
      const std::int64_t tiles = (m + cols - 1) / cols;
      EXPECT_LT(tiles * cols - m, 8 * tiles) << m << " on " << cols << ": at most 7 rows of padding per tile";
    }
  }
  // The wgmma space offers them (and swap-AB) for a TN task, not swap-AB for NN.
  const Space s = default_space(task_from_shape("257x6144x4096"), Limits{});
  bool has_fit = false, has_swap = false;
  for (const auto& part : s.parts)
    for (const auto& ax : part.axes) {
      if (ax.knob == "bn") has_fit = std::count(ax.values.begin(), ax.values.end(), 88) > 0;
      if (ax.knob == "swap_ab") has_swap = ax.values.size() == 2;
    }
  EXPECT_TRUE(has_fit);
  EXPECT_TRUE(has_swap);
  for (const auto& part : default_space(task_from_shape("257x6144x4096", "NN"), Limits{}).parts)
    for (const auto& ax : part.axes) {
      if (ax.knob == "swap_ab") {
        EXPECT_EQ(ax.values, std::vector<int>{0});
      }
    }
}

TEST(TileSpace, Sm80SpaceHasNoWgmma) {
  const Task t = task_from_shape("4096x4096x4096");
  const Limits l{"sm_80", 163 * 1024};
  for (const auto& c : enumerate(default_space(t, l), t, l, 2000)) EXPECT_EQ(c.backend, Backend::mma_sync);
}

TEST(TileSpace, TiledConfigsKeepNoStagesBeyondTheirKTiles) {
  const Limits l;
  // K=128 with bk=64: a tiled CTA computes 2 k-tiles, so 6 stages become 2.
  Config c = parse_config("w64x128x64_g1x1_s6p6_pa_d1_sw_ed_r0_k1s_t_c1x1_none");
  const Task small_k = task_from_shape("512x512x128");
  canonicalize(c, small_k);
  EXPECT_EQ(c.stages, 2);
  EXPECT_EQ(c.prefetch, 2);
  // Split-K 4 over 64 k-tiles leaves 16 per CTA: 6 stages stay.
  Config big = parse_config("w64x128x64_g1x1_s6p6_pa_d1_sw_ed_r0_k4s_t_c1x1_none");
  canonicalize(big, task_from_shape("512x512x4096"));
  EXPECT_EQ(big.stages, 6);
  // A persistent CTA prefetches into its next tile: its stages stay too.
  Config persistent = parse_config("w64x128x64_g1x1_s6p6_pa_d1_sw_ed_r0_k1s_p_c1x1_none");
  canonicalize(persistent, small_k);
  EXPECT_EQ(persistent.stages, 6);
  // Everything the space yields for a small-K shape respects the rule.
  for (const auto& e : enumerate(default_space(small_k, l), small_k, l, 400))
    if (!e.persistent) {
      const int per_cta = (k_tiles(e, small_k) + e.split_k - 1) / e.split_k;
      EXPECT_LE(e.stages, std::max(kMinStages, e.backend == Backend::wgmma_tma ? per_cta : per_cta + 1)) << name(e);
    }
}


// CTAs a config launches on a task (tiles x splits).
int ctas(const Config& c, const Task& t) { return ((t.m + c.bm - 1) / c.bm) * ((t.n + c.bn - 1) / c.bn) * c.split_k; }

TEST(TileSpace, WaveSeedsSpreadSmallProblemsOverEverySm) {
  const Limits l;  // sm_90a, 132 SMs
  // 64x128 output, K = 16384: without split-K a 64x64 tile gives 2 CTAs.
  const Task long_k = task_from_shape("64x128x16384");
  const auto deep = wave_seeds(long_k, l, 4);
  ASSERT_FALSE(deep.empty());
  for (const auto& c : deep) {
    EXPECT_TRUE(legality(c, long_k, l).ok) << name(c);
    EXPECT_EQ(c.backend, Backend::wgmma_tma);
    EXPECT_GE(ctas(c, long_k), 64) << name(c) << ": leaves most SMs idle";
    EXPECT_GE(k_tiles(c, long_k) / c.split_k, 2) << name(c) << ": fewer than two k-tiles per split";
  }
  // 8192x128x512: a 128x128 tile alone gives 64 CTAs; every seed uses at least 100.
  const Task tall = task_from_shape("8192x128x512");
  for (const auto& c : wave_seeds(tall, l, 4)) EXPECT_GE(ctas(c, tall), 100) << name(c);
  // With fewer SMs, the splits shrink with the machine.
  Limits small_gpu = l;
  small_gpu.sm_count = 16;
  for (const auto& c : wave_seeds(long_k, small_gpu, 4)) EXPECT_LT(c.split_k, deep.front().split_k) << name(c);
  // 64x256 output: a 64x32 tile gives 8 CTAs; the narrow wgmma tiles (n = 8, 16, 24) give 32 or more,
  // and each tile comes with both epilogue stores.
  const Task narrow = task_from_shape("64x256x512");
  const auto ns = wave_seeds(narrow, l, 8);
  ASSERT_GE(ns.size(), 2u);
  EXPECT_LE(ns.front().bn, 16) << name(ns.front());
  EXPECT_EQ(ns[0].epilogue_store, EpilogueStore::direct);
  EXPECT_EQ(ns[1].epilogue_store, EpilogueStore::staged);
  EXPECT_EQ(ns[1].bn, ns[0].bn);
  // The small problems list them first among their seeds; sm_80 has no wgmma.
  EXPECT_EQ(name(seeds(long_k, l).front()), name(deep.front()));
  EXPECT_TRUE(wave_seeds(long_k, Limits{"sm_80", kH100SmemOptinBytes}, 4).empty());
}

}  // namespace
}  // namespace tessera::tile
