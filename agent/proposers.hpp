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
  // Model-guided moves (tile_proposer.hpp): each move draws a pool of legal
  // configs and proposes the one the cost model predicts fastest. false: the
  // moves of before (the seeds in order, then one uniform pick per move).
  bool guided = true;
  double explore_probability = 0.1;     // a move proposes a random member of its pool instead: counted exploration
  double model_move_probability = 0.2;  // a move takes the model's next untried picks as its pool
  int model_first = 8;                  // a task's first configs are the model's top picks, as tile tune's are
  // A config predicted slower than this multiple of the incumbent's predicted
  // time is not proposed, except as exploration. 1.15: over the H200's kept
  // rows, out of fold, configs predicted 1.15-1.5x a measured incumbent beat it
  // 12 times in 4,857, those within 1.15x 842 in 14,337 (docs/search.md,
  // scripts/incumbent_bands.py); was 1.5.
  double far_slower = 1.15;
  // The learned cost model: the one stored for the GPU's kind (or another
  // kind's, transferred), updated from this task's measurements at every move.
  bool learn = true;
};
std::unique_ptr<Proposer> make_tile_proposer(const TileProposerOptions& options);

std::unique_ptr<Proposer> make_replay_proposer(const std::filesystem::path& trajectories_jsonl);

}  // namespace tessera::agent
