// Islands, selection, elitism, migration, and the MAP-Elites archive.
#include <gtest/gtest.h>

#include <map>

#include "core/error.hpp"
#include "search/archive.hpp"
#include "search/population.hpp"

namespace tessera::search {
namespace {

IndividualPtr make(long long id, double median, int island = 0, double spread = 0.01, std::string cell = "S") {
  auto i = std::make_shared<Individual>();
  i->id = id;
  i->island = island;
  i->result.status = Status::ok;
  i->result.cold.median_us = median;
  i->result.cold.rel_spread = spread;
  i->result.best_baseline_us = 100;
  i->result.speedup = 100 / median;
  i->descriptor.tile_class = cell;
  return i;
}

TEST(Population, FillsThenReplacesTheWorstOnlyBeyondNoise) {
  Population pop(1, 3);
  const AcceptanceRule rule;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(pop.insert(make(i, 100 + 10 * i), rule).inserted);
  EXPECT_EQ(pop.worst_of(0)->id, 2);
  // 1% faster than the worst (120) is inside a 2% spread: kept out, though a naive rule would take it.
  const auto near = pop.insert(make(10, 119, 0, 0.02), rule);
  EXPECT_FALSE(near.inserted);
  EXPECT_TRUE(near.naive_would_insert);
  EXPECT_EQ(near.verdict, Verdict::borderline);
  const auto far = pop.insert(make(11, 90), rule);
  EXPECT_TRUE(far.inserted);
  EXPECT_EQ(far.replaced, 2);
  EXPECT_EQ(pop.best_of(0)->id, 11);
  EXPECT_EQ(pop.size(), 3u);
}

TEST(Population, ElitismNeverDropsTheBest) {
  Population pop(1, 2);
  const AcceptanceRule rule;
  pop.insert(make(0, 50), rule);
  pop.insert(make(1, 200), rule);
  for (int i = 2; i < 20; ++i) pop.insert(make(i, 150 - i), rule);
  EXPECT_EQ(pop.best_of(0)->id, 0);
}

TEST(Population, TournamentPrefersFitterAndExplorationIsUniform) {
  Population pop(1, 8);
  const AcceptanceRule rule;
  for (int i = 0; i < 8; ++i) pop.insert(make(i, 100 + i), rule);
  std::map<long long, int> tour, explore;
  for (int s = 0; s < 2000; ++s) {
    Rng r = Rng::derive(1, s, "t");
    ++tour[pop.select(0, SelectionRule::tournament, 3, 0.0, r)->id];
    Rng e = Rng::derive(1, s, "e");
    ++explore[pop.select(0, SelectionRule::tournament, 3, 1.0, e)->id];
  }
  EXPECT_GT(tour[0], tour[7] * 5);  // best wins far more often than the worst
  EXPECT_GT(explore[7], 150);       // uniform: each about 250
  EXPECT_LT(explore[0], 350);
  // A tournament as large as the island almost always returns the best.
  Rng r(5);
  int best = 0;
  for (int s = 0; s < 100; ++s) best += pop.select(0, SelectionRule::tournament, 64, 0.0, r)->id == 0;
  EXPECT_GE(best, 99);
}

TEST(Population, FitnessWeightedFollowsFitness) {
  Population pop(1, 4);
  const AcceptanceRule rule;
  pop.insert(make(0, 25), rule);   // speedup 4
  pop.insert(make(1, 100), rule);  // speedup 1
  std::map<long long, int> n;
  Rng r(9);
  for (int s = 0; s < 5000; ++s) ++n[pop.select(0, SelectionRule::fitness_weighted, 0, 0.0, r)->id];
  EXPECT_NEAR(double(n[0]) / 5000, 0.8, 0.03);
}

TEST(Population, MigrationCopiesEachIslandsBestAroundTheRing) {
  Population pop(3, 4);
  const AcceptanceRule rule;
  pop.insert(make(0, 100, 0), rule);
  pop.insert(make(1, 80, 1), rule);
  pop.insert(make(2, 90, 1), rule);
  const auto moved = pop.migrate(rule);
  EXPECT_EQ(moved, (std::vector<long long>{0, 1}));
  EXPECT_EQ(pop.best_of(1)->id, 1);
  EXPECT_EQ(pop.best_of(2)->id, 1);
  EXPECT_EQ(pop.island(1).size(), 3u);
  EXPECT_EQ(pop.ranked().size(), 3u);  // unique ids
  const auto insp = pop.inspirations(1, 1, 3);
  for (const auto& i : insp) EXPECT_NE(i->id, 1);
  EXPECT_FALSE(insp.empty());
}

TEST(Archive, OneElitePerCellReplacedOnlyBeyondNoise) {
  Archive a;
  const AcceptanceRule rule;
  EXPECT_TRUE(a.insert(make(0, 100, 0, 0.02, "S"), rule).new_cell);
  EXPECT_TRUE(a.insert(make(1, 50, 0, 0.02, "L"), rule).new_cell);
  const auto close = a.insert(make(2, 99.5, 0, 0.02, "S"), rule);
  EXPECT_FALSE(close.inserted);
  EXPECT_TRUE(close.naive_would_insert);
  const auto clear = a.insert(make(3, 80, 0, 0.02, "S"), rule);
  EXPECT_TRUE(clear.inserted);
  EXPECT_EQ(clear.replaced, 0);
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(a.elite(make(9, 1, 0, 0, "S")->descriptor.key())->id, 3);
  Rng r(1);
  EXPECT_NE(a.random_elite(r), nullptr);
}

TEST(Population, RejectsUnknownSelectionRule) {
  EXPECT_THROW(parse_selection_rule("roulette"), Error);
  EXPECT_EQ(parse_selection_rule("fitness-weighted"), SelectionRule::fitness_weighted);
}

}  // namespace
}  // namespace tessera::search
