#include <gtest/gtest.h>

#include "tile/legality.hpp"
#include "tile/cost_model.hpp"
#include "tile/space.hpp"

namespace tessera::tile {
namespace {

Config hopper_big() {
  Config c;
  c.backend = Backend::wgmma_tma;
  c.bm = 128, c.bn = 256, c.bk = 64, c.warps_m = 2, c.warps_n = 1, c.stages = 4, c.prefetch = 4;
  return c;
}

void expect_illegal(const Config& c, const Task& t, const Limits& l, const std::string& needle) {
  const auto r = legality(c, t, l);
  EXPECT_FALSE(r.ok) << name(c);
  EXPECT_NE(r.reason.find(needle), std::string::npos) << "reason: " << r.reason;
}

TEST(TileLegality, AcceptsKnownGoodConfigs) {
  const Task t = task_from_shape("4096x4096x4096");
  EXPECT_TRUE(legality(hopper_big(), t).ok) << legality(hopper_big(), t).reason;
  EXPECT_TRUE(legality(Config{}, t, Limits{"sm_80", 163 * 1024}).ok);
}

TEST(TileLegality, SharedMemoryOverTheLimit) {
  const Task t = task_from_shape("4096x4096x4096");
  Config c = hopper_big();
  c.stages = c.prefetch = 6;  // 6 x 48 KB
  expect_illegal(c, t, Limits{}, "shared memory");
  c.stages = c.prefetch = 4;
  expect_illegal(c, t, Limits{"sm_90a", 100 * 1024}, "shared memory");
}

TEST(TileLegality, StagesUpToSixteenWhereTheyFit) {
  const Task t = task_from_shape("4096x64x1024");
  Config c = hopper_big();
  c.bm = 64, c.bn = 32, c.warps_m = 1;
  c.stages = c.prefetch = kMaxStages;  // 16 x 12 KB
  EXPECT_TRUE(legality(c, t).ok) << legality(c, t).reason;
  c.stages = c.prefetch = kMaxStages + 1;
  expect_illegal(c, t, Limits{}, "out of range");
  c.bn = 64, c.stages = c.prefetch = kMaxStages;  // 16 x 16 KB
  expect_illegal(c, t, Limits{}, "shared memory");
}

TEST(TileLegality, DeviceLimitsOverrideOnlyWhatTheDeviceReports) {
  DeviceSummary dev;  // compile-only: nothing known
  const Limits base{"sm_80", 100 * 1024};
  const Limits same = with_device(base, dev);
  EXPECT_EQ(same.arch, "sm_80");
  EXPECT_EQ(same.smem_optin_bytes, 100 * 1024);
  EXPECT_EQ(same.sm_count, base.sm_count);
  dev.arch = "sm_90a", dev.smem_per_block_optin = 232448, dev.sm_count = 114;
  const Limits l = with_device(base, dev);
  EXPECT_EQ(l.arch, "sm_90a");
  EXPECT_EQ(l.smem_optin_bytes, 232448);
  EXPECT_EQ(l.sm_count, 114);
  EXPECT_EQ(l.max_threads_per_block, base.max_threads_per_block);
}

// A Hopper's peak in the cost model is its kind's, whatever ceiling this
// process measured (the H200 rows hold 665 to 806 TFLOP/s for one kind), so
// two processes rank a shape alike, and as `tile list` ranks it without a GPU.
TEST(TileLegality, AHopperIsRankedAtItsKindsPeakNotTheMeasuredCeiling) {
  DeviceSummary dev;
  dev.arch = "sm_90a", dev.sm_count = 132, dev.sm_clock_mhz = 1980, dev.smem_per_block_optin = 232448;
  dev.peak_tflops = 671;
  const Limits low = with_device(Limits{}, dev);
  dev.peak_tflops = 788;
  const Limits high = with_device(Limits{}, dev);
  EXPECT_DOUBLE_EQ(low.peak_tflops, kH200PeakTflops);
  EXPECT_DOUBLE_EQ(high.peak_tflops, kH200PeakTflops);
  const Task t = task_from_shape("100x24576x8192");
  const auto a = rank_configs(t, low, 8), b = rank_configs(t, high, 8), offline = rank_configs(t, Limits{}, 8);
  ASSERT_EQ(a.size(), 8u);
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(name(a[i].config), name(b[i].config)) << i;
    EXPECT_EQ(name(a[i].config), name(offline[i].config)) << i;
  }
  // Fewer SMs or a lower clock scale it (an H100 PCIe: 114 SMs at 1755 MHz).
  dev.sm_count = 114, dev.sm_clock_mhz = 1755;
  EXPECT_NEAR(with_device(Limits{}, dev).peak_tflops, kH200PeakTflops * 114 / 132 * 1755 / 1980, 1e-9);
  // Off Hopper, the measured peak: no constant of the kind is known.
  dev.arch = "sm_80", dev.peak_tflops = 280;
  EXPECT_DOUBLE_EQ(with_device(Limits{"sm_80", 100 * 1024}, dev).peak_tflops, 280);
}

TEST(TileLegality, BackendNeedsItsArchitecture) {
  const Task t = task_from_shape("4096x4096x4096");
  expect_illegal(hopper_big(), t, Limits{"sm_80", kH100SmemOptinBytes}, "sm_90a");
  expect_illegal(hopper_big(), t, Limits{"sm_90", kH100SmemOptinBytes}, "sm_90a");
  expect_illegal(Config{}, t, Limits{"sm_75", kH100SmemOptinBytes}, "sm_80");
}

TEST(TileLegality, BadWarpLayouts) {
  const Task t = task_from_shape("4096x4096x4096");
  Config c;
  c.bm = 64, c.warps_m = 8;  // 8-row warp tiles
  expect_illegal(c, t, Limits{}, "warp tile");
  c = Config{};
  c.bm = 256, c.bn = 256, c.warps_m = 2, c.warps_n = 2;  // 128x128 per warp
  expect_illegal(c, t, Limits{}, "accumulators");
  c = hopper_big();
  c.warps_m = 4;  // 4 consumer warpgroups of 32 rows
  EXPECT_FALSE(legality(c, t).ok);
  c = hopper_big();
  c.warps_m = 1;  // one consumer with 128x256 = 256 accumulators per thread
  expect_illegal(c, t, Limits{}, "accumulators");
}

TEST(TileLegality, TmaAlignment) {
  expect_illegal(hopper_big(), task_from_shape("100x5000x3001"), Limits{}, "K % 8");
  expect_illegal(hopper_big(), task_from_shape("100x5001x3000", "NN"), Limits{}, "N % 8");
  EXPECT_TRUE(legality(hopper_big(), task_from_shape("100x5001x3000", "TN")).ok);
  // mma_sync handles the unaligned shape with predicated element loads
  EXPECT_TRUE(legality(Config{}, task_from_shape("100x5000x3001")).ok);
}

TEST(TileLegality, KnobConflicts) {
  const Task t = task_from_shape("512x512x8192");
  Config c = Config{};
  c.split_k = 4;
  EXPECT_TRUE(legality(c, t).ok);
  c.persistent = true;
  expect_illegal(c, t, Limits{}, "persistent");
  c = Config{};
  c.split_k_mode = SplitKMode::parallel;
  expect_illegal(c, t, Limits{}, "split_k > 1");
  c = Config{};
  c.prefetch = c.stages;
  expect_illegal(c, t, Limits{}, "prefetch");
  c = Config{};
  c.epilogue = Epilogue::bias;
  expect_illegal(c, t, Limits{}, "epilogue");
  c = hopper_big();
  c.smem_layout = SmemLayout::pad;
  expect_illegal(c, t, Limits{}, "swizzle");
  c = Config{};
  c.epilogue_store = EpilogueStore::tma;
  expect_illegal(c, t, Limits{}, "wgmma_tma");
  c = hopper_big();
  c.epilogue_store = EpilogueStore::tma;
  c.stages = c.prefetch = 3;
  EXPECT_TRUE(legality(c, t).ok) << legality(c, t).reason;
  expect_illegal(c, task_from_shape("512x510x8192"), Limits{}, "N % 8");
  c = Config{};
  c.split_k = 16;
  expect_illegal(c, task_from_shape("512x512x64"), Limits{}, "k-tiles");
}

TEST(TileLegality, StreamKIsPersistentAndUnsplit) {
  const Task t = task_from_shape("100x3584x18944");
  for (Config c : {hopper_big(), Config{}}) {
    c.stream_k = true;
    expect_illegal(c, t, Limits{}, "persistent");
    c.persistent = true;
    EXPECT_TRUE(legality(c, t).ok) << name(c) << ": " << legality(c, t).reason;
    c.split_k = 2;
    expect_illegal(c, t, Limits{}, "exclusive");
  }
}

TEST(TileLegality, SwapAbIsWgmmaTnWithoutClusterOrTmaStore) {
  const Task tn = task_from_shape("7x6144x4096");
  Config c = hopper_big();
  c.bn = 16, c.swap_ab = true;
  EXPECT_TRUE(legality(c, tn).ok) << legality(c, tn).reason;
  Config nn = c;
  nn.bn = 64;  // NN's own rule wants warpgroup columns in 64-column swizzle chunks
  expect_illegal(nn, task_from_shape("7x6144x4096", "NN"), Limits{}, "TN");
  Config m = Config{};
  m.swap_ab = true;
  expect_illegal(m, tn, Limits{}, "wgmma_tma");
  Config cl = c;
  cl.cluster_n = 2;
  expect_illegal(cl, tn, Limits{}, "cluster");
  Config tma = c;
  tma.epilogue_store = EpilogueStore::tma;
  expect_illegal(tma, tn, Limits{}, "TMA");
  // Swap-AB's tiles count in C^T: bm walks N, bn walks M.
  EXPECT_EQ(tiles_m(c, tn), 6144 / 128);
  EXPECT_EQ(tiles_n(c, tn), 1);
  EXPECT_EQ(mma_rows(c, tn), 6144);
  EXPECT_EQ(mma_cols(c, tn), 7);
  // Its staged epilogue holds each consumer's tile transposed (bn rows of bm + 8 halves).
  Config staged = c;
  staged.epilogue_store = EpilogueStore::staged;
  EXPECT_EQ(dynamic_smem_bytes(staged, tn) - dynamic_smem_bytes(c, tn), 2 * 16 * (64 + 8) * 2);
}

TEST(TileLegality, WarpgroupRowsAreMultiplesOf64WithinTheAccumulators) {
  const Task t = task_from_shape("1537x4096x4096");
  Config c = hopper_big();
  c.bm = 192, c.bn = 128, c.warps_m = 1, c.warps_n = 2;  // 192 x 64 per consumer: 96 accumulators
  EXPECT_TRUE(legality(c, t).ok) << legality(c, t).reason;
  c.bn = 256;  // 192 x 128: 192 accumulators
  expect_illegal(c, t, Limits{}, "accumulators");
  c = hopper_big();
  c.bm = 256, c.bn = 64, c.warps_m = 1, c.warps_n = 2;  // 256 x 32 per consumer: 64
  EXPECT_TRUE(legality(c, t).ok) << legality(c, t).reason;
  c.bm = 160, c.warps_m = 1;  // 160 rows: not a multiple of 64
  expect_illegal(c, t, Limits{}, "multiple of 64");
  // Non-power-of-two columns: 96, 160, 224 (and M fits such as 104).
  for (int bn : {96, 104, 160, 224}) {
    Config w = hopper_big();
    w.bn = bn, w.warps_m = 2;
    if (bn > 128) w.warps_m = 1, w.warps_n = 2, w.bn = bn;
    EXPECT_TRUE(legality(w, t).ok) << name(w) << ": " << legality(w, t).reason;
  }
}

TEST(TileLegality, TwoConsumersHoldWiderPlainTiles) {
  // cuBLAS's tile for M = 257: 256 x 136 with swap-AB, two consumers of 128 x 136 (136 accumulators
  // each, within the 232 registers setmaxnreg gives them; ptxas spills nothing with a plain epilogue).
  const Task t = task_from_shape("257x32768x4096");
  Config c = hopper_big();
  c.bm = 256, c.bn = 136, c.swap_ab = true, c.stages = c.prefetch = 3, c.cluster_n = 2;
  EXPECT_TRUE(legality(c, t).ok) << legality(c, t).reason;
  Config wide = c;
  wide.bn = 176;  // 176 accumulators: the most that compile without spills
  EXPECT_TRUE(legality(wide, t).ok) << legality(wide, t).reason;
  wide.bn = 184;
  expect_illegal(wide, t, Limits{}, "(max 176)");
  // What spills past 128: a fused epilogue, a serial split's fix-up; and one consumer has no setmaxnreg.
  const Task gelu = task_from_shape("257x32768x4096", "TN", "bias_gelu");
  Config fused = c;
  fused.epilogue = Epilogue::bias_gelu;
  expect_illegal(fused, gelu, Limits{}, "(max 128)");
  Config split = c;
  split.split_k = 2, split.cluster_n = 1;
  expect_illegal(split, t, Limits{}, "(max 128)");
  Config streamed = c;
  streamed.persistent = streamed.stream_k = true, streamed.cluster_n = 1;
  expect_illegal(streamed, t, Limits{}, "(max 128)");
  Config one = c;
  one.bm = 128, one.warps_m = 1, one.cluster_n = 1;  // one consumer of 128 x 136
  expect_illegal(one, t, Limits{}, "(max 128)");
}

TEST(TileLegality, ClustersAreOneDimensionalUpToFour) {
  const Task t = task_from_shape("256x512x512");
  Config c = hopper_big();
  c.bm = 64, c.bn = 16, c.warps_m = 1, c.stages = c.prefetch = 4;
  c.cluster_n = 4;
  EXPECT_TRUE(legality(c, t).ok) << legality(c, t).reason;
  c.cluster_n = 8;
  expect_illegal(c, t, Limits{}, "not supported");
  c.cluster_n = 2, c.cluster_m = 2;  // a 2x2 cluster would multicast A to the CTAs of the other tile row
  expect_illegal(c, t, Limits{}, "one dimension");
  c.cluster_n = 3, c.cluster_m = 1;
  expect_illegal(c, t, Limits{}, "not supported");
  c.cluster_n = 1, c.cluster_m = 4;  // B shared along M: a 16-row tile would give 4-row slices
  expect_illegal(c, t, Limits{}, "multiple of 8 rows");
}

TEST(TileLegality, PersistentClustersWalkWholeClusterTilesStreamKToo) {
  const Task t = task_from_shape("2048x8192x8192");
  Config c = hopper_big();  // 128x256, two consumers
  c.persistent = true, c.cluster_m = 2;
  EXPECT_TRUE(legality(c, t).ok) << legality(c, t).reason;
  c.cluster_m = 1, c.cluster_n = 4;
  EXPECT_TRUE(legality(c, t).ok) << legality(c, t).reason;
  // Stream-K walks whole clusters: a quarter as many walkers, each member
  // with its own partial slots and semaphores.
  c.stream_k = true;
  EXPECT_TRUE(legality(c, t).ok) << legality(c, t).reason;
  EXPECT_EQ(stream_k_walkers(c), kStreamKMaxCtas / 4);
  EXPECT_EQ(stream_k_partial_slots(c, t), (kStreamKMaxCtas / 4) * 4);
  EXPECT_EQ(stream_k_semaphores(c, t), (16 * 32 / 4) * 4) << "128 cluster tiles of 16 x 32 tiles, a semaphore each";
  c.stream_k = false;
  const Task odd = task_from_shape("1537x8192x8192");  // 13 tile rows: the grid rounds up to 7 pairs
  c.cluster_n = 1, c.cluster_m = 2;
  EXPECT_TRUE(legality(c, odd).ok) << legality(c, odd).reason;
  const Task one_row = task_from_shape("100x8192x8192");  // one tile row cannot hold a pair along M
  expect_illegal(c, one_row, Limits{}, "smaller than cluster");
}

TEST(TileLegality, SwapAbTakesAClusterAlongEitherAxis) {
  const Task t = task_from_shape("257x6144x4096");  // C^T: 32 tile rows of N, 4 tile columns of M
  Config c = hopper_big();
  c.bm = 192, c.bn = 72, c.warps_m = 1, c.warps_n = 1, c.stages = c.prefetch = 5;
  c.swap_ab = true, c.epilogue_store = EpilogueStore::staged;
  for (int cn : {2, 4}) {  // along M: the weight's 192 rows multicast in slices of 96 or 48
    c.cluster_n = cn;
    EXPECT_TRUE(legality(c, t).ok) << name(c) << ": " << legality(c, t).reason;
  }
  c.cluster_n = 1, c.cluster_m = 2;  // along N: A's 72 rows would go in slices of 36
  expect_illegal(c, t, Limits{}, "multiple of 8 rows");
  c.bn = 80;
  EXPECT_TRUE(legality(c, t).ok) << name(c) << ": " << legality(c, t).reason;
}

TEST(TileLegality, PingPongIsPersistentWithTwoConsumersOfWholeTiles) {
  const Task t = task_from_shape("4096x4096x4096");
  Config c = hopper_big();
  c.bn = 128, c.persistent = c.pingpong = true, c.epilogue_store = EpilogueStore::tma;
  EXPECT_TRUE(legality(c, t).ok) << legality(c, t).reason;
  // Each consumer holds a whole tile: 128 x 128 is 128 accumulators, 128 x 256 twice that.
  EXPECT_EQ(consumer_rows(c), 128);
  EXPECT_EQ(consumer_cols(c), 128);
  c.bn = 256;
  expect_illegal(c, t, Limits{}, "accumulators");
  // 64 x 256 fits the accumulators. Its TMA store goes in strips, a ring of
  // two 16 x 64 strips per consumer warp (32 KB in all), where cooperative
  // consumers of the same 64 x 256 stage a whole tile each (64 KB).
  c.bm = 64;
  EXPECT_TRUE(legality(c, t).ok) << legality(c, t).reason;
  Config coop = c;
  coop.pingpong = false, coop.bm = 128;  // the same 64 x 256 per consumer, cooperatively
  EXPECT_TRUE(tma_strips(c));
  EXPECT_FALSE(tma_strips(coop));
  EXPECT_EQ(dynamic_smem_bytes(c, t) - c.stages * (64 + 256) * 64 * 2 - 2 * 4 * 2 * 16 * 64 * 2,
            dynamic_smem_bytes(coop, t) - coop.stages * (128 + 256) * 64 * 2 - 2 * 64 * 256 * 2);
  // Staged, the consumers take one staging tile in turn, where cooperative
  // consumers each have their own.
  Config staged = c;
  staged.epilogue_store = EpilogueStore::staged;  // padded rows, one tile too
  Config staged_coop = coop;
  staged_coop.epilogue_store = EpilogueStore::staged;
  EXPECT_EQ(dynamic_smem_bytes(staged, t) - staged.stages * (64 + 256) * 64 * 2 + 64 * (256 + 8) * 2,
            dynamic_smem_bytes(staged_coop, t) - staged_coop.stages * (128 + 256) * 64 * 2);
  c.bm = 128, c.bn = 128;
  c.persistent = false;
  expect_illegal(c, t, Limits{}, "needs persistent");
  c.persistent = c.stream_k = true;
  expect_illegal(c, t, Limits{}, "not stream_k");
  c.stream_k = false, c.warps_m = 1;
  expect_illegal(c, t, Limits{}, "two consumer warpgroups");
  c.warps_m = 1, c.warps_n = 2;
  expect_illegal(c, t, Limits{}, "two consumer warpgroups");
  Config m = Config{};
  m.persistent = m.pingpong = true;
  expect_illegal(m, t, Limits{}, "wgmma_tma feature");
}

// Ping-pong's TMA store in strips needs only whole 16-column groups, not whole
// 64-column boxes: 176-wide tiles take it (with five stages in the shared
// memory of the four it had with a staged tile), 136-wide ones do not.
// Cooperative consumers keep the tile store, and its whole boxes.
TEST(TileLegality, TmaStoreInStripsTakesWidthsOfWhole16Columns) {
  const Task t = task_from_shape("8192x12288x512");
  Config c = hopper_big();
  c.bn = 176, c.stages = c.prefetch = 5, c.persistent = c.pingpong = true, c.epilogue_store = EpilogueStore::tma;
  EXPECT_TRUE(legality(c, t).ok) << legality(c, t).reason;
  EXPECT_TRUE(tma_strips(c));
  Config staged = c;
  staged.epilogue_store = EpilogueStore::staged;
  expect_illegal(staged, t, Limits{}, "shared memory");
  staged.stages = staged.prefetch = 4;
  EXPECT_TRUE(legality(staged, t).ok) << legality(staged, t).reason;
  Config coop = c;  // 64 x 176 per consumer, stored as a tile: 176 is no whole number of 64-column boxes
  coop.pingpong = false;
  EXPECT_FALSE(tma_strips(coop));
  expect_illegal(coop, t, Limits{}, "multiple of the 64-column box");
  c.bn = 136;
  expect_illegal(c, t, Limits{}, "multiple of 16");
}

TEST(TileLegality, InlineProducerNeedsOneConsumerAndNoCluster) {
  const Task t = task_from_shape("512x2048x128");
  Config c = hopper_big();
  c.bm = 64, c.bn = 64, c.warps_m = 1, c.stages = c.prefetch = 2;
  c.inline_producer = true;
  EXPECT_TRUE(legality(c, t).ok) << legality(c, t).reason;
  c.warps_n = 2;
  expect_illegal(c, t, Limits{}, "one consumer");
  c.warps_n = 1, c.cluster_n = 2;
  expect_illegal(c, t, Limits{}, "cluster 1x1");
  c.cluster_n = 1, c.persistent = true;
  expect_illegal(c, t, Limits{}, "exclusive");
  Config m = Config{};
  m.inline_producer = true;
  expect_illegal(m, t, Limits{}, "wgmma_tma feature");
}

TEST(TileLegality, NarrowWgmmaTiles) {
  const Task t = task_from_shape("64x256x512");
  Config c = hopper_big();
  c.bm = 64, c.warps_m = 1, c.stages = c.prefetch = 4;
  for (int bn : {8, 16, 24, 48}) {
    c.bn = bn;
    EXPECT_TRUE(legality(c, t).ok) << bn << ": " << legality(c, t).reason;
  }
  c.bn = 24;
  c.bk = 32;  // a 24x32 B tile is 1536 bytes: the next stage would lose the 1024-byte alignment
  expect_illegal(c, t, Limits{}, "1024");
  c.bk = 64;
  c.warps_n = 2;  // 12 columns per warpgroup: no such wgmma
  expect_illegal(c, t, Limits{}, "multiple of 8");
  Config m = Config{};
  m.bn = 24, m.warps_n = 1;
  expect_illegal(m, t, Limits{}, "multiple of 16");
}

TEST(TileLegality, SeedsAreLegalForCommonShapes) {
  for (const char* shape : {"4096x4096x4096", "8192x8192x8192", "1x4096x4096", "100x5000x3000", "64x64x64",
                            "128x128x16384", "100x5000x3001"}) {
    for (const char* arch : {"sm_90a", "sm_80"}) {
      const Task t = task_from_shape(shape);
      const Limits l{arch, kH100SmemOptinBytes};
      const auto s = seeds(t, l);
      EXPECT_FALSE(s.empty()) << shape << " " << arch;
      for (const auto& c : s) EXPECT_TRUE(legality(c, t, l).ok) << name(c) << ": " << legality(c, t, l).reason;
    }
  }
}

// Tiled wgmma kernels lay the epilogue's staging over the stage ring where the
// two do not fit side by side (wgmma_kernel.cuh, kStagingInRing): a CTA's one
// unit has consumed every stage by its epilogue. That buys 257x6144x4096's
// 128x136 swap-AB tile a sixth stage with its staged store.
TEST(TileLegality, TiledStagingSharesTheRingOnlyWhereItMustFit) {
  const Task t = task_from_shape("257x6144x4096");
  const Config six = parse_name("w128x136x64_g2x1_s6p6_pa_d1_sw_es_r8_k1s_t_c1x1_swapab_none");
  const Config five = parse_name("w128x136x64_g2x1_s5p5_pa_d1_sw_es_r8_k1s_t_c1x1_swapab_none");
  Config six_direct = six;
  six_direct.epilogue_store = EpilogueStore::direct;
  EXPECT_TRUE(staging_in_ring(six));
  EXPECT_FALSE(staging_in_ring(five));        // fits beside the ring: laid out as before
  EXPECT_FALSE(staging_in_ring(six_direct));  // no staging
  EXPECT_TRUE(legality(six, t).ok) << legality(six, t).reason;
  // In the ring the staging costs nothing over the direct store's ring; beside it, its own bytes.
  EXPECT_EQ(dynamic_smem_bytes(six, t), dynamic_smem_bytes(six_direct, t));
  Config five_direct = five;
  five_direct.epilogue_store = EpilogueStore::direct;
  EXPECT_GT(dynamic_smem_bytes(five, t), dynamic_smem_bytes(five_direct, t));
  // A persistent kernel loads its next tile's stages under the epilogue: never in the ring.
  Config persistent = six;
  persistent.persistent = true;
  EXPECT_FALSE(staging_in_ring(persistent));
  // A TMA-store staging tile too (64x64, one consumer: fourteen stages).
  const Config tma = parse_name("w64x64x64_g1x1_s14p14_pa_d1_sw_et_r0_k1s_t_c1x1_none");
  EXPECT_TRUE(staging_in_ring(tma));
  EXPECT_TRUE(legality(tma, task_from_shape("64x4096x7168")).ok);
}

// Persistent swap-AB stores its staged tile in chunks of rows through two
// slots per consumer where the whole tile does not fit beside the ring
// (legality.hpp, chunked_staging): 256x136 takes four stages so, cuBLAS's
// tile and depth at 257x32768x4096, where the whole transposed tile left room
// for three.
TEST(TileLegality, PersistentSwapAbStagesInChunksWhereTheTileWouldNotFit) {
  const Task t = task_from_shape("257x32768x4096");
  const Config four = parse_name("w256x136x64_g2x1_s4p4_pa_d1_sw_es_r8_k1s_p_c1x1_swapab_none");
  ASSERT_TRUE(chunked_staging(four));
  EXPECT_TRUE(legality(four, t).ok) << legality(four, t).reason;
  Config direct = four;
  direct.epilogue_store = EpilogueStore::direct;
  // Two slots of 16 rows of C (128 columns + 8 of padding) per consumer over the direct store's bytes.
  EXPECT_EQ(dynamic_smem_bytes(four, t) - dynamic_smem_bytes(direct, t),
            2 * kStagingChunkSlots * kStagingChunkRows * (128 + 8) * 2);
  // Tiled, the whole tile (over the ring where it must); ping-pong's consumers each have their own slots.
  Config tiled = four;
  tiled.persistent = false;
  EXPECT_FALSE(chunked_staging(tiled));
  // Three stages fit the whole tile beside them: kept whole.
  Config three = four;
  three.stages = three.prefetch = 3;
  EXPECT_FALSE(chunked_staging(three));
  EXPECT_TRUE(legality(three, t).ok) << legality(three, t).reason;
  const Config pingpong = parse_name("w128x136x64_g2x1_s6p6_pa_d1_sw_es_r8_k1s_o_c1x1_swapab_none");
  ASSERT_TRUE(chunked_staging(pingpong));
  Config pp_direct = pingpong;
  pp_direct.epilogue_store = EpilogueStore::direct;
  EXPECT_EQ(dynamic_smem_bytes(pingpong, t) - dynamic_smem_bytes(pp_direct, t),
            2 * kStagingChunkSlots * kStagingChunkRows * (128 + 8) * 2);
  // A tile of no more rows of C than the slots hold is staged whole.
  EXPECT_FALSE(chunked_staging(parse_name("w128x32x64_g1x1_s8p8_pa_d1_sw_es_r8_k1s_p_c1x1_swapab_none")));
  // Not swap-AB: the tile as before.
  EXPECT_FALSE(chunked_staging(parse_name("w128x256x64_g2x1_s3p3_pa_d1_sw_es_r8_k1s_p_c1x1_none")));
}

}  // namespace
}  // namespace tessera::tile
