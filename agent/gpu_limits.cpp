#include "agent/gpu_limits.hpp"

namespace tessera::agent {

tile::Limits tile_limits(const GpuInfo& gpu, const std::string& fallback_arch) {
  // Through tile::with_device, so that every field it takes is taken here too.
  DeviceSummary d;
  d.arch = gpu.arch.empty() ? fallback_arch : gpu.arch;
  d.sm_count = gpu.sm_count;
  d.smem_per_block_optin = gpu.smem_per_block_optin;
  d.l2_bytes = gpu.l2_bytes;
  d.peak_tflops = gpu.peak_tflops;
  d.sm_clock_mhz = gpu.sm_clock_mhz;
  return tile::with_device(tile::Limits{}, d);
}

}  // namespace tessera::agent
