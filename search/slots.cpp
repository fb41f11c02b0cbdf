#include "search/slots.hpp"

#include "agent/strategies.hpp"

namespace tessera::search {

// The LLM arms are the agent's strategies: each has a prompt template
// (agent/prompts/strategy_<name>.md) and a target resource.
std::vector<StrategyArm> llm_strategies() {
  std::vector<StrategyArm> out;
  for (const auto& s : agent::strategies()) out.push_back({s.name, s.target_resource});
  return out;
}

std::vector<StrategyArm> tile_strategies() {
  return {{"block_shape", "tensor_pipe"},    {"warp_layout", "tensor_pipe"},   {"stages", "memory_latency"},
          {"swizzle", "shared_memory"},      {"split_k", "sm_parallelism"},    {"crossover", "none"}};
}

std::vector<StrategyArm> default_strategies(const std::string& proposer_name) {
  return proposer_name == "tile" ? tile_strategies() : llm_strategies();
}

ProposerSlot make_slot(agent::BuiltProposer built) {
  ProposerSlot s;
  s.name = std::move(built.name);
  s.proposer = std::move(built.proposer);
  s.models = built.models.empty() ? std::vector<std::string>{""} : std::move(built.models);
  return s;
}

}  // namespace tessera::search
