#include "search/slots.hpp"

namespace tessera::search {

std::vector<StrategyArm> llm_strategies() {
  return {{"tiling", "tensor"},        {"tensor_core", "tensor"},      {"pipelining", "memory"},
          {"smem_layout", "memory"},   {"occupancy", "latency"},       {"epilogue_and_launch", "latency"},
          {"rewrite", "none"}};
}

std::vector<StrategyArm> tile_strategies() {
  return {{"block_shape", "tensor"}, {"warp_layout", "tensor"}, {"stages", "memory"},
          {"swizzle", "memory"},     {"split_k", "latency"},    {"crossover", "none"}};
}

std::vector<StrategyArm> default_strategies(const std::string& proposer_name) {
  return proposer_name == "tile" ? tile_strategies() : llm_strategies();
}

}  // namespace tessera::search
