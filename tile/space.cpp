#include "tile/space.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"

namespace tessera::tile {

namespace {

Axis axis(std::string knob, std::vector<int> values) { return {std::move(knob), std::move(values)}; }

SubSpace mma_sync_space() {
  return {Backend::mma_sync,
          {axis("bm", {32, 64, 128, 256}), axis("bn", {32, 64, 128, 256}), axis("bk", {32, 64}),
           axis("warps_m", {1, 2, 4}), axis("warps_n", {1, 2, 4}), axis("stages", {2, 3, 4, 5}),
           axis("prefetch", {1, 2, 3, 4}), axis("load_order", {0, 1}), axis("reg_double_buffer", {0, 1}),
           axis("smem_layout", {0, 1}), axis("epilogue_store", {0, 1}), axis("raster", {0, 4, 8, 16}),
           axis("split_k", {1, 2, 4, 8, 16}), axis("split_k_mode", {0, 1}), axis("persistent", {0, 1}),
           axis("stream_k", {0, 1})}};
}

constexpr int kMaxFitPieces = 4;  // M fits into 1..4 more tiles than the fewest

SubSpace wgmma_space(const Task& task) {
  std::vector<int> bn = wgmma_widths();
  for (int f : fitted_tile_cols(task.m, kMaxFitPieces))
    if (std::find(bn.begin(), bn.end(), f) == bn.end()) bn.push_back(f);
  std::sort(bn.begin(), bn.end());
  // Swap-AB only where it is legal (TN): the axis would be dead weight for NN.
  const std::vector<int> swap = task.layout == Layout::TN ? std::vector<int>{0, 1} : std::vector<int>{0};
  return {Backend::wgmma_tma,
          {axis("bm", {64, 128, 192, 256}), axis("bn", bn), axis("bk", {32, 64}), axis("warps_m", {1, 2}),
           axis("warps_n", {1, 2}), axis("stages", {2, 3, 4, 5, 6, 8}), axis("reg_double_buffer", {0, 1}),
           axis("epilogue_store", {0, 1, 2}), axis("raster", {0, 4, 8, 16}), axis("split_k", {1, 2, 4, 8, 16, 32, 64}),
           axis("split_k_mode", {0, 1}), axis("persistent", {0, 1}), axis("stream_k", {0, 1}),
           axis("cluster_m", {1, 2, 4}), axis("cluster_n", {1, 2, 4}), axis("inline_producer", {0, 1}),
           axis("swap_ab", swap), axis("pingpong", {0, 1})}};
}

unsigned long long part_size(const SubSpace& s) {
  unsigned long long n = 1;
  for (const auto& a : s.axes) n *= a.values.size();
  return n;
}

Config decode(const SubSpace& s, unsigned long long index, const Task& task) {
  Config c;
  c.backend = s.backend;
  for (const auto& a : s.axes) {
    set_knob(c, a.knob, a.values[index % a.values.size()]);
    index /= a.values.size();
  }
  canonicalize(c, task);
  return c;
}

const SubSpace* part_for(const Space& space, Backend b) {
  for (const auto& p : space.parts)
    if (p.backend == b) return &p;
  return nullptr;
}

bool legal(const Config& c, const Task& t, const Limits& l) { return legality(c, t, l).ok; }

constexpr std::size_t kSmallWaveSeeds = 8;  // four tiles, each with a direct and a staged epilogue

Config make(Backend b, int bm, int bn, int bk, int wm, int wn, int stages, int prefetch) {
  Config c;
  c.backend = b;
  c.bm = bm, c.bn = bn, c.bk = bk, c.warps_m = wm, c.warps_n = wn, c.stages = stages, c.prefetch = prefetch;
  return c;
}

}  // namespace

unsigned long long Space::raw_size() const {
  unsigned long long n = 0;
  for (const auto& p : parts) n += part_size(p);
  return n;
}

// The non-powers of two (96, 160, 176, 224) make more tiles that fit an N,
// or with swap-AB an M; each task's space adds its own fits (wgmma_space).
// 176 is the widest ping-pong tile (128x176, 176 accumulators per thread):
// the tile of cuBLASLt's fastest kernel at 8192x12288x512 on the H200.
const std::vector<int>& wgmma_widths() {
  static const std::vector<int> widths = {8, 16, 24, 32, 48, 64, 96, 128, 160, 176, 192, 224, 256};
  return widths;
}

std::vector<int> fitted_tile_cols(std::int64_t rows, int pieces) {
  constexpr int kGranule = 8, kMaxCols = 256;
  std::vector<int> out;
  if (rows <= 0) return out;
  const std::int64_t fewest = (rows + kMaxCols - 1) / kMaxCols;
  for (std::int64_t k = fewest; k < fewest + pieces; ++k) {
    const std::int64_t per = (rows + k - 1) / k;
    const int cols = static_cast<int>((per + kGranule - 1) / kGranule * kGranule);
    if (cols <= kMaxCols && std::find(out.begin(), out.end(), cols) == out.end()) out.push_back(cols);
  }
  return out;
}

Space default_space(const Task& task, const Limits& limits) {
  Space s;
  if (arch_number(limits.arch) >= 80) s.parts.push_back(mma_sync_space());
  if (limits.arch == "sm_90a") s.parts.push_back(wgmma_space(task));
  return s;
}

void set_knob(Config& c, const std::string& knob, int v) {
  if (knob == "bm") c.bm = v;
  else if (knob == "bn") c.bn = v;
  else if (knob == "bk") c.bk = v;
  else if (knob == "warps_m") c.warps_m = v;
  else if (knob == "warps_n") c.warps_n = v;
  else if (knob == "stages") c.stages = v;
  else if (knob == "prefetch") c.prefetch = v;
  else if (knob == "load_order") c.load_order = v ? LoadOrder::staggered : LoadOrder::paired;
  else if (knob == "reg_double_buffer") c.reg_double_buffer = v != 0;
  else if (knob == "smem_layout") c.smem_layout = v ? SmemLayout::swizzle : SmemLayout::pad;
  else if (knob == "epilogue_store") c.epilogue_store = static_cast<EpilogueStore>(v);
  else if (knob == "raster") c.raster = v;
  else if (knob == "split_k") c.split_k = v;
  else if (knob == "split_k_mode") c.split_k_mode = v ? SplitKMode::parallel : SplitKMode::serial;
  else if (knob == "persistent") c.persistent = v != 0;
  else if (knob == "cluster_m") c.cluster_m = v;
  else if (knob == "cluster_n") c.cluster_n = v;
  else if (knob == "inline_producer") c.inline_producer = v != 0;
  else if (knob == "stream_k") c.stream_k = v != 0;
  else if (knob == "swap_ab") c.swap_ab = v != 0;
  else if (knob == "pingpong") c.pingpong = v != 0;
  else TESSERA_REQUIRE(false, "unknown knob " + knob);
}

int get_knob(const Config& c, const std::string& knob) {
  if (knob == "bm") return c.bm;
  if (knob == "bn") return c.bn;
  if (knob == "bk") return c.bk;
  if (knob == "warps_m") return c.warps_m;
  if (knob == "warps_n") return c.warps_n;
  if (knob == "stages") return c.stages;
  if (knob == "prefetch") return c.prefetch;
  if (knob == "load_order") return c.load_order == LoadOrder::staggered;
  if (knob == "reg_double_buffer") return c.reg_double_buffer;
  if (knob == "smem_layout") return c.smem_layout == SmemLayout::swizzle;
  if (knob == "epilogue_store") return static_cast<int>(c.epilogue_store);
  if (knob == "raster") return c.raster;
  if (knob == "split_k") return c.split_k;
  if (knob == "split_k_mode") return c.split_k_mode == SplitKMode::parallel;
  if (knob == "persistent") return c.persistent;
  if (knob == "cluster_m") return c.cluster_m;
  if (knob == "cluster_n") return c.cluster_n;
  if (knob == "inline_producer") return c.inline_producer;
  if (knob == "stream_k") return c.stream_k;
  if (knob == "swap_ab") return c.swap_ab;
  if (knob == "pingpong") return c.pingpong;
  TESSERA_REQUIRE(false, "unknown knob " + knob);
  return 0;
}

void canonicalize(Config& c, const Task& task) {
  c.epilogue = task.epilogue;
  if (c.split_k == 1) c.split_k_mode = SplitKMode::serial;  // no reduction, one name
  if (c.backend == Backend::wgmma_tma) {
    c.prefetch = c.stages;
    c.load_order = LoadOrder::paired;
    c.smem_layout = SmemLayout::swizzle;
  } else {
    c.prefetch = std::clamp(c.prefetch, 1, std::max(1, c.stages - 1));
    c.cluster_m = c.cluster_n = 1;
    c.swap_ab = false;
  }
  // A tiled (non-persistent) CTA walks ceil(k_tiles / split_k) k-tiles: stages
  // past that are shared memory that is never filled (for mma_sync, past one
  // more than that), so they collapse into one config and leave room for
  // more CTAs per SM. Persistent CTAs keep them: the producer runs ahead into
  // the next tile.
  if (!c.persistent && c.bk > 0 && c.split_k > 0) {
    const int per_cta = (k_tiles(c, task) + c.split_k - 1) / c.split_k;
    const int useful = std::max(kMinStages, c.backend == Backend::wgmma_tma ? per_cta : per_cta + 1);
    if (c.stages > useful) {
      c.stages = useful;
      c.prefetch = c.backend == Backend::wgmma_tma ? c.stages : std::clamp(c.prefetch, 1, c.stages - 1);
    }
  }
}

std::vector<Config> enumerate(const Space& space, const Task& task, const Limits& limits, std::size_t max_count) {
  std::vector<Config> out;
  std::set<std::string> seen;
  for (const auto& part : space.parts) {
    const auto n = part_size(part);
    for (unsigned long long i = 0; i < n && out.size() < max_count; ++i) {
      Config c = decode(part, i, task);
      if (legal(c, task, limits) && seen.insert(name(c)).second) out.push_back(c);
    }
  }
  return out;
}

std::optional<Config> sample(const Space& space, const Task& task, const Limits& limits, std::mt19937_64& rng,
                             int max_tries) {
  if (space.parts.empty()) return std::nullopt;
  // Backend first (uniformly), then points of its sub-space until one is legal:
  // the sub-spaces differ in size and in legal fraction, and both deserve a look.
  const std::size_t first = std::uniform_int_distribution<std::size_t>(0, space.parts.size() - 1)(rng);
  for (std::size_t k = 0; k < space.parts.size(); ++k) {
    const SubSpace& part = space.parts[(first + k) % space.parts.size()];
    std::uniform_int_distribution<unsigned long long> pick(0, part_size(part) - 1);
    for (int t = 0; t < max_tries; ++t) {
      Config c = decode(part, pick(rng), task);
      if (legal(c, task, limits)) return c;
    }
  }
  return std::nullopt;
}

std::vector<std::string> off_axes(const Config& c, const Space& space) {
  std::vector<std::string> out;
  const SubSpace* part = part_for(space, c.backend);
  if (!part) return {"backend"};
  for (const auto& a : part->axes)
    if (std::find(a.values.begin(), a.values.end(), get_knob(c, a.knob)) == a.values.end()) out.push_back(a.knob);
  return out;
}

std::vector<Config> neighbours(const Config& c, const Space& space, const Task& task, const Limits& limits) {
  std::vector<Config> out;
  const SubSpace* part = part_for(space, c.backend);
  if (!part) return out;
  std::set<std::string> seen{name(c)};
  for (const auto& a : part->axes) {
    for (int v : a.values) {
      if (v == get_knob(c, a.knob)) continue;
      Config n = c;
      set_knob(n, a.knob, v);
      canonicalize(n, task);
      if (legal(n, task, limits) && seen.insert(name(n)).second) out.push_back(n);
    }
  }
  return out;
}

std::optional<Config> crossover(const Config& a, const Config& b, const Space& space, const Task& task,
                                const Limits& limits, std::mt19937_64& rng, int max_tries) {
  std::bernoulli_distribution coin(0.5);
  for (int t = 0; t < max_tries; ++t) {
    Config child = coin(rng) ? a : b;  // the backend (and any knob outside the axes) from one parent
    const SubSpace* part = part_for(space, child.backend);
    if (!part) return std::nullopt;
    for (const auto& ax : part->axes) set_knob(child, ax.knob, get_knob(coin(rng) ? a : b, ax.knob));
    canonicalize(child, task);
    if (legal(child, task, limits)) return child;
  }
  return std::nullopt;
}

std::vector<Config> seeds(const Task& task, const Limits& limits) {
  std::vector<Config> all;
  const auto W = Backend::wgmma_tma;
  const auto M = Backend::mma_sync;
  const bool skinny = task.m <= 64 || task.n <= 64;
  const bool small_mn_big_k = task.m * task.n <= 512 * 512 && task.k >= 4 * std::max(task.m, task.n);

  // Hopper: 1 producer + 2 consumer warpgroups, 128x256x64, 4 stages (the cuBLAS-class tile).
  Config big = make(W, 128, 256, 64, 2, 1, 4, 4);
  big.raster = 8;
  Config big_persistent = big;  // the epilogue overlaps the producer's loads of the next tile
  big_persistent.persistent = true;
  Config big_staged = make(W, 128, 256, 64, 2, 1, 3, 3);  // 3 stages leave room for the staging tile
  big_staged.persistent = true;
  big_staged.raster = 8;
  big_staged.epilogue_store = EpilogueStore::staged;
  Config big_tma = big_staged;  // async TMA store: the consumers go on with the next tile
  big_tma.epilogue_store = EpilogueStore::tma;
  Config mid_tma = make(W, 128, 128, 64, 2, 1, 5, 5);
  mid_tma.persistent = true;
  mid_tma.raster = 8;
  mid_tma.epilogue_store = EpilogueStore::tma;
  // Ping-pong: each consumer a whole 128x128 tile, the two in turn, so that
  // one's epilogue (a fused GELU's math) runs under the other's main loop.
  // 5 stages: with 4 it measured 10% slower (4096^3 bias+GELU, H200).
  Config mid_pingpong = make(W, 128, 128, 64, 2, 1, 5, 5);
  mid_pingpong.persistent = mid_pingpong.pingpong = true;
  mid_pingpong.raster = 8;
  mid_pingpong.epilogue_store = EpilogueStore::tma;
  Config mid = make(W, 128, 128, 64, 2, 1, 5, 5);
  mid.raster = 8;
  Config mid1 = make(W, 128, 128, 64, 1, 1, 4, 4);
  Config wide = make(W, 256, 128, 64, 2, 1, 3, 3);
  Config small_m = make(W, 64, 128, 64, 1, 1, 6, 6);
  Config small_m_wide = make(W, 64, 256, 64, 1, 1, 4, 4);
  Config split = make(W, 128, 128, 64, 2, 1, 4, 4);
  split.split_k = 4;
  Config split_small = make(W, 64, 128, 64, 1, 1, 6, 6);
  split_small.split_k = 8;
  split_small.split_k_mode = SplitKMode::parallel;  // 8 splits: no serial chain
  // Skinny, memory-bound shapes (M or N <= 64 with a long other side): narrow
  // tiles and deep pipelines put more CTAs, and more bytes in flight, on the
  // operand that has to stream from DRAM.
  Config narrow = make(W, 64, 32, 64, 1, 1, 8, 8);
  Config narrow_split = make(W, 64, 64, 64, 1, 1, 8, 8);
  narrow_split.split_k = 2;
  narrow_split.split_k_mode = SplitKMode::parallel;
  // Small M*N, very long K: only split-K gives the SMs work.
  Config split_deep = make(W, 64, 64, 64, 1, 1, 6, 6);
  split_deep.split_k = 16;
  split_deep.split_k_mode = SplitKMode::parallel;
  // One or two k-tiles: nothing to pipeline, so small tiles and many CTAs.
  const bool few_k = task.k <= 128;
  Config few_k_square = make(W, 64, 64, 64, 1, 1, 2, 2);
  Config few_k_narrow = make(W, 64, 32, 64, 1, 1, 2, 2);
  // ... and C is most of their traffic: the staged epilogue's coalesced 16-byte
  // stores won most of these shapes on the H100 (docs/tile.md).
  Config few_k_square_staged = few_k_square, few_k_narrow_staged = few_k_narrow;
  few_k_square_staged.epilogue_store = few_k_narrow_staged.epilogue_store = EpilogueStore::staged;
  // Ampere-style mma.sync configs (also the fallback when K or N break TMA alignment).
  Config m_big = make(M, 128, 256, 32, 2, 4, 4, 3);
  Config m_mid = make(M, 128, 128, 32, 2, 2, 4, 3);
  Config m_small = make(M, 64, 64, 64, 2, 2, 4, 3);
  Config m_skinny = make(M, 32, 128, 64, 1, 4, 4, 3);
  Config m_split = make(M, 64, 128, 32, 2, 2, 4, 3);
  m_split.split_k = 4;

  // Decode and small M (TN): C^T on an M tile that fits M (swap-AB), the weight
  // streamed over every SM by stream-K or split-K; and stream-K for few tiles
  // on a long K. The cost model (cost_model.hpp) ranks these and many more for
  // the tuner; the seeds give the same starting points to the other searches.
  const bool swap_fits = task.layout == Layout::TN && task.m <= 256;
  const int m_fit = fitted_tile_cols(task.m, 1).empty() ? 8 : fitted_tile_cols(task.m, 1).front();
  // Up to 128 M columns: two consumers of 64 N rows; wider: one of 64 (the accumulators' limit).
  Config swap_stream = m_fit <= 128 ? make(W, 128, m_fit, 64, 2, 1, 6, 6) : make(W, 64, m_fit, 64, 1, 1, 4, 4);
  swap_stream.swap_ab = true;
  swap_stream.persistent = swap_stream.stream_k = true;
  swap_stream.epilogue_store = EpilogueStore::staged;
  Config swap_split = swap_stream;
  swap_split.persistent = swap_split.stream_k = false;
  swap_split.split_k = 4;
  swap_split.split_k_mode = SplitKMode::parallel;
  Config stream_mid = make(W, 128, 128, 64, 2, 1, 5, 5);
  stream_mid.persistent = stream_mid.stream_k = true;
  const bool few_tiles_long_k = (task.m + 127) / 128 * ((task.n + 127) / 128) < limits.sm_count && task.k >= 2048;

  // Small problems: the machine-filling (tile, split) pairs first (wave_seeds.cpp).
  constexpr long long kSmallMacs = 1LL << 29;  // 2*M*N*K <= 2^30: the CUDA-L2 grid's small bucket
  if (static_cast<long long>(task.m) * task.n * task.k <= kSmallMacs) all = wave_seeds(task, limits, kSmallWaveSeeds);
  if (swap_fits) all.insert(all.end(), {swap_stream, swap_split});
  if (few_tiles_long_k) all.push_back(stream_mid);
  if (small_mn_big_k) all.insert(all.end(), {split_deep, split, split_small, m_split});
  if (few_k) all.insert(all.end(), {few_k_square_staged, few_k_narrow_staged, few_k_square, few_k_narrow});
  if (skinny) {
    for (auto c : {narrow, narrow_split, small_m, small_m_wide, split_small, m_skinny, m_split}) all.push_back(c);
  }
  for (auto c : {big, big_persistent, big_tma, big_staged, mid_tma, mid_pingpong, mid, mid1, wide, small_m, split, m_big, m_mid, m_small, m_split}) all.push_back(c);

  std::vector<Config> out;
  std::set<std::string> seen;
  for (auto c : all) {
    canonicalize(c, task);
    if (legal(c, task, limits) && seen.insert(name(c)).second) out.push_back(c);
  }
  return out;
}

}  // namespace tessera::tile
