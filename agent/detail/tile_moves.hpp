#pragma once
// The tile proposer's moves (tile_proposer.hpp): the pools a guided move
// draws from and the choice among them.
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/detail/tile_guide.hpp"
#include "agent/proposer.hpp"
#include "agent/proposers.hpp"
#include "tile/config.hpp"
#include "tile/legality.hpp"
#include "tile/space.hpp"

namespace tessera::agent::detail {

inline constexpr std::size_t kRankingDepth = 512;  // the model's order, as deep as a move looks into it
inline constexpr std::size_t kModelPool = 16;      // a model move's pool: its next untried picks
inline constexpr int kRestartPool = 32;            // a restart's pool: uniform draws from the space
inline constexpr int kCrossoverDraws = 8;          // crossovers drawn per inspiration

struct Move {
  tile::Config config;
  std::string kind;  // model | neighbour | refine | crossover | restart (guided); seed | ... (unguided)
  nlohmann::json info = nlohmann::json::object();
};

using Fresh = std::function<bool(const tile::Config&)>;

// The inspirations' tile configs (crossover mates).
std::vector<tile::Config> mates_of(const ProposalContext& ctx);

// The task's best timed tile config so far, if any.
std::optional<tile::Config> incumbent_of(const ProposalContext& ctx);

// How many of the task's evaluations were tile configs.
int tile_evaluations(const ProposalContext& ctx);

// A guided move: the pool its kind draws (see tile_proposer.hpp), ranked by
// the guide; the fastest predicted is proposed, or with probability
// options.explore_probability a random member (info.explore). A pick
// predicted slower than far_slower x the incumbent gives way to the model's
// next pick. nullopt when nothing untried is legal.
std::optional<Move> guided_move(const TileProposerOptions& options, const ProposalContext& ctx,
                                const tile::Space& space, const tile::Limits& limits,
                                const std::optional<tile::Config>& parent, const Fresh& fresh, const Guide& guide,
                                std::mt19937_64& rng);

}  // namespace tessera::agent::detail
