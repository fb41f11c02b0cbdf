#include "agent/detail/tile_moves.hpp"

#include <algorithm>
#include <numeric>
#include <set>

namespace tessera::agent::detail {

namespace {

std::optional<tile::Config> tile_config(const nlohmann::json& meta) {
  if (!meta.is_object() || !meta.contains("tile_config")) return std::nullopt;
  try {
    return tile::from_json(meta.at("tile_config"));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Untried configs, each once, in the order given.
std::vector<tile::Config> untried(const std::vector<tile::Config>& in, const Fresh& fresh) {
  std::vector<tile::Config> out;
  std::set<std::string> seen;
  for (const auto& c : in)
    if (fresh(c) && seen.insert(tile::name(c)).second) out.push_back(c);
  return out;
}

struct Pool {
  std::string kind;
  std::vector<tile::Config> configs;
  // A neighbour pool's members that are one-knob neighbours of the incumbent
  // and not of the parent: proposed as a "refine" move.
  std::set<std::string> refine = {};
};

// The parent's untried one-knob neighbours and, when the task's fastest
// config so far is another, the incumbent's too. Evolution hands the move
// parents by its own rule (a tournament, a bandit arm), and at 256x2048x2048
// and 8192x8192x1024 the tune's winner was a raster or cluster neighbour of
// the search's best that its neighbour moves, from other parents, never
// reached (H200, 2026-11-28, docs/search.md). The model ranks both together.
Pool neighbour_pool(const ProposalContext& ctx, const tile::Space& space, const tile::Limits& limits,
                    const tile::Config& parent, std::optional<tile::Config> inc, const Fresh& fresh) {
  Pool pool{"neighbour", untried(tile::neighbours(parent, space, ctx.task, limits), fresh)};
  if (inc) tile::canonicalize(*inc, ctx.task);
  if (!inc || tile::name(*inc) == tile::name(parent)) return pool;
  std::set<std::string> have;
  for (const auto& c : pool.configs) have.insert(tile::name(c));
  for (const auto& c : untried(tile::neighbours(*inc, space, ctx.task, limits), fresh))
    if (have.insert(tile::name(c)).second) {
      pool.refine.insert(tile::name(c));
      pool.configs.push_back(c);
    }
  return pool;
}

// Which pool a move draws, by the options' probabilities (neighbours the rest).
Pool draw_pool(const TileProposerOptions& o, const ProposalContext& ctx, const tile::Space& space,
               const tile::Limits& limits, const tile::Config& parent, const std::optional<tile::Config>& incumbent,
               const std::vector<tile::Config>& model_next, const Fresh& fresh, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double r = u(rng);
  const auto mates = mates_of(ctx);
  if (r < o.random_restart_probability) {
    std::vector<tile::Config> draws;
    for (int i = 0; i < kRestartPool; ++i)
      if (auto c = tile::sample(space, ctx.task, limits, rng)) draws.push_back(*c);
    return {"restart", untried(draws, fresh)};
  }
  if (r < o.random_restart_probability + o.crossover_probability && !mates.empty()) {
    std::vector<tile::Config> children;
    for (const auto& mate : mates)
      for (int i = 0; i < kCrossoverDraws; ++i)
        if (auto c = tile::crossover(parent, mate, space, ctx.task, limits, rng)) children.push_back(*c);
    return {"crossover", untried(children, fresh)};
  }
  if (r < o.random_restart_probability + o.crossover_probability + o.model_move_probability)
    return {"model", model_next};
  return neighbour_pool(ctx, space, limits, parent, incumbent, fresh);
}

}  // namespace

std::vector<tile::Config> mates_of(const ProposalContext& ctx) {
  std::vector<tile::Config> mates;
  for (const auto& e : ctx.inspirations)
    if (auto c = tile_config(e.candidate.meta)) mates.push_back(*c);
  return mates;
}

std::optional<tile::Config> incumbent_of(const ProposalContext& ctx) {
  std::optional<tile::Config> best;
  double best_us = 0;
  for (const auto& m : ctx.measured) {
    if (m.cold_us <= 0 || (best && m.cold_us >= best_us)) continue;
    if (auto c = tile_config(m.meta)) {
      best = *c;
      best_us = m.cold_us;
    }
  }
  return best;
}

int tile_evaluations(const ProposalContext& ctx) {
  return int(std::count_if(ctx.measured.begin(), ctx.measured.end(),
                           [](const Measured& m) { return tile_config(m.meta).has_value(); }));
}

std::optional<Move> guided_move(const TileProposerOptions& o, const ProposalContext& ctx, const tile::Space& space,
                                const tile::Limits& limits, const std::optional<tile::Config>& parent,
                                const Fresh& fresh, const Guide& guide, std::mt19937_64& rng) {
  std::vector<tile::Config> model_next;
  for (const auto& r : tile::rank_configs(ctx.task, limits, kRankingDepth, guide.model)) {
    if (model_next.size() >= kModelPool) break;
    if (fresh(r.config)) model_next.push_back(r.config);
  }
  const auto incumbent = incumbent_of(ctx);  // the neighbour pool and the far-slower check
  // A task's first configs are the model's top picks, in its order (as a tune's are).
  Pool pool;
  const bool model_first = !parent || tile_evaluations(ctx) < o.model_first;
  if (model_first) pool = {"model", model_next};
  else pool = draw_pool(o, ctx, space, limits, *parent, incumbent, model_next, fresh, rng);
  if (pool.configs.empty() && pool.kind != "model") pool = {"model", model_next};
  if (pool.configs.empty()) {  // the model's list is exhausted: the space at large
    std::vector<tile::Config> draws;
    for (int i = 0; i < kRestartPool; ++i)
      if (auto c = tile::sample(space, ctx.task, limits, rng)) draws.push_back(*c);
    pool = {"restart", untried(draws, fresh)};
  }
  if (pool.configs.empty()) return std::nullopt;

  const std::vector<double> predicted = guide.predict(pool.configs, ctx.task, limits);
  std::vector<std::size_t> order(pool.configs.size());
  std::iota(order.begin(), order.end(), 0);
  // A model pool keeps the model's diversified order; the others go fastest predicted first.
  if (pool.kind != "model")
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return predicted[a] < predicted[b]; });
  std::uniform_real_distribution<double> u(0.0, 1.0);
  // Never while the model's top picks are measured: at a budget of 8 a random
  // member there cost what tile tune, which measures those picks, does not
  // (H200, 48 held-out grid shapes: 3 of 8 explored, 0.5% behind the tune).
  const bool explore = u(rng) < o.explore_probability && !model_first;
  std::size_t rank = explore ? std::uniform_int_distribution<std::size_t>(0, order.size() - 1)(rng) : 0;
  Move move{pool.configs[order[rank]], pool.kind};
  if (pool.refine.count(tile::name(move.config))) move.kind = "refine";
  double chosen_us = predicted[order[rank]];

  nlohmann::json info = {{"guided", true}, {"model", guide.describe()}, {"pool", pool.configs.size()},
                         {"explore", explore}};
  if (!pool.refine.empty()) info["pool_refine"] = pool.refine.size();  // of the pool, the incumbent's neighbours
  if (incumbent && !explore) {
    const double inc_us = guide.predict({*incumbent}, ctx.task, limits).front();
    info["incumbent_predicted_us"] = inc_us;
    // No wasted steps: a move whose best is predicted far slower than the
    // incumbent gives way to the model's next pick, when that is faster.
    if (chosen_us > o.far_slower * inc_us && pool.kind != "model" && !model_next.empty()) {
      const double next_us = guide.predict({model_next.front()}, ctx.task, limits).front();
      if (next_us < chosen_us) {
        info["far_slower"] = {{"kind", move.kind}, {"predicted_us", chosen_us}};
        move = Move{model_next.front(), "model"};
        chosen_us = next_us;
        rank = 0;
      }
    }
  }
  info["pool_rank"] = rank;
  info["predicted_us"] = chosen_us;
  move.info = std::move(info);
  return move;
}

}  // namespace tessera::agent::detail
