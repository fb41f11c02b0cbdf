#pragma once
// The proposers a search may call, each with its models and its strategy arms.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/proposer.hpp"
#include "agent/registry.hpp"

namespace tessera::search {

// An optimisation strategy and the resource it needs headroom in (the
// agent's vocabulary, agent/strategies.hpp; see mask_saturated in search/bandit.hpp).
struct StrategyArm {
  std::string name;
  std::string target;
};

// Strategies asked of an LLM proposer: agent::strategies().
std::vector<StrategyArm> llm_strategies();
// The tile proposer's mutation kinds. The tile proposer picks its mutation
// itself and ignores the strategy; the arm is still chosen and logged so a
// bandit over it is comparable with the LLM runs.
std::vector<StrategyArm> tile_strategies();
// tile_strategies() for "tile", llm_strategies() otherwise.
std::vector<StrategyArm> default_strategies(const std::string& proposer_name);

struct ProposerSlot {
  std::string name;                        // "tile", "llm", "replay", ...
  std::shared_ptr<agent::Proposer> proposer;
  std::vector<std::string> models{""};     // "" = the proposer's default model
  std::vector<StrategyArm> strategies;     // empty: default_strategies(name)
  // Proposers are not promised to be thread-safe: calls to one are serialised.
  std::shared_ptr<std::mutex> lock = std::make_shared<std::mutex>();
};

// The slot of a proposer built by agent::ProposerRegistry, with its model arms.
ProposerSlot make_slot(agent::BuiltProposer built);

}  // namespace tessera::search
