#include "agent/tile_proposer.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "tile/emit.hpp"
#include "tile/space.hpp"

namespace tessera::agent {

namespace {

constexpr const char* kMetaKey = "tile_config";

// Names already tried (history, parent, inspirations) so moves prefer new points.
std::set<std::string> tried_names(const ProposalContext& ctx) {
  std::set<std::string> s;
  for (const auto& e : ctx.history) s.insert(e.candidate.name);
  for (const auto& e : ctx.inspirations) s.insert(e.candidate.name);
  if (ctx.parent) s.insert(ctx.parent->candidate.name);
  return s;
}

struct Move {
  tile::Config config;
  std::string kind;  // seed | neighbour | crossover | restart
};

}  // namespace

TileProposer::TileProposer(TileProposerOptions options) : options_(std::move(options)), rng_(options_.seed) {}

std::optional<tile::Config> TileProposer::config_of(const Candidate& candidate) {
  if (!candidate.meta.is_object() || !candidate.meta.contains(kMetaKey)) return std::nullopt;
  return tile::from_json(candidate.meta.at(kMetaKey));
}

tile::Limits TileProposer::limits_for(const ProposalContext& ctx) const {
  tile::Limits l;
  l.arch = !ctx.gpu.arch.empty() ? ctx.gpu.arch : options_.arch;
  if (ctx.gpu.smem_per_block_optin > 0) l.smem_optin_bytes = ctx.gpu.smem_per_block_optin;
  if (ctx.gpu.sm_count > 0) l.sm_count = ctx.gpu.sm_count;
  return l;
}

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
    const auto fresh = [&](const tile::Config& c) { return !tried.count(tile::name(c)); };

    std::optional<tile::Config> parent;
    if (ctx.parent) parent = config_of(ctx.parent->candidate);
    if (parent) tile::canonicalize(*parent, ctx.task);

    std::optional<Move> move;
    const auto restart = [&]() -> std::optional<Move> {
      for (int i = 0; i < 64; ++i) {
        auto c = tile::sample(space, ctx.task, limits, rng_);
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
    } else {
      std::uniform_real_distribution<double> u(0.0, 1.0);
      const double r = u(rng_);
      if (r < options_.random_restart_probability) move = restart();
      if (!move && r < options_.random_restart_probability + options_.crossover_probability) {
        std::vector<tile::Config> mates;
        for (const auto& e : ctx.inspirations) {
          if (auto c = config_of(e.candidate)) mates.push_back(*c);
        }
        if (!mates.empty()) {
          const auto& mate = mates[std::uniform_int_distribution<std::size_t>(0, mates.size() - 1)(rng_)];
          if (auto c = tile::crossover(*parent, mate, space, ctx.task, limits, rng_); c && fresh(*c))
            move = Move{*c, "crossover"};
        }
      }
      if (!move) {
        auto ns = tile::neighbours(*parent, space, ctx.task, limits);
        ns.erase(std::remove_if(ns.begin(), ns.end(), [&](const tile::Config& c) { return !fresh(c); }), ns.end());
        if (!ns.empty()) move = Move{ns[std::uniform_int_distribution<std::size_t>(0, ns.size() - 1)(rng_)], "neighbour"};
      }
      if (!move) move = restart();
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
