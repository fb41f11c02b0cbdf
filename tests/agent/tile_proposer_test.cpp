// The tile proposer lives in agent/, but its tests live with the tile compiler.
#include <gtest/gtest.h>

#include "agent/proposers.hpp"
#include "agent/tile_proposer.hpp"

#include "tile/space.hpp"

namespace tessera::agent {
namespace {

ProposalContext context(const std::string& shape = "2048x2048x2048") {
  ProposalContext ctx;
  ctx.task = task_from_shape(shape);
  ctx.gpu.arch = "sm_90a";
  return ctx;
}

Evaluated evaluated(const Proposal& p) {
  Evaluated e;
  e.candidate = p.candidate;
  return e;
}

TEST(TileProposer, StartsFromTheSeedsInOrder) {
  auto proposer = make_tile_proposer({});
  auto ctx = context();
  const auto seeds = tile::seeds(ctx.task, tile::Limits{});
  ASSERT_GE(seeds.size(), 2u);
  const Proposal first = proposer->propose(ctx);
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_EQ(first.candidate.name, tile::name(seeds[0]));
  EXPECT_EQ(first.proposer, "tile");
  EXPECT_EQ(first.action_kind, "tile_config");
  EXPECT_EQ(tile::from_json(nlohmann::json::parse(first.action)), seeds[0]);
  EXPECT_EQ(tile::from_json(first.candidate.meta.at("tile_config")), seeds[0]);
  EXPECT_NE(first.candidate.source.find("tessera_hgemm"), std::string::npos);
  EXPECT_EQ(first.proposer_info.at("move"), "seed");

  ctx.history.push_back(evaluated(first));
  const Proposal second = proposer->propose(ctx);
  ASSERT_TRUE(second.ok) << second.error;
  EXPECT_EQ(second.candidate.name, tile::name(seeds[1]));
}

TEST(TileProposer, MutatesTheParentByOneKnob) {
  TileProposerOptions o;
  o.random_restart_probability = 0;
  o.crossover_probability = 0;
  auto proposer = make_tile_proposer(o);
  auto ctx = context();
  const Proposal seed = proposer->propose(ctx);
  ASSERT_TRUE(seed.ok);
  ctx.parent = evaluated(seed);
  const tile::Config parent = tile::from_json(seed.candidate.meta.at("tile_config"));
  const auto space = tile::default_space(ctx.task, tile::Limits{});
  for (int i = 0; i < 10; ++i) {
    const Proposal p = proposer->propose(ctx);
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.proposer_info.at("move"), "neighbour");
    const tile::Config child = tile::from_json(p.candidate.meta.at("tile_config"));
    const auto ns = tile::neighbours(parent, space, ctx.task, tile::Limits{});
    EXPECT_TRUE(std::any_of(ns.begin(), ns.end(), [&](const tile::Config& n) { return n == child; }))
        << tile::name(child);
  }
}

TEST(TileProposer, CrossesOverWithAnInspiration) {
  TileProposerOptions o;
  o.random_restart_probability = 0;
  o.crossover_probability = 1;
  auto proposer = make_tile_proposer(o);
  auto ctx = context();
  const auto seeds = tile::seeds(ctx.task, tile::Limits{});
  Evaluated a, b;
  a.candidate.name = tile::name(seeds[0]);
  a.candidate.meta["tile_config"] = tile::to_json(seeds[0]);
  b.candidate.name = tile::name(seeds[2]);
  b.candidate.meta["tile_config"] = tile::to_json(seeds[2]);
  ctx.parent = a;
  ctx.inspirations.push_back(b);
  int crossovers = 0;
  for (int i = 0; i < 10; ++i) {
    const Proposal p = proposer->propose(ctx);
    ASSERT_TRUE(p.ok) << p.error;
    crossovers += p.proposer_info.at("move") == "crossover";
  }
  EXPECT_GT(crossovers, 0);
}

TEST(TileProposer, BadInputIsAnErrorNotAnException) {
  auto proposer = make_tile_proposer({});
  auto ctx = context();
  Evaluated parent;
  parent.candidate.meta["tile_config"] = {{"bm", "big"}};
  ctx.parent = parent;
  Proposal p;
  EXPECT_NO_THROW(p = proposer->propose(ctx));
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.error.find("bm"), std::string::npos) << p.error;

  auto bad_task = context();
  bad_task.task.m = 0;
  EXPECT_NO_THROW(p = proposer->propose(bad_task));
  EXPECT_FALSE(p.ok);
  EXPECT_FALSE(p.error.empty());
}

TEST(TileProposer, DeterministicForASeed) {
  TileProposerOptions o;
  o.seed = 42;
  o.random_restart_probability = 0.5;
  auto a = make_tile_proposer(o), b = make_tile_proposer(o);
  auto ctx = context("1000x3000x520");
  const Proposal seed = a->propose(ctx);
  b->propose(ctx);
  ASSERT_TRUE(seed.ok);
  ctx.parent = evaluated(seed);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(a->propose(ctx).candidate.name, b->propose(ctx).candidate.name);
}

TEST(TileProposer, Sm80GetsOnlyMmaSync) {
  auto proposer = make_tile_proposer({});
  auto ctx = context();
  ctx.gpu.arch = "sm_80";
  ctx.gpu.smem_per_block_optin = 163 * 1024;
  for (int i = 0; i < 4; ++i) {
    const Proposal p = proposer->propose(ctx);
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.candidate.name[0], 'm') << p.candidate.name;
    ctx.history.push_back(evaluated(p));
  }
}

}  // namespace
}  // namespace tessera::agent
