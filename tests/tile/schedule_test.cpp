// The work schedule pasted into every kernel (tile/detail/schedule.inc),
// compiled here on the host: every (tile, k-tile) is computed by exactly one
// CTA, the CTAs that share a stream-K tile agree on its semaphore and its
// owner (who waits for the others' partial sums and writes C), and the slots
// fit the workspace the emitter sizes.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tile/legality.hpp"

namespace tessera::tile {
namespace {

#define TESSERA_SCHED inline

namespace streamk {
constexpr int kRaster = 8;
constexpr bool kStreamK = true;
#include "tile/detail/schedule.inc"
}  // namespace streamk

// Stream-K walked by clusters: a walker is a cluster, at most 264 / its size of them (the emitted cap).
namespace streamk_pairs {
constexpr int kRaster = 8;
constexpr bool kStreamK = true;
constexpr int kStreamKMaxCtas = tile::kStreamKMaxCtas / 2;
#include "tile/detail/schedule.inc"
}  // namespace streamk_pairs

namespace streamk_fours {
constexpr int kRaster = 0;
constexpr bool kStreamK = true;
constexpr int kStreamKMaxCtas = tile::kStreamKMaxCtas / 4;
#include "tile/detail/schedule.inc"
}  // namespace streamk_fours

namespace persistent {
constexpr int kRaster = 0;
constexpr bool kStreamK = false;
#include "tile/detail/schedule.inc"
}  // namespace persistent

struct Problem {
  int tiles_m, tiles_n, k_tiles, ctas;
};

// What one kernel's CTAs compute, gathered from all their walks.
struct Coverage {
  std::map<std::pair<int, int>, int> times;  // (tile id, k-tile) -> CTAs that computed it
  std::map<int, std::set<int>> ctas_of_tile;
  std::map<int, std::set<int>> peers_of_tile;  // what each unit of the tile claims
  std::map<int, std::set<int>> sk_tiles_of_tile;
  std::map<int, std::set<int>> written_of_tile;  // partial slots its peers write (all but the owner)
  std::map<int, std::set<int>> read_of_tile;     // partial slots the owner's fix-up reads
  std::map<int, std::set<int>> owner_of_tile;    // whom each peer takes for the owner
  std::map<int, int> head_of_tile;               // the CTA whose unit starts at the tile's k = 0
  std::set<int> count_in_after_waiting;          // CTAs that are a non-owner peer after owning (and waiting on) a tile
  std::map<int, int> writers_of_slot;
  int max_units_per_cta = 0;
  int max_k_tiles_per_cta = 0;
};

// What a shared unit's fix-up touches (reduce.cuh: streamk_fixup): a peer
// writes its slot and counts in; the owner, the first peer, waits and reads
// the others' slots (found by ADL in the walk's own namespace). Returns
// whether this CTA owns the unit.
template <typename W>
bool record_fixup(Coverage& c, const W& w, int cta) {
  c.sk_tiles_of_tile[w.u.tile_id].insert(w.u.sk_tile);
  const int first = streamk_first_peer(w);
  c.owner_of_tile[w.u.tile_id].insert(first);
  if (w.u.kb_begin == 0) c.head_of_tile[w.u.tile_id] = cta;
  if (cta != first) {
    const int slot = streamk_partial_slot(w, cta);
    c.written_of_tile[w.u.tile_id].insert(slot);
    ++c.writers_of_slot[slot];
    return false;
  }
  for (int q = first + 1; q < first + w.u.peers; ++q)
    c.read_of_tile[w.u.tile_id].insert(streamk_partial_slot(w, q));
  return true;
}

template <typename WalkBegin, typename WalkNext>
Coverage run(const Problem& p, WalkBegin begin, WalkNext next) {
  Coverage c;
  for (int cta = 0; cta < p.ctas; ++cta) {
    int units = 0, k = 0;
    bool waited = false;
    for (auto w = begin(p.tiles_m, p.tiles_n, p.k_tiles, cta, p.ctas); w.valid; next(w)) {
      ++units;
      EXPECT_LT(w.u.kb_begin, w.u.kb_end) << "an empty unit";
      EXPECT_EQ(w.u.tile_id, w.u.tm * p.tiles_n + w.u.tn);
      EXPECT_GE(w.u.tm, 0);
      EXPECT_LT(w.u.tm, p.tiles_m);
      EXPECT_GE(w.u.tn, 0);
      EXPECT_LT(w.u.tn, p.tiles_n);
      for (int kb = w.u.kb_begin; kb < w.u.kb_end; ++kb) ++c.times[{w.u.tile_id, kb}];
      k += w.u.kb_end - w.u.kb_begin;
      c.ctas_of_tile[w.u.tile_id].insert(cta);
      c.peers_of_tile[w.u.tile_id].insert(w.u.peers);
      if (w.u.peers > 1) {
        const bool owner = record_fixup(c, w, cta);
        if (!owner && waited) c.count_in_after_waiting.insert(cta);
        waited = waited || owner;
      }
      if (units > 100000) {
        ADD_FAILURE() << "the walk of CTA " << cta << " does not end";
        return c;
      }
    }
    c.max_units_per_cta = std::max(c.max_units_per_cta, units);
    c.max_k_tiles_per_cta = std::max(c.max_k_tiles_per_cta, k);
  }
  return c;
}

void expect_exact_cover(const Coverage& c, const Problem& p) {
  ASSERT_EQ(c.times.size(), std::size_t(p.tiles_m) * p.tiles_n * p.k_tiles) << "a (tile, k-tile) was never computed";
  for (const auto& [key, n] : c.times) EXPECT_EQ(n, 1) << "tile " << key.first << " k-tile " << key.second;
}

const std::vector<Problem> kProblems = {
    {1, 28, 296, 132},   // M = 100, N = 3584, K = 18944 with 128x128 tiles: 28 tiles, long K
    {1, 1, 64, 132},     // one tile, fewer k-tiles than CTAs
    {1, 1, 1, 132},      // one k-tile in all
    {13, 16, 64, 132},   // M = 1537 with 128x256 tiles on 4096 x 4096: 1.6 waves
    {32, 16, 64, 132},   // 4096^3: 3.9 waves, the first two go whole
    {64, 64, 128, 132},  // many waves
    {7, 3, 5, 264},      // more CTAs than iterations
    {5, 5, 17, 300},     // a grid above the cap: the CTAs past it do nothing
    {2, 3, 1000, 7},
};

TEST(TileSchedule, StreamKComputesEveryKTileOnceAndPeersAgree) {
  for (const Problem& p : kProblems) {
    SCOPED_TRACE(::testing::Message() << p.tiles_m << "x" << p.tiles_n << " tiles, " << p.k_tiles << " k-tiles, "
                                    << p.ctas << " CTAs");
    const Coverage c = run(p, streamk::walk_begin, streamk::walk_next);
    expect_exact_cover(c, p);
    const int ctas = std::min(p.ctas, kStreamKMaxCtas);
    const long long iterations = 1LL * p.tiles_m * p.tiles_n * p.k_tiles;
    const int partial_slots = int(std::min<long long>(kStreamKMaxCtas, iterations));  // as workspace_bytes
    const int semaphores = p.tiles_m * p.tiles_n;
    std::set<int> sk_tiles;
    for (const auto& [tile, who] : c.ctas_of_tile) {
      // Every unit of a tile claims the same number of peers: the CTAs that really share it.
      ASSERT_EQ(c.peers_of_tile.at(tile).size(), 1u) << "tile " << tile;
      EXPECT_EQ(*c.peers_of_tile.at(tile).begin(), int(who.size())) << "tile " << tile;
      for (int cta : who) EXPECT_LT(cta, ctas) << "a CTA past the cap did work";
      if (who.size() > 1) {
        ASSERT_EQ(c.sk_tiles_of_tile.at(tile).size(), 1u) << "the peers of tile " << tile << " disagree on its semaphore";
        const int sk = *c.sk_tiles_of_tile.at(tile).begin();
        EXPECT_TRUE(sk_tiles.insert(sk).second) << "two shared tiles on semaphore " << sk;
        EXPECT_GE(sk, 0);
        EXPECT_LT(sk, semaphores) << "semaphore outside the workspace";
        // Every peer takes the same CTA for the owner: the one that holds the
        // tile's k = 0 part. It reads exactly the slots the others wrote.
        ASSERT_EQ(c.owner_of_tile.at(tile).size(), 1u) << "the peers of tile " << tile << " disagree on its owner";
        EXPECT_EQ(*c.owner_of_tile.at(tile).begin(), c.head_of_tile.at(tile)) << "tile " << tile;
        EXPECT_EQ(c.read_of_tile.at(tile), c.written_of_tile.at(tile)) << "tile " << tile;
        EXPECT_EQ(c.written_of_tile.at(tile).size(), who.size() - 1) << "tile " << tile;
        for (int slot : c.written_of_tile.at(tile)) {
          EXPECT_GE(slot, 0);
          EXPECT_LT(slot, partial_slots) << "partial slot outside the workspace";
        }
      }
    }
    for (const auto& [slot, writers] : c.writers_of_slot) EXPECT_EQ(writers, 1) << "slot " << slot << " written twice";
    // An owner waits for its peers: none of them may wait on anything before
    // it counts in, or a cycle of waits could hang the grid.
    EXPECT_TRUE(c.count_in_after_waiting.empty()) << c.count_in_after_waiting.size() << " CTAs count in after waiting";
    // Balance: no CTA has more than its even share of its line's
    // k-iterations, and fewer CTAs than there are lines go without a line.
    const streamk::StreamKLines lines = streamk::streamk_lines(p.tiles_m, p.tiles_n, p.k_tiles, ctas);
    ASSERT_GT(lines.ctas_per_line, 0);
    EXPECT_LE(c.max_k_tiles_per_cta, (1LL * lines.length * p.k_tiles + lines.ctas_per_line - 1) / lines.ctas_per_line);
    EXPECT_LT(ctas - lines.count * lines.ctas_per_line, lines.count);
  }
}

// Stream-K's lines are cut alike: the j-th CTA of every line walks the same
// places and k-ranges, so the tiles at one place of every line (which share
// the longer side's operand panel) are computed at the same time and k. That
// is what lets one DRAM read of a k-slab serve them all (schedule.inc).
TEST(TileSchedule, StreamKCutsEveryLineAlike) {
  for (const Problem& p : kProblems) {
    SCOPED_TRACE(::testing::Message() << p.tiles_m << "x" << p.tiles_n << " tiles, " << p.k_tiles << " k-tiles, "
                                    << p.ctas << " CTAs");
    const int ctas = std::min(p.ctas, kStreamKMaxCtas);
    const streamk::StreamKLines lines = streamk::streamk_lines(p.tiles_m, p.tiles_n, p.k_tiles, ctas);
    EXPECT_EQ(lines.along_m, p.tiles_m >= p.tiles_n) << "lines run along the longer side";
    EXPECT_EQ(lines.length, std::max(p.tiles_m, p.tiles_n));
    // Per line and per CTA of it: the (place, kb_begin, kb_end) of each unit.
    std::map<int, std::vector<std::vector<std::tuple<int, int, int>>>> walks;
    for (int cta = 0; cta < ctas; ++cta) {
      std::vector<std::tuple<int, int, int>> units;
      int line = -1;
      for (auto w = streamk::walk_begin(p.tiles_m, p.tiles_n, p.k_tiles, cta, p.ctas); w.valid; streamk::walk_next(w)) {
        const int place = lines.along_m ? w.u.tm : w.u.tn, of = lines.along_m ? w.u.tn : w.u.tm;
        EXPECT_TRUE(line < 0 || line == of) << "CTA " << cta << " leaves its line";
        line = of;
        units.emplace_back(place, w.u.kb_begin, w.u.kb_end);
      }
      if (line >= 0) walks[line].push_back(units);
    }
    ASSERT_EQ(int(walks.size()), lines.count) << "every line has CTAs";
    for (const auto& [line, ctas_of_line] : walks) EXPECT_EQ(ctas_of_line, walks.begin()->second) << "line " << line;
  }
}

// More lines than CTAs: every CTA walks whole tiles, as a persistent kernel.
TEST(TileSchedule, StreamKWithMoreLinesThanCtasWalksWholeTiles) {
  const Problem p{300, 290, 8, 132};
  const Coverage c = run(p, streamk::walk_begin, streamk::walk_next);
  expect_exact_cover(c, p);
  for (const auto& [tile, who] : c.ctas_of_tile) ASSERT_EQ(who.size(), 1u) << "tile " << tile;
  EXPECT_EQ(c.max_units_per_cta, (300 * 290 + 131) / 132);
}

TEST(TileSchedule, SkinnyLongKSpreadsOverEveryCta) {
  const Problem p{1, 28, 296, 132};
  const Coverage c = run(p, streamk::walk_begin, streamk::walk_next);
  std::set<int> busy;
  for (const auto& [tile, who] : c.ctas_of_tile) busy.insert(who.begin(), who.end());
  EXPECT_EQ(busy.size(), 132u) << "28 tiles of 296 k-tiles keep all 132 CTAs busy";
  EXPECT_LE(c.max_k_tiles_per_cta, (28 * 296 + 131) / 132);
}

TEST(TileSchedule, PersistentWalksWholeTilesRoundRobin) {
  for (const Problem& p : kProblems) {
    const Coverage c = run(p, persistent::walk_begin, persistent::walk_next);
    expect_exact_cover(c, p);
    for (const auto& [tile, who] : c.ctas_of_tile) {
      EXPECT_EQ(who.size(), 1u);
      EXPECT_EQ(*c.peers_of_tile.at(tile).begin(), 1);
    }
    EXPECT_EQ(c.max_units_per_cta, (p.tiles_m * p.tiles_n + p.ctas - 1) / p.ctas);
  }
}

// CTA -> the tiles its persistent walk computed (each tile has one CTA).
std::map<int, int> tiles_per_cta(const Problem& p) {
  std::map<int, int> walked;
  for (const auto& [tile, who] : run(p, persistent::walk_begin, persistent::walk_next).ctas_of_tile)
    for (int cta : who) ++walked[cta];
  return walked;
}

// A persistent grid keeps its rounds and spreads them evenly: 512 tiles on 132
// CTAs are 4 rounds, so 128 CTAs walk 4 tiles each and the other 4 none, where
// round-robin over all 132 left 16 of them a round short.
TEST(TileSchedule, PersistentKeepsItsRoundsOnAsFewCtasAsNeedThem) {
  for (const Problem& p : kProblems) {
    SCOPED_TRACE(::testing::Message() << p.tiles_m << "x" << p.tiles_n << " tiles on " << p.ctas << " CTAs");
    const int tiles = p.tiles_m * p.tiles_n, rounds = (tiles + p.ctas - 1) / p.ctas;
    const std::map<int, int> walked = tiles_per_cta(p);
    const int busy = (tiles + rounds - 1) / rounds;
    EXPECT_EQ(int(walked.size()), busy);
    EXPECT_EQ(walked.rbegin()->first, busy - 1) << "the busy CTAs are the first ones";
    for (const auto& [cta, n] : walked) EXPECT_TRUE(n == rounds || n == rounds - 1) << "CTA " << cta << ": " << n;
  }
  const std::map<int, int> walked = tiles_per_cta(Problem{32, 16, 64, 132});
  EXPECT_EQ(walked.size(), 128u) << "4096^3 in 128x256 tiles";
  for (const auto& [cta, n] : walked) EXPECT_EQ(n, 4);
}

// Persistent clusters (1-D, 2 or 4 CTAs along M or N): the clusters walk
// cluster tiles, each member takes its own tile of each; together they cover
// every (tile, k-tile) once, and the members of a cluster walk the same number
// of units with the same k-ranges (their multicasts need every peer's loads).
TEST(TileSchedule, PersistentClustersCoverEveryTileInLockstep) {
  struct Case {
    int tiles_m, tiles_n, k_tiles, ctas, cm, cn;
  };
  for (const Case& k : std::vector<Case>{{16, 32, 128, 132, 2, 1},  // 2048x8192 with 128x256 tiles, pairs along M
                                         {16, 32, 128, 132, 1, 2},
                                         {32, 16, 64, 128, 4, 1},   // 4096^3 with 128x256 tiles, 4 along M
                                         {8, 12, 5, 20, 1, 4},
                                         {2, 2, 3, 132, 2, 1},      // fewer cluster tiles than clusters
                                         {13, 32, 64, 132, 2, 1},   // 1537 rows: 13 tile rows round up to 7 pairs
                                         {3, 43, 112, 132, 1, 2}}) {  // 43 tile columns round up to 22 pairs
    const int cs = k.cm * k.cn, clusters = k.ctas / cs;
    const int cluster_rows = (k.tiles_m + k.cm - 1) / k.cm, cluster_cols = (k.tiles_n + k.cn - 1) / k.cn;
    std::map<std::pair<int, int>, int> times;
    for (int cl = 0; cl < clusters; ++cl) {
      std::vector<std::vector<std::tuple<int, int, int>>> ranges(cs);  // per member: (kb_begin, kb_end, cluster tile)
      for (int rank = 0; rank < cs; ++rank) {
        const int rm = k.cm > 1 ? rank : 0, rn = k.cn > 1 ? rank : 0;
        for (auto w = persistent::walk_begin(cluster_rows, cluster_cols, k.k_tiles, cl, clusters); w.valid;
             persistent::walk_next(w)) {
          const persistent::Work u = persistent::cluster_member(w.u, k.tiles_n, k.cm, k.cn, rm, rn);
          ASSERT_TRUE(u.tm >= 0 && u.tm < cluster_rows * k.cm && u.tn >= 0 && u.tn < cluster_cols * k.cn);
          EXPECT_EQ(u.tm / k.cm * cluster_cols + u.tn / k.cn, w.u.tile_id) << "inside its cluster tile";
          // A member past C's last tile row or column still walks (its peers
          // need its multicast slices) but computes nothing that is stored.
          ranges[rank].emplace_back(u.kb_begin, u.kb_end, w.u.tile_id);
          if (u.tm >= k.tiles_m || u.tn >= k.tiles_n) continue;
          EXPECT_EQ(u.tile_id, u.tm * k.tiles_n + u.tn);
          for (int kb = u.kb_begin; kb < u.kb_end; ++kb) ++times[{u.tile_id, kb}];
        }
      }
      for (int rank = 1; rank < cs; ++rank) EXPECT_EQ(ranges[rank], ranges[0]) << "cluster " << cl << " rank " << rank;
    }
    ASSERT_EQ(times.size(), std::size_t(k.tiles_m) * k.tiles_n * k.k_tiles);
    for (const auto& [key, n] : times) EXPECT_EQ(n, 1) << "tile " << key.first << " k-tile " << key.second;
  }
}

// Stream-K walked by clusters: every member's partial slots and semaphores
// (schedule.inc: streamk_member_entry) are its own and lie inside the
// workspace that legality sizes for the config; the members of a walker
// cover every (tile, k-tile) of C once between them. `S` is the schedule
// compiled with the cluster's walker cap (a namespace's functions, wrapped).
template <typename S>
void expect_cluster_streamk_fits(int cm, int cn) {
  const int cs = cm * cn;
  for (const Problem& p : kProblems) {
    if (p.tiles_m < cm || p.tiles_n < cn) continue;
    SCOPED_TRACE(::testing::Message() << p.tiles_m << "x" << p.tiles_n << " tiles, " << p.k_tiles << " k-tiles, "
                                    << p.ctas << " CTAs, cluster " << cm << "x" << cn);
    Config c;
    c.backend = Backend::wgmma_tma;
    c.bm = c.bn = 128, c.bk = 64, c.warps_m = 2, c.warps_n = 1, c.stages = c.prefetch = 4;
    c.persistent = c.stream_k = true, c.cluster_m = cm, c.cluster_n = cn;
    const Task t = task_from_shape(std::to_string(p.tiles_m * 128) + "x" + std::to_string(p.tiles_n * 128) + "x" +
                                   std::to_string(p.k_tiles * 64));
    ASSERT_EQ(tiles_m(c, t), p.tiles_m);
    ASSERT_EQ(k_tiles(c, t), p.k_tiles);
    ASSERT_EQ(stream_k_walkers(c), S::kCap);
    const int slots = stream_k_partial_slots(c, t), sems = stream_k_semaphores(c, t);
    const int rows = (p.tiles_m + cm - 1) / cm, cols = (p.tiles_n + cn - 1) / cn, walkers = std::max(1, p.ctas / cs);
    std::map<int, int> writes;  // partial-slot entry -> how often a member stores into it
    std::map<std::pair<int, int>, int> times;
    for (int walker = 0; walker < walkers; ++walker) {
      for (auto w = S::begin(rows, cols, p.k_tiles, walker, walkers); w.valid; S::next(w)) {
        for (int rank = 0; rank < cs; ++rank) {
          const auto u = S::member(w.u, p.tiles_n, cm, cn, cm > 1 ? rank : 0, cn > 1 ? rank : 0);
          if (u.tm >= p.tiles_m || u.tn >= p.tiles_n) continue;  // outside C: no fix-up
          for (int kb = u.kb_begin; kb < u.kb_end; ++kb) ++times[{u.tile_id, kb}];
          if (w.u.peers < 2) continue;
          EXPECT_LT(S::entry(w.u.sk_tile, rank, cs), sems) << "semaphore outside the workspace";
          const int first = S::first_peer(w);
          if (walker != first) {  // the owner keeps its sums; the others store theirs
            const int mine = S::entry(S::slot(w, walker), rank, cs);
            EXPECT_GE(mine, 0);
            EXPECT_LT(mine, slots) << "partial slot outside the workspace";
            ++writes[mine];
          }
          for (int q = first; q < first + w.u.peers; ++q) EXPECT_LT(S::entry(S::slot(w, q), rank, cs), slots);
        }
      }
    }
    for (const auto& [entry, n] : writes) EXPECT_EQ(n, 1) << "partial-slot entry " << entry << " written twice";
    ASSERT_EQ(times.size(), std::size_t(p.tiles_m) * p.tiles_n * p.k_tiles);
    for (const auto& [key, n] : times) EXPECT_EQ(n, 1) << "tile " << key.first << " k-tile " << key.second;
  }
}

// The schedule compiled into namespace `ns`, as expect_cluster_streamk_fits wants it.
#define TESSERA_SCHEDULE_OF(Name, ns)                                                               \
  struct Name {                                                                                     \
    static constexpr int kCap = ns::kStreamKMaxCtas;                                                \
    static ns::Walk begin(int tm, int tn, int kt, int cta, int ctas) { return ns::walk_begin(tm, tn, kt, cta, ctas); } \
    static void next(ns::Walk& w) { ns::walk_next(w); }                                             \
    static ns::Work member(ns::Work u, int tn, int cm, int cn, int rm, int rn) {                    \
      return ns::cluster_member(u, tn, cm, cn, rm, rn);                                             \
    }                                                                                               \
    static int slot(const ns::Walk& w, int q) { return ns::streamk_partial_slot(w, q); }           \
    static int first_peer(const ns::Walk& w) { return ns::streamk_first_peer(w); }                  \
    static int entry(int i, int m, int ms) { return ns::streamk_member_entry(i, m, ms); }           \
  }

TESSERA_SCHEDULE_OF(Pairs, streamk_pairs);
TESSERA_SCHEDULE_OF(Fours, streamk_fours);
#undef TESSERA_SCHEDULE_OF

TEST(TileSchedule, StreamKWalkedByClustersKeepsEachMembersSlotsInsideTheWorkspace) {
  expect_cluster_streamk_fits<Pairs>(1, 2);
  expect_cluster_streamk_fits<Pairs>(2, 1);
  expect_cluster_streamk_fits<Fours>(1, 4);
  expect_cluster_streamk_fits<Fours>(4, 1);
}

TEST(TileSchedule, RasterIsAPermutationOfTheTiles) {
  for (const auto& [tm, tn] : std::vector<std::pair<int, int>>{{13, 16}, {1, 28}, {9, 3}, {8, 8}, {17, 1}}) {
    std::set<std::pair<int, int>> seen;
    for (int id = 0; id < tm * tn; ++id) {
      const auto t = streamk::tile_coord(id, tm, tn);
      ASSERT_TRUE(t.m >= 0 && t.m < tm && t.n >= 0 && t.n < tn) << id;
      EXPECT_TRUE(seen.insert({t.m, t.n}).second) << id;
    }
  }
}

}  // namespace
}  // namespace tessera::tile
