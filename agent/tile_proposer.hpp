#pragma once
// The tile proposer: structured moves over the tile compiler's search space
// (tile/space.hpp). No network, deterministic for a given seed.
//   no parent tile config -> the next untried seed config (then random samples)
//   with a parent          -> one-knob neighbour, or crossover with an
//                             inspiration, or a random restart
// The candidate carries meta["tile_config"], so the next proposal can build on it.
#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <string>

#include "agent/proposer.hpp"
#include "agent/proposers.hpp"
#include "tile/config.hpp"
#include "tile/legality.hpp"

namespace tessera::agent {

class TileProposer final : public Proposer {
public:
  explicit TileProposer(TileProposerOptions options);
  std::string name() const override { return "tile"; }
  Proposal propose(const ProposalContext& context) override;

  // The tile config a candidate carries in meta["tile_config"] (a full or
  // partial config object); nullopt when absent. Throws bad_input when malformed.
  static std::optional<tile::Config> config_of(const Candidate& candidate);

private:
  tile::Limits limits_for(const ProposalContext& context) const;

  TileProposerOptions options_;
  std::mt19937_64 rng_;
};

}  // namespace tessera::agent
