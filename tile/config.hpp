#pragma once
// A tile configuration: every knob of the HGEMM tile compiler (docs/tile.md).
// A config is plain data; legality.hpp says whether it can run on a task and
// emit.hpp turns it into CUDA source.
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/task.hpp"

namespace tessera::tile {

enum class Backend {
  mma_sync,   // ldmatrix + mma.sync.m16n8k16 + cp.async (sm_80 and later)
  wgmma_tma,  // warp-specialised TMA producer + wgmma consumers (sm_90a only)
};
enum class LoadOrder {
  paired,     // A and B of a k-tile are issued back to back before the math
  staggered,  // A before the math, B after the first k16 step (spreads LSU traffic)
};
enum class SmemLayout {
  pad,      // rows padded by 16 bytes (mma_sync only)
  swizzle,  // XOR swizzle of 16-byte chunks (mma_sync) / TMA 64B or 128B swizzle (wgmma)
};
enum class SplitKMode {
  serial,    // splits fold into the workspace one after another (semaphore per tile); deterministic
  parallel,  // splits add with fp32 atomics at once; the last to arrive (counter) owns the total
};
enum class EpilogueStore {
  direct,  // registers -> global, 4-byte stores straight from the accumulators
  staged,  // registers -> shared -> global, coalesced 16-byte stores
  tma,     // wgmma_tma: registers -> swizzled shared tile -> TMA bulk tensor store (async)
};

struct Config {
  Backend backend = Backend::mma_sync;
  int bm = 128, bn = 128, bk = 32;  // block tile (elements)
  // mma_sync: warps along M and N (warp tile = bm/warps_m x bn/warps_n).
  // wgmma_tma: consumer warpgroups along M and N (each does bm/warps_m x bn/warps_n);
  // one more producer warpgroup is added (none with inline_producer).
  int warps_m = 2, warps_n = 2;
  int stages = 3;    // shared-memory pipeline depth
  int prefetch = 2;  // k-tiles in flight ahead of the math (mma_sync: 1..stages-1; wgmma: = stages)
  LoadOrder load_order = LoadOrder::paired;
  // mma_sync: ldmatrix fragments of k-step i+1 loaded while k-step i computes.
  // wgmma_tma: one wgmma group kept in flight while the next stage is issued.
  bool reg_double_buffer = true;
  SmemLayout smem_layout = SmemLayout::swizzle;
  EpilogueStore epilogue_store = EpilogueStore::direct;
  int raster = 0;   // CTA rasterisation: 0 = row-major tiles, else groups of `raster` tile rows
  int split_k = 1;  // split-K through an fp32 workspace (grid.z = split_k)
  SplitKMode split_k_mode = SplitKMode::serial;
  bool persistent = false;  // one CTA per SM looping over tiles
  // Persistent only: stream-K. The tile grid is cut into lines along its
  // longer side, each line's k-iterations shared out evenly among its CTAs
  // (schedule.inc), and the CTAs that share a tile add their partial sums in
  // an fp32 workspace; the peer holding the tile's k = 0 part waits for the
  // others and writes C. Schedule letter 's'.
  bool stream_k = false;
  // wgmma_tma, persistent, two consumer warpgroups: ping-pong. Each consumer
  // computes whole bm x bn tiles, the two taking the CTA's tiles in turn, and
  // their main loops alternate (an order barrier): one runs its epilogue while
  // the other keeps the tensor cores busy. Schedule letter 'o' in place of 'p'.
  bool pingpong = false;
  // wgmma_tma, TN: compute C^T = B A^T, so that N feeds the MMA's M (64-row
  // granules) and M feeds its N (8-column granules). bm x bn is then the tile
  // of C^T: bm columns of C by bn rows of C. Small or odd M wastes at most 7
  // rows of work per tile instead of up to 63 (the padding goes to a multiple
  // of 8, not of the tile). Name suffix 'swapab' before the epilogue.
  bool swap_ab = false;
  // wgmma_tma, one consumer warpgroup: no producer warpgroup; thread 0 of the
  // consumer issues the TMA loads (all of them up front when they fit in the
  // stages, else each as a stage is released). Fewer threads to launch; the
  // name shows it as schedule 'i' in place of 't'.
  bool inline_producer = false;
  int cluster_m = 1, cluster_n = 1;  // wgmma_tma: CTA cluster; A/B multicast across it
  Epilogue epilogue = Epilogue::none;  // must match the task's epilogue

  int threads() const;  // threads per block
  bool operator==(const Config&) const = default;
};

std::string to_string(Backend b);
std::string to_string(LoadOrder o);
std::string to_string(SmemLayout s);
std::string to_string(EpilogueStore s);
std::string to_string(SplitKMode m);

// Stable short name, e.g. "w128x256x64_g2x1_s4p4_pa_d1_sw_ed_r8_k1s_t_c1x1_none".
// The schedule letter after the split-K field is t (tiled), p (persistent),
// s (persistent stream-K), o (persistent ping-pong) or i (tiled, inline producer); swap-AB configs carry
// "swapab_" before the epilogue.
// Every field appears, so two different configs never share a name.
std::string name(const Config& c);
// Parses a name back (bad_input on anything malformed).
Config parse_name(const std::string& name);

nlohmann::json to_json(const Config& c);
// Strict: unknown keys, wrong types and out-of-range enum values are bad_input
// errors. Missing keys keep the defaults of `base`, so a partial object is a
// mutation of `base`.
Config from_json(const nlohmann::json& j, const Config& base = Config{});
// A config given on a command line: a JSON object or a name.
Config parse_config(const std::string& json_or_name);

}  // namespace tessera::tile
