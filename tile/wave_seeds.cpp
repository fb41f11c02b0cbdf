// Seeds that fill the machine. A small GEMM on 132 SMs is not limited by the
// tensor cores but by how long the busiest SM takes to stream its operands in
// from a cold L2, plus a fixed cost per wave (launch, prologue, first DRAM round
// trip, epilogue). A 128x128 tile over 8192x128 gives 64 CTAs and leaves half
// the SMs idle; split-K over K = 16384 with a 64x128 output gives 2 CTAs
// without it. So for each small tile, pick the split that spreads the CTAs over
// every SM, and rank the (tile, split) pairs by a rough cost:
//   waves x kFixed  +  (CTAs per SM) x (k-tiles per CTA) x (rows of A + B per k-tile) / 64
//   + kSplitFixed + (CTAs per SM) x (tile elements / 4096) x kReduce   when split
// (the reduction's chain of workspace round trips, then its fp32 atomics).
// The constants are guesses in units of "one 64-row k-tile load"; the model only
// orders seeds, and the tuner measures every one of them.
#include <algorithm>
#include <optional>

#include "tile/space.hpp"

namespace tessera::tile {

namespace {

constexpr double kFixed = 8.0;    // per wave: launch, prologue, first DRAM round trip, epilogue
constexpr double kReduce = 0.5;   // per split CTA and 64x64 of output: the workspace atomics
// Red, fence, counter, read back: on the H100, split-K 4 made 256x512x512 2.5 us
// slower than no split (6.85 against 4.29 us, scripts/tile_ab.sh), about 12 units.
constexpr double kSplitFixed = 12.0;
constexpr int kMinKTilesPerSplit = 2;

struct Tile {
  int bm, bn, warps_m;
};
// wgmma tiles with one or two consumer warpgroups, smallest first. The narrow
// ones (n = 8, 16, 24) are cuBLAS's own answer to small outputs: on the H100,
// 64x256x512 runs nvjet_sm90_hsh_64x8_... on 32 CTAs (ncu, docs/tile.md).
constexpr Tile kTiles[] = {{64, 8, 1},   {64, 16, 1},  {64, 24, 1},  {64, 32, 1},   {64, 64, 1},
                           {64, 128, 1}, {128, 64, 2}, {128, 128, 2}, {64, 256, 1}, {128, 256, 2}};

int ceil_div(long long a, long long b) { return static_cast<int>((a + b - 1) / b); }

// The deepest legal pipeline (canonicalize trims stages the CTA cannot fill).
std::optional<Config> deepest(Config c, const Task& task, const Limits& limits) {
  for (int stages = kMaxStages; stages >= kMinStages; --stages) {
    Config d = c;
    d.stages = d.prefetch = stages;
    canonicalize(d, task);
    if (legality(d, task, limits).ok) return d;
  }
  return std::nullopt;
}

struct Scored {
  Config config;
  double cost;
};

double cost(const Config& c, const Task& task, const Limits& limits) {
  const int tiles = ceil_div(task.m, c.bm) * ceil_div(task.n, c.bn);
  const int ctas = tiles * c.split_k;
  const int per_cta_k = ceil_div(k_tiles(c, task), c.split_k);
  const int smem = dynamic_smem_bytes(c, task) + 1024;  // + the per-CTA reservation
  const int resident = std::max(1, std::min(kH100SmemPerSmBytes / smem, 2048 / c.threads()));
  const int sms = std::max(1, limits.sm_count);
  const int per_sm = ceil_div(ctas, sms);
  const int waves = ceil_div(ctas, static_cast<long long>(sms) * resident);
  double t = waves * kFixed + per_sm * per_cta_k * (c.bm + c.bn) / 64.0;
  if (c.split_k > 1) t += kSplitFixed + per_sm * (c.bm * c.bn / 4096.0) * kReduce;
  return t;
}

}  // namespace

std::vector<Config> wave_seeds(const Task& task, const Limits& limits, std::size_t max_count) {
  if (limits.arch != "sm_90a") return {};
  std::vector<Scored> best;  // per tile, its cheapest split
  for (const Tile& tile : kTiles) {
    std::optional<Scored> pick;
    for (int split = 1; split <= kMaxSplitK; split *= 2) {
      Config c;
      c.backend = Backend::wgmma_tma;
      c.bm = tile.bm, c.bn = tile.bn, c.bk = 64, c.warps_m = tile.warps_m, c.warps_n = 1;
      c.split_k = split;
      c.split_k_mode = split > 1 ? SplitKMode::parallel : SplitKMode::serial;
      if (split > 1 && k_tiles(c, task) < split * kMinKTilesPerSplit) break;
      const auto legal = deepest(c, task, limits);
      if (!legal) continue;
      const double t = cost(*legal, task, limits);
      if (!pick || t < pick->cost) pick = Scored{*legal, t};
    }
    if (pick) best.push_back(*pick);
  }
  std::stable_sort(best.begin(), best.end(), [](const Scored& a, const Scored& b) { return a.cost < b.cost; });
  // Each tile with both epilogue stores (distinct names: nothing to deduplicate).
  // On the H100 the staged one won 256x512x512 with 64x16 tiles (3.46 against
  // 3.84 us) and lost 64x256x512 with 64x8 (3.39 against 3.30 us). No
  // inline-producer twins: on the H100 they tied or lost (64x256x512 3.49
  // against 3.26-3.30 us, docs/tile.md); the space still has the knob.
  std::vector<Config> out;
  for (std::size_t i = 0; i < best.size() && out.size() < max_count; ++i) {
    out.push_back(best[i].config);
    Config staged = best[i].config;
    staged.epilogue_store = EpilogueStore::staged;
    if (auto legal = deepest(staged, task, limits); legal && out.size() < max_count) out.push_back(*legal);
  }
  return out;
}

}  // namespace tessera::tile
