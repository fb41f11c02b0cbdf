// EnvConfig's "eval" is the harness's EvalOptions (core/wire.hpp), read by
// the same strict reader: every key but the two the environment owns, and an
// unknown key refused with its name.
#include <string>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "env/env.hpp"

namespace tessera::env {
namespace {

std::string error_of(const nlohmann::json& j) {
  try {
    (void)EnvConfig::from_json(j);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::bad_input);
    return e.what();
  }
  return "no error";
}

TEST(EnvConfigEval, EveryEvaluationOptionButTheEnvironmentsOwnIsASetting) {
  const nlohmann::json written = EnvConfig{}.to_json().at("eval");
  nlohmann::json expected = EvalOptions{};
  expected.erase("counters");   // counters_in_feedback decides them
  expected.erase("baselines");  // reuse_baselines decides them
  for (const auto& [key, value] : expected.items()) EXPECT_TRUE(written.contains(key)) << key;
  EXPECT_EQ(written.size(), expected.size());
  const auto c = EnvConfig::from_json({{"eval", {{"timing", false}, {"shape_generic", true}, {"rank_by", "cold"}}}});
  EXPECT_FALSE(c.eval.timing);
  EXPECT_TRUE(c.eval.shape_generic);
  EXPECT_EQ(c.eval.counter_set, "fast") << "keys not named keep the environment's defaults";
}

TEST(EnvConfigEval, AnUnknownEvaluationOptionIsRefusedWithItsName) {
  const std::string msg = error_of({{"eval", {{"verify_trails", 2}}}});
  EXPECT_NE(msg.find("eval: unknown key 'verify_trails'"), std::string::npos) << msg;
  EXPECT_NE(error_of({{"eval", {{"verify_trials", 65}}}}).find("eval.verify_trials"), std::string::npos);
  EXPECT_NE(error_of({{"eval", {{"baselines", false}}}}).find("reuse_baselines"), std::string::npos);
}

}  // namespace
}  // namespace tessera::env
