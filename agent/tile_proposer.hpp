#pragma once
// The tile proposer: structured moves over the tile compiler's search space
// (tile/space.hpp), ranked by the cost model before anything is measured
// (the search-space design of Ansor and MetaSchedule). No network,
// deterministic for a given seed and context.
//   a task's first options.model_first configs -> the cost model's top picks,
//                             in its order (what tile tune measures first),
//                             never an exploration
//   then, with a parent    -> a move draws a pool: the parent's one-knob
//                             neighbours with the incumbent's (those only the
//                             incumbent's: a "refine" move, as the tune's),
//                             crossovers with the inspirations,
//                             uniform restarts, or the model's next picks;
//                             the pool is ranked by the model and its fastest
//                             predicted config proposed. With probability
//                             explore_probability a random member instead
//                             (counted: proposer_info.explore). A pick
//                             predicted far slower than the incumbent gives
//                             way to the model's next pick (proposer_info.far_slower).
// The model is the analytical one corrected by the learned model of the
// GPU's kind (tile/learned_model.hpp), refitted at every move after the
// model's first picks to what this task measured so far (options.learn). options.guided = false gives the
// moves of before: the seeds, then one uniform neighbour, crossover or restart.
// The candidate carries meta["tile_config"], so the next proposal can build on it.
#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <string>

#include "agent/detail/tile_guide.hpp"
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
  detail::PriorCache priors_;
};

}  // namespace tessera::agent
