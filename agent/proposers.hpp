#pragma once
// Factories for the built-in proposers. Each lives in its own file:
//   tile_proposer.cpp   (mutates tile-compiler configs; no network; the default)
//   replay_proposer.cpp (serves the actions recorded in a trajectories.jsonl)
//   llm_proposer.cpp    (LLM endpoints; see agent/llm_proposer.hpp for its options)
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "agent/proposer.hpp"

namespace tessera::agent {

struct TileProposerOptions {
  std::uint64_t seed = 0;
  double random_restart_probability = 0.1;
  double crossover_probability = 0.2;
  std::string arch = "sm_90a";
};
std::unique_ptr<Proposer> make_tile_proposer(const TileProposerOptions& options);

std::unique_ptr<Proposer> make_replay_proposer(const std::filesystem::path& trajectories_jsonl);

}  // namespace tessera::agent
