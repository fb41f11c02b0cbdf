#pragma once
// The tile compiler's limits for the GPU a proposal is for. A proposer that
// ranks tile configs (the tile proposer, the prompt's model picks) must see
// the device as `tile tune` and `bench suite --kernels tile:N` do
// (tile::with_device): the SM count and clock (and off Hopper the measured
// peak) move the cost model's predictions, so limits built from fewer fields
// gave the search another model order than the tune's on the same GPU.
#include <string>

#include "agent/proposer.hpp"
#include "tile/legality.hpp"

namespace tessera::agent {

// `fallback_arch` stands where the GPU's architecture is unknown.
tile::Limits tile_limits(const GpuInfo& gpu, const std::string& fallback_arch = "sm_90a");

}  // namespace tessera::agent
