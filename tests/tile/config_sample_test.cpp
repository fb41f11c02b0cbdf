// The sample of tile configs the GPU tests evaluate (config_sample.hpp): at
// least the budget, every config legal on its task, every backend and every
// value of every knob present, both layouts and every epilogue, and the same
// sample on every run. No GPU needed: this is what makes the GPU tests'
// "zero false positives over every backend and option" claim hold.
#include <gtest/gtest.h>

#include <set>

#include <fmt/format.h>

#include "tests/tile/config_sample.hpp"

namespace tessera::tile {
namespace {

TEST(TileSample, CoversEveryBackendKnobValueLayoutAndEpilogue) {
  const Limits limits;  // sm_90a: both backends
  const auto sampled = testing::sample_configs(limits, testing::kDefaultSamples);
  EXPECT_GE(sampled.size(), std::size_t(testing::kDefaultSamples));
  std::set<std::string> layouts, epilogues;
  std::set<Backend> backends;
  for (const auto& s : sampled) {
    const auto legal = legality(s.config, s.task, limits);
    EXPECT_TRUE(legal.ok) << name(s.config) << " on " << s.task.id() << ": " << legal.reason;
    layouts.insert(to_string(s.task.layout));
    epilogues.insert(to_string(s.task.epilogue));
    backends.insert(s.config.backend);
  }
  EXPECT_EQ(backends.size(), 2u);
  EXPECT_EQ(layouts.size(), 2u);
  EXPECT_EQ(epilogues.size(), 4u);
  const auto missing = testing::uncovered(sampled, limits);
  EXPECT_TRUE(missing.empty()) << fmt::format("{}", fmt::join(missing, ", "));
}

TEST(TileSample, SmallBudgetStillCoversEveryKnobValue) {
  const Limits limits;
  const auto sampled = testing::sample_configs(limits, 16);
  const auto missing = testing::uncovered(sampled, limits);
  EXPECT_TRUE(missing.empty()) << fmt::format("{}", fmt::join(missing, ", "));
}

TEST(TileSample, SameSampleEveryRun) {
  const Limits limits;
  const auto a = testing::sample_configs(limits, 40), b = testing::sample_configs(limits, 40);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(name(a[i].config), name(b[i].config));
    EXPECT_EQ(a[i].task.id(), b[i].task.id());
  }
}

TEST(TileSample, OnlyMmaSyncBeforeHopper) {
  Limits limits;
  limits.arch = "sm_80";
  const auto sampled = testing::sample_configs(limits, 40);
  for (const auto& s : sampled) EXPECT_EQ(s.config.backend, Backend::mma_sync) << name(s.config);
  const auto missing = testing::uncovered(sampled, limits);
  EXPECT_TRUE(missing.empty()) << fmt::format("{}", fmt::join(missing, ", "));
}

}  // namespace
}  // namespace tessera::tile
