#include "agent/tile_proposer.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "agent/detail/tile_moves.hpp"
#include "agent/gpu_limits.hpp"
#include "core/error.hpp"
#include "tile/emit.hpp"
#include "tile/space.hpp"

namespace tessera::agent {

using detail::Fresh;
using detail::Move;
using detail::mates_of;

namespace {

constexpr const char* kMetaKey = "tile_config";

// Names already tried (every evaluation of the task, the recent history,
// the parent, the inspirations) so moves prefer new points.
std::set<std::string> tried_names(const ProposalContext& ctx) {
  std::set<std::string> s;
  for (const auto& m : ctx.measured) s.insert(m.name);
  for (const auto& e : ctx.history) s.insert(e.candidate.name);
  for (const auto& e : ctx.inspirations) s.insert(e.candidate.name);
  if (ctx.parent) s.insert(ctx.parent->candidate.name);
  return s;
}

constexpr int kRestartTries = 64;  // uniform draws before a restart gives up on finding an untried config

}  // namespace

TileProposer::TileProposer(TileProposerOptions options) : options_(std::move(options)), rng_(options_.seed) {}

std::optional<tile::Config> TileProposer::config_of(const Candidate& candidate) {
  if (!candidate.meta.is_object() || !candidate.meta.contains(kMetaKey)) return std::nullopt;
  return tile::from_json(candidate.meta.at(kMetaKey));
}

tile::Limits TileProposer::limits_for(const ProposalContext& ctx) const { return tile_limits(ctx.gpu, options_.arch); }

namespace {

// The moves of before guidance (options.guided = false): the seeds in order,
// then a neighbour, a crossover or a restart, each one uniform draw.
std::optional<Move> unguided_move(const TileProposerOptions& o, const ProposalContext& ctx, const tile::Space& space,
                                  const tile::Limits& limits, const std::optional<tile::Config>& parent,
                                  const Fresh& fresh, std::mt19937_64& rng) {
  std::optional<Move> move;
  const auto restart = [&]() -> std::optional<Move> {
    for (int i = 0; i < kRestartTries; ++i) {
      auto c = tile::sample(space, ctx.task, limits, rng);
      if (c && fresh(*c)) return Move{*c, "restart"};
    }
    return std::nullopt;
  };
  if (!parent) {
    for (const auto& c : tile::seeds(ctx.task, limits)) {
      if (fresh(c)) {
        move = Move{c, "seed"};
        break;
      }
    }
    if (!move) move = restart();
    return move;
  }
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double r = u(rng);
  if (r < o.random_restart_probability) move = restart();
  if (!move && r < o.random_restart_probability + o.crossover_probability) {
    const auto mates = mates_of(ctx);
    if (!mates.empty()) {
      const auto& mate = mates[std::uniform_int_distribution<std::size_t>(0, mates.size() - 1)(rng)];
      if (auto c = tile::crossover(*parent, mate, space, ctx.task, limits, rng); c && fresh(*c))
        move = Move{*c, "crossover"};
    }
  }
  if (!move) {
    auto ns = tile::neighbours(*parent, space, ctx.task, limits);
    ns.erase(std::remove_if(ns.begin(), ns.end(), [&](const tile::Config& c) { return !fresh(c); }), ns.end());
    if (!ns.empty()) move = Move{ns[std::uniform_int_distribution<std::size_t>(0, ns.size() - 1)(rng)], "neighbour"};
  }
  if (!move) move = restart();
  return move;
}

}  // namespace

Proposal TileProposer::propose(const ProposalContext& ctx) {
  Proposal p;
  p.proposer = "tile";
  p.action_kind = "tile_config";
  try {
    validate(ctx.task);
    const tile::Limits limits = limits_for(ctx);
    const tile::Space space = tile::default_space(ctx.task, limits);
    // Each call draws from its own stream: options seed, context seed and call count.
    // Seeded from the options and the context only, never from how many calls
    // came before: the same step proposes the same thing in a resumed run and
    // whatever order overlapping proposals are made in.
    rng_.seed(options_.seed ^ (ctx.seed * 0x9E3779B97F4A7C15ull));
    const auto tried = tried_names(ctx);
    const Fresh fresh = [&](const tile::Config& c) { return !tried.count(tile::name(c)); };

    std::optional<tile::Config> parent;
    if (ctx.parent) parent = config_of(ctx.parent->candidate);
    if (parent) tile::canonicalize(*parent, ctx.task);

    std::optional<Move> move;
    if (options_.guided) {
      // The model's first picks come in the prior's order, as tile tune
      // measures them: refitted to the first few measurements, the model
      // reordered picks 4-8 on 4 of 8 held-out LLM shapes and the search
      // was 0.4% behind the tune after 8 (H200, 2026-11-28, docs/search.md).
      const bool refit = detail::tile_evaluations(ctx) >= options_.model_first;
      const detail::Guide guide = detail::make_guide(ctx, limits, priors_, options_.learn, refit);
      move = detail::guided_move(options_, ctx, space, limits, parent, fresh, guide, rng_);
    } else {
      move = unguided_move(options_, ctx, space, limits, parent, fresh, rng_);
    }
    if (!move) {
      p.error = fmt::format("no untried legal tile config for {} on {}", ctx.task.id(), limits.arch);
      return p;
    }

    const auto json = tile::to_json(move->config);
    p.candidate.kind = CandidateKind::device_only;
    p.candidate.source = tile::emit(move->config, ctx.task);
    p.candidate.name = tile::name(move->config);
    p.candidate.meta[kMetaKey] = json;
    p.action = json.dump();
    p.proposer_info = {{"move", move->kind},
                       {"arch", limits.arch},
                       {"seed", options_.seed},
                       {"context_seed", ctx.seed},
                       {"parent", parent ? tile::name(*parent) : std::string()}};
    p.proposer_info.update(move->info);
    p.ok = true;
  } catch (const std::exception& e) {
    p.ok = false;
    p.error = fmt::format("tile proposer: {}", e.what());
  }
  return p;
}

std::unique_ptr<Proposer> make_tile_proposer(const TileProposerOptions& options) {
  return std::make_unique<TileProposer>(options);
}

}  // namespace tessera::agent
