// What a step's observation holds, within max_observation_chars: never the
// tile compiler's kernel, the compiler's errors rather than its informational
// output, the diff's kernel only when it fits; and the same info keys on
// every step.
#include <gtest/gtest.h>

#include <set>

#include "env/env.hpp"
#include "tests/env/fake_evaluator.hpp"

namespace tessera::env {
namespace {

using testing::fake_kernel;
using testing::FakeLog;
using testing::scripted_pool;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::unique_ptr<Environment> started(EnvConfig c = {}) {
  auto env = std::make_unique<Environment>(std::move(c), scripted_pool(std::make_shared<FakeLog>()));
  env->reset(task_from_shape("1024x1024x1024"), 1);
  return env;
}

std::set<std::string> keys(const nlohmann::json& info) {
  std::set<std::string> out;
  for (const auto& [k, _] : info.items()) out.insert(k);
  return out;
}

TEST(ObservationBudget, ATileConfigsKernelIsNeverSentBack) {
  auto env = started();
  const auto s = env->step("```json\n{\"bm\": 128, \"bn\": 128}\n```");
  ASSERT_EQ(s.info.at("action_kind"), "tile_config") << s.info.dump();
  const auto& o = s.observation;
  EXPECT_LE(o.size(), kDefaultMaxObservationChars);
  EXPECT_FALSE(has(o, "__global__")) << o;
  EXPECT_FALSE(has(o, "# Current kernel"));
  EXPECT_TRUE(has(o, "your tile config, as compiled"));
  EXPECT_TRUE(has(o, "\"bm\":128"));
  EXPECT_FALSE(has(o, "<<<<<<< SEARCH")) << "no diff offered against a kernel the policy has not seen";
}

TEST(ObservationBudget, TheCompilersErrorsNotItsInformationalOutput) {
  auto env = started();
  const auto s = env->step("```cuda\n" + fake_kernel("FAKE_LONG_LOG") + "```");
  const auto& o = s.observation;
  EXPECT_LE(o.size(), kDefaultMaxObservationChars);
  EXPECT_TRUE(has(o, "error: identifier \"tile_k\" is undefined")) << o;
  EXPECT_TRUE(has(o, "acc += a[tile_k];"));
  EXPECT_TRUE(has(o, "1 error detected"));
  EXPECT_FALSE(has(o, "ptxas info")) << o;
}

TEST(ObservationBudget, ADiffsKernelIsShownWhenItFitsAndSaidToBeLeftOutWhenNot) {
  const std::string first = "```cuda\n" + fake_kernel("FAKE_SPEEDUP(0.5)") + "```";
  const std::string diff = "<<<<<<< SEARCH\n// FAKE_SPEEDUP(0.5)\n=======\n// FAKE_SPEEDUP(2.0)\n>>>>>>> REPLACE\n";
  auto roomy = started();
  roomy->step(first);
  const auto shown = roomy->step(diff);
  EXPECT_TRUE(has(shown.observation, "# Current kernel")) << shown.observation;
  EXPECT_LE(shown.observation.size(), kDefaultMaxObservationChars);

  EnvConfig tight;
  tight.max_observation_chars = kMinObservationChars;
  auto env = started(tight);
  const auto s1 = env->step(first);
  EXPECT_LE(s1.observation.size(), kMinObservationChars) << s1.observation;
  const auto s2 = env->step(diff);
  EXPECT_LE(s2.observation.size(), kMinObservationChars) << s2.observation;
  EXPECT_FALSE(has(s2.observation, "# Current kernel"));
  EXPECT_TRUE(has(s2.observation, "is not shown: it does not fit the observation budget")) << s2.observation;
  EXPECT_TRUE(has(s2.observation, "score:")) << "the score is never cut";
}

TEST(ObservationBudget, EveryStepHasTheSameInfoKeys) {
  auto env = started();
  const auto ok = env->step("```cuda\n" + fake_kernel("FAKE_SPEEDUP(1.0)") + "```");
  const auto bad = env->step("no kernel here");
  const auto tile = env->step("{\"bm\": 64, \"bn\": 64}");
  EXPECT_EQ(keys(ok.info), keys(bad.info));
  EXPECT_EQ(keys(ok.info), keys(tile.info));
  for (const char* k : {"format_error", "fuzzy_matches", "tile_config", "baseline_source", "result", "masked"})
    EXPECT_TRUE(ok.info.contains(k)) << k;
  EXPECT_EQ(ok.info.at("format_error"), "");
  EXPECT_NE(bad.info.at("format_error"), "");
  EXPECT_EQ(bad.info.at("reward").at("status"), "format_error") << "the records' word for it";
  EXPECT_EQ(bad.info.at("reward").at("class"), "format") << "the reward class (the penalty's key)";
}

}  // namespace
}  // namespace tessera::env
