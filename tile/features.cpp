#include "tile/features.hpp"

#include "tile/legality.hpp"

#include <algorithm>
#include <cmath>

namespace tessera::tile {

namespace {

float lg(double v) { return float(std::log2(std::max(v, 1e-9))); }
float b(bool v) { return v ? 1.0f : 0.0f; }

float bound_code(const std::string& bound) {
  if (bound == "compute") return 0;
  if (bound == "memory") return 1;
  return 2;  // latency
}

}  // namespace

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> names = {
      // the shape
      "log2_m", "log2_n", "log2_k", "layout_nn", "epilogue", "log2_flops",
      // the config
      "backend_wgmma", "bm", "bn", "bk", "warps_m", "warps_n", "stages", "prefetch", "reg_double_buffer",
      "smem_layout", "epilogue_store", "raster", "split_k", "split_k_parallel", "persistent", "stream_k",
      "pingpong", "swap_ab", "inline_producer", "cluster_m", "cluster_n", "load_order",
      // the device
      "sm_count", "log2_peak_tflops",
      // the analytical model
      "log2_pred_us", "tiles_per_sm", "ctas_per_sm", "waves", "tail_efficiency", "pad_efficiency",
      "log2_bytes_per_flop", "log2_compute_us", "log2_memory_us", "log2_overhead_us", "bound",
      "compute_share", "memory_share", "overhead_share",
      // what the kernel does per CTA, beside the model's terms: the k-loop each
      // CTA runs against its pipeline depth, the last tile's fill in each
      // dimension (what padding costs where the shape is just past a tile),
      // the launch's size and how full its last wave is, and the CTA's
      // threads and shared memory (occupancy)
      "log2_k_iterations", "m_tail_fill", "n_tail_fill", "log2_tiles", "last_wave_fill", "threads",
      "smem_kib"};
  return names;
}

std::vector<float> features(const Config& c, const Task& t, const Limits& l, const Prediction& p) {
  const double parts = std::max(1e-9, p.compute_us + p.memory_us + p.overhead_us);
  std::vector<float> f = {
      lg(double(t.m)), lg(double(t.n)), lg(double(t.k)), b(t.layout == Layout::NN), float(int(t.epilogue)),
      lg(t.flops()),
      b(c.backend == Backend::wgmma_tma), float(c.bm), float(c.bn), float(c.bk), float(c.warps_m), float(c.warps_n),
      float(c.stages), float(c.prefetch), b(c.reg_double_buffer), float(int(c.smem_layout)),
      float(int(c.epilogue_store)), float(c.raster), float(c.split_k), b(c.split_k_mode == SplitKMode::parallel),
      b(c.persistent), b(c.stream_k), b(c.pingpong), b(c.swap_ab), b(c.inline_producer), float(c.cluster_m),
      float(c.cluster_n), float(int(c.load_order)),
      float(l.sm_count), lg(l.peak_tflops),
      lg(p.time_us), float(double(p.tiles) / std::max(1, l.sm_count)), float(p.ctas_per_sm), float(p.waves),
      float(p.tail_efficiency), float(p.pad_efficiency), lg(p.bytes_per_flop), lg(p.compute_us), lg(p.memory_us),
      lg(p.overhead_us), bound_code(p.bound),
      float(p.compute_us / parts), float(p.memory_us / parts), float(p.overhead_us / parts)};
  const double k_iterations = double(k_tiles(c, t)) / std::max(1, c.split_k);
  const auto tail_fill = [](long long extent, int tile) {
    if (tile <= 0) return 1.0f;
    const long long r = extent % tile;
    return r == 0 ? 1.0f : float(double(r) / tile);
  };
  const double resident = double(std::max(1, l.sm_count) * std::max(1, p.ctas_per_sm));
  const double waves = double(std::max(1, p.ctas)) / resident;
  const double last = waves - std::floor(waves);
  f.insert(f.end(), {lg(k_iterations), tail_fill(mma_rows(c, t), c.bm), tail_fill(mma_cols(c, t), c.bn),
                     lg(double(std::max(1, p.tiles))), float(last == 0 ? 1.0 : last), float(c.threads()),
                     float(dynamic_smem_bytes(c, t) / 1024.0)});
  return f;
}

}  // namespace tessera::tile
